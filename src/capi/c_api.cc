// The C API (include/dmindex/c.h): statuses, options, clusters and indexes. Sessions, scans
// and iterators: c_session.cc.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capi/handles.h"
#include "common/option_fields.h"
#include "common/parse_values.h"

namespace dmindex::capi {

dmindex_code_t Report(dmindex_status_t* out, const Status& s) noexcept {
  const auto code = static_cast<dmindex_code_t>(s.code());
  if (out == nullptr) return code;
  try {
    out->status = s;
    out->text = s.ok() ? std::string("OK") : s.ToString();
  } catch (...) {  // no memory for the message: keep the code
    out->status = Status::FromCode(s.code(), {});
    out->text.clear();
  }
  return code;
}

Status BytesOf(const char* p, size_t n, const char* what, Slice* out) {
  if (p == nullptr && n != 0)
    return Status::InvalidArgument(std::string(what) + " is NULL with a length of " + std::to_string(n));
  *out = n == 0 ? Slice() : Slice(p, n);
  return Status::Ok();
}

char* MallocCopy(Slice bytes) {
  // One byte more, so an empty value is a valid pointer and text reads as a C string.
  char* copy = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (copy == nullptr) return nullptr;
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  copy[bytes.size()] = '\0';
  return copy;
}

Status CopyOut(Slice bytes, char** out) {
  DMX_RETURN_IF_ERROR(NotNull(out, "the output pointer"));
  *out = MallocCopy(bytes);
  return *out != nullptr ? Status::Ok() : Status::OutOfSpace("out of memory copying a result");
}

namespace {

std::string Lines(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& n : names) all.append(all.empty() ? "" : "\n").append(n);
  return all;
}

Status OpenIndex(const dmindex_index_t* index, const char* what) {
  DMX_RETURN_IF_ERROR(NotNull(index, what));
  if (index->state->closed.load()) return Status::InvalidArgument(std::string(what) + " was closed");
  return Status::Ok();
}

// The partitioning of a partitioned design's open index, or why there is none.
Result<Partitioning*> PartitioningOf(const dmindex_index_t* index) {
  DMX_RETURN_IF_ERROR(OpenIndex(index, "the index"));
  Partitioning* p = index->state->index->partitioning();
  if (p == nullptr)
    return Status::NotSupported("design " + index->state->index->design() +
                                " has no logical partitions: every compute node serves every key");
  return p;
}

Status SetOption(IndexOptions* o, const std::string& name, const std::string& value) {
  Status s = SetIndexOptionField(o, name, value);  // common/option_fields.h
  if (!s.IsNotFound()) return s;
  std::string list = Lines(IndexOptionFieldNames());
  std::replace(list.begin(), list.end(), '\n', ' ');
  return Status::InvalidArgument("unknown option '" + name + "' (known: " + list + "; design knobs: dmindex_options_set_knob)");
}

}  // namespace
}  // namespace dmindex::capi

using dmindex::Slice;
using dmindex::Status;
using dmindex::capi::CopyOut;
using dmindex::capi::Guard;
using dmindex::capi::NotNull;

extern "C" {

dmindex_status_t* dmindex_status_create(void) { return new (std::nothrow) dmindex_status_t(); }

void dmindex_status_destroy(dmindex_status_t* status) { delete status; }

dmindex_code_t dmindex_status_code(const dmindex_status_t* status) {
  return status == nullptr ? DMINDEX_INVALID_ARGUMENT : static_cast<dmindex_code_t>(status->status.code());
}

const char* dmindex_status_message(const dmindex_status_t* status) {
  return status == nullptr ? "InvalidArgument: the status is NULL" : status->text.c_str();
}

const char* dmindex_code_name(dmindex_code_t code) {
  switch (code) {
    case DMINDEX_OK: return "OK";
    case DMINDEX_NOT_FOUND: return "NotFound";
    case DMINDEX_INVALID_ARGUMENT: return "InvalidArgument";
    case DMINDEX_UNAVAILABLE: return "Unavailable";
    case DMINDEX_OUT_OF_SPACE: return "OutOfSpace";
    case DMINDEX_CORRUPTION: return "Corruption";
    case DMINDEX_IO_ERROR: return "IoError";
    case DMINDEX_NOT_SUPPORTED: return "NotSupported";
    case DMINDEX_ABORTED: return "Aborted";
    case DMINDEX_NOT_OWNER: return "NotOwner";
    case DMINDEX_BUSY: return "Busy";
  }
  return "Unknown";
}

void dmindex_free(void* bytes) { std::free(bytes); }

void dmindex_u64_encode(uint64_t value, char out[8]) {
  const dmindex::U64Key key(value);
  std::memcpy(out, Slice(key).data(), 8);
}

uint64_t dmindex_u64_decode(const char bytes[8]) { return dmindex::U64Key::Decode(Slice(bytes, 8)); }

char* dmindex_designs(void) {
  try {
    return dmindex::capi::MallocCopy(dmindex::capi::Lines(dmindex::Index::Designs()));
  } catch (...) {
    return nullptr;
  }
}

// --- Clusters ---

dmindex_code_t dmindex_cluster_open_embedded(const dmindex_embedded_t* embedded, dmindex_cluster_t** cluster,
                                             dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(cluster, "the cluster output pointer"));
    *cluster = nullptr;
    dmindex::EmbeddedCluster e;
    if (embedded != nullptr) {
      if (embedded->memory_nodes != 0) e.memory_nodes = embedded->memory_nodes;
      if (embedded->pool_bytes != 0) e.pool_bytes = embedded->pool_bytes;
      e.round_trip_us = embedded->round_trip_us;
      e.bandwidth_gbps = embedded->bandwidth_gbps;
    }
    auto opened = dmindex::Cluster::Open(e);
    if (!opened.ok()) return opened.status();
    *cluster = new dmindex_cluster_t{std::move(opened).value()};
    return Status::Ok();
  });
}

dmindex_code_t dmindex_cluster_connect(const char* const* addresses, size_t address_count, const char* transport,
                                       const char* cluster_key_file, uint32_t connect_timeout_ms,
                                       uint32_t op_timeout_ms, dmindex_cluster_t** cluster,
                                       dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(cluster, "the cluster output pointer"));
    *cluster = nullptr;
    if (address_count == 0) return Status::InvalidArgument("no memory server addresses");
    DMX_RETURN_IF_ERROR(NotNull(addresses, "the address array"));
    dmindex::MemoryServers servers;
    for (size_t i = 0; i < address_count; ++i) {
      DMX_RETURN_IF_ERROR(NotNull(addresses[i], "a memory server address"));
      servers.addresses.emplace_back(addresses[i]);
    }
    const std::string t = transport == nullptr ? "shm" : transport;
    if (t != "shm" && t != "tcp") return Status::InvalidArgument("transport '" + t + "': expected shm or tcp");
    servers.transport = t == "tcp" ? dmindex::Transport::kTcp : dmindex::Transport::kShm;
    if (cluster_key_file != nullptr) servers.cluster_key_file = cluster_key_file;
    if (connect_timeout_ms != 0) servers.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
    if (op_timeout_ms != 0) servers.op_timeout = std::chrono::milliseconds(op_timeout_ms);
    auto opened = dmindex::Cluster::Open(servers);
    if (!opened.ok()) return opened.status();
    *cluster = new dmindex_cluster_t{std::move(opened).value()};
    return Status::Ok();
  });
}

void dmindex_cluster_destroy(dmindex_cluster_t* cluster) { delete cluster; }

dmindex_code_t dmindex_cluster_memory_nodes(const dmindex_cluster_t* cluster, uint16_t* count,
                                            dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(cluster, "the cluster"));
    DMX_RETURN_IF_ERROR(NotNull(count, "the count output pointer"));
    *count = cluster->cluster->memory_nodes();
    return Status::Ok();
  });
}

dmindex_code_t dmindex_cluster_backend(const dmindex_cluster_t* cluster, char** backend, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(cluster, "the cluster"));
    return CopyOut(cluster->cluster->backend(), backend);
  });
}

dmindex_code_t dmindex_cluster_property(const dmindex_cluster_t* cluster, const char* name, uint64_t* value,
                                        dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(cluster, "the cluster"));
    DMX_RETURN_IF_ERROR(NotNull(name, "the property name"));
    DMX_RETURN_IF_ERROR(NotNull(value, "the value output pointer"));
    const auto v = cluster->cluster->GetIntProperty(name);
    if (!v) return Status::NotFound("the cluster has no property '" + std::string(name) + "'");
    *value = *v;
    return Status::Ok();
  });
}

dmindex_code_t dmindex_cluster_property_names(const dmindex_cluster_t* cluster, char** names,
                                              dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(cluster, "the cluster"));
    return CopyOut(dmindex::capi::Lines(cluster->cluster->PropertyNames()), names);
  });
}

// --- Options ---

dmindex_options_t* dmindex_options_create(void) { return new (std::nothrow) dmindex_options_t(); }

void dmindex_options_destroy(dmindex_options_t* options) { delete options; }

dmindex_code_t dmindex_options_set(dmindex_options_t* options, const char* name, const char* value,
                                   dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(options, "the options"));
    DMX_RETURN_IF_ERROR(NotNull(name, "the option name"));
    DMX_RETURN_IF_ERROR(NotNull(value, "the option value"));
    return dmindex::capi::SetOption(&options->options, name, value);
  });
}

dmindex_code_t dmindex_options_parse(dmindex_options_t* options, const char* text, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(options, "the options"));
    DMX_RETURN_IF_ERROR(NotNull(text, "the options text"));
    return dmindex::ParseIndexOptions(text, &options->options);
  });
}

dmindex_code_t dmindex_options_set_knob(dmindex_options_t* options, const char* knob, const char* value,
                                        dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(options, "the options"));
    DMX_RETURN_IF_ERROR(NotNull(knob, "the knob name"));
    DMX_RETURN_IF_ERROR(NotNull(value, "the knob value"));
    if (*knob == '\0') return Status::InvalidArgument("an empty knob name");
    options->options.knobs[knob] = value;
    return Status::Ok();
  });
}

// --- Indexes ---

dmindex_code_t dmindex_index_open(const dmindex_options_t* options, dmindex_cluster_t* cluster,
                                  dmindex_index_t** index, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(index, "the index output pointer"));
    *index = nullptr;
    const dmindex::IndexOptions defaults;
    auto opened = dmindex::Index::Open(options != nullptr ? options->options : defaults,
                                       cluster != nullptr ? cluster->cluster : nullptr);
    if (!opened.ok()) return opened.status();
    auto state = std::make_shared<dmindex::capi::IndexState>();
    state->index = std::move(opened).value();
    *index = new dmindex_index_t{std::move(state)};
    return Status::Ok();
  });
}

dmindex_code_t dmindex_index_close(dmindex_index_t* index, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(index, "the index"));
    if (index->state->closed.load()) return Status::Ok();  // as Index::Close: a second close is OK
    DMX_RETURN_IF_ERROR(index->state->index->Close());
    index->state->closed.store(true);
    return Status::Ok();
  });
}

void dmindex_index_destroy(dmindex_index_t* index) { delete index; }

dmindex_code_t dmindex_index_drop(dmindex_index_t* index, dmindex_status_t* status) {
  return dmindex_index_drop_with(index, 0, status);
}

dmindex_code_t dmindex_index_drop_with(dmindex_index_t* index, int force, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(index, "the index"));
    Status s = index->state->index->Drop(dmindex::DropOptions{.force = force != 0});
    // Dropped, or closed by Drop though this design cannot free its memory.
    if (s.ok() || s.IsNotSupported()) index->state->closed.store(true);
    return s;
  });
}

dmindex_code_t dmindex_index_bulk_load(dmindex_index_t* index, size_t count, const char* const* keys,
                                       const size_t* key_lengths, const char* const* values,
                                       const size_t* value_lengths, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(dmindex::capi::OpenIndex(index, "the index"));
    if (count != 0) {
      DMX_RETURN_IF_ERROR(NotNull(keys, "the key array"));
      DMX_RETURN_IF_ERROR(NotNull(key_lengths, "the key length array"));
      DMX_RETURN_IF_ERROR(NotNull(values, "the value array"));
      DMX_RETURN_IF_ERROR(NotNull(value_lengths, "the value length array"));
    }
    std::vector<dmindex::KeyValue> pairs(count);
    for (size_t i = 0; i < count; ++i) {
      Slice k, v;
      DMX_RETURN_IF_ERROR(dmindex::capi::BytesOf(keys[i], key_lengths[i], "a key", &k));
      DMX_RETURN_IF_ERROR(dmindex::capi::BytesOf(values[i], value_lengths[i], "a value", &v));
      pairs[i] = {std::string(k), std::string(v)};
    }
    return index->state->index->BulkLoad(pairs);
  });
}

dmindex_code_t dmindex_index_stats(const dmindex_index_t* index, dmindex_stats_t* stats, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(dmindex::capi::OpenIndex(index, "the index"));
    DMX_RETURN_IF_ERROR(NotNull(stats, "the stats output pointer"));
    const dmindex::IndexStats s = index->state->index->Stats();
    *stats = {s.cache_hits, s.cache_misses, s.cache_bytes, s.pool_bytes, s.retries};
    return Status::Ok();
  });
}

dmindex_code_t dmindex_index_property(const dmindex_index_t* index, const char* name, uint64_t* value,
                                      dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(dmindex::capi::OpenIndex(index, "the index"));
    DMX_RETURN_IF_ERROR(NotNull(name, "the property name"));
    DMX_RETURN_IF_ERROR(NotNull(value, "the value output pointer"));
    const auto v = index->state->index->GetIntProperty(name);
    if (!v) return Status::NotFound("the index has no property '" + std::string(name) + "'");
    *value = *v;
    return Status::Ok();
  });
}

dmindex_code_t dmindex_index_property_names(const dmindex_index_t* index, char** names, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(dmindex::capi::OpenIndex(index, "the index"));
    return CopyOut(dmindex::capi::Lines(index->state->index->PropertyNames()), names);
  });
}

dmindex_code_t dmindex_index_design(const dmindex_index_t* index, char** design, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(dmindex::capi::OpenIndex(index, "the index"));
    return CopyOut(index->state->index->design(), design);
  });
}

dmindex_code_t dmindex_index_route(const dmindex_index_t* index, const char* key, size_t key_length,
                                   uint32_t* compute_node, int* hosted, dmindex_status_t* status) {
  return Guard(status, [&] {
    auto p = dmindex::capi::PartitioningOf(index);
    if (!p.ok()) return p.status();
    DMX_RETURN_IF_ERROR(NotNull(compute_node, "the compute node output pointer"));
    DMX_RETURN_IF_ERROR(NotNull(hosted, "the hosted output pointer"));
    Slice k;
    DMX_RETURN_IF_ERROR(dmindex::capi::BytesOf(key, key_length, "the key", &k));
    const dmindex::Route route = (*p)->RouteKey(k);
    *compute_node = route.compute_node;
    *hosted = route.hosted ? 1 : 0;
    return Status::Ok();
  });
}

dmindex_code_t dmindex_index_partitions(const dmindex_index_t* index, uint32_t* partitions, dmindex_status_t* status) {
  return Guard(status, [&] {
    auto p = dmindex::capi::PartitioningOf(index);
    if (!p.ok()) return p.status();
    DMX_RETURN_IF_ERROR(NotNull(partitions, "the partitions output pointer"));
    *partitions = (*p)->partitions();
    return Status::Ok();
  });
}

dmindex_code_t dmindex_index_repartition(dmindex_index_t* index, size_t count, const char* const* boundaries,
                                         const size_t* boundary_lengths, double* seconds, dmindex_status_t* status) {
  return Guard(status, [&] {
    auto p = dmindex::capi::PartitioningOf(index);
    if (!p.ok()) return p.status();
    if (count != 0) {
      DMX_RETURN_IF_ERROR(NotNull(boundaries, "the boundary array"));
      DMX_RETURN_IF_ERROR(NotNull(boundary_lengths, "the boundary length array"));
    }
    std::vector<std::string> list(count);
    for (size_t i = 0; i < count; ++i) {
      Slice b;
      DMX_RETURN_IF_ERROR(dmindex::capi::BytesOf(boundaries[i], boundary_lengths[i], "a boundary", &b));
      list[i] = std::string(b);
    }
    auto took = (*p)->Repartition(std::move(list));
    if (!took.ok()) return took.status();
    if (seconds != nullptr) *seconds = *took;
    return Status::Ok();
  });
}

}  // extern "C"
