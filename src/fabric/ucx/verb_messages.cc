#include "fabric/ucx/verb_messages.h"

#include <atomic>
#include <cstring>
#include <string>

#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {
namespace {

// Bytes a verb's result takes in the reply.
uint64_t ResultBytes(VerbKind kind, uint32_t length) {
  switch (kind) {
    case VerbKind::kRead:
      return length;
    case VerbKind::kWrite:
      return 0;
    case VerbKind::kCas:
    case VerbKind::kFaa:
      return 8;
  }
  return 0;
}

// Why `r` cannot be carried out on `node`; empty if it can.
std::string RecordDefect(const MemoryNode& node, const wire::VerbRecord& r) {
  if (r.kind > static_cast<uint8_t>(VerbKind::kFaa)) return "unknown verb kind " + std::to_string(r.kind);
  const auto kind = static_cast<VerbKind>(r.kind);
  const bool atomic = kind == VerbKind::kCas || kind == VerbKind::kFaa;
  if (atomic && (r.length != 8 || r.offset % 8 != 0))
    return "atomic verb at offset " + std::to_string(r.offset) + " is not an aligned 8-byte word";
  if (!node.Contains(r.offset, r.length))
    return "verb outside the pool: offset " + std::to_string(r.offset) + " +" + std::to_string(r.length);
  return "";
}

}  // namespace

std::vector<std::byte> EncodeVerbs(std::span<const Verb* const> verbs) {
  size_t bytes = verbs.size() * sizeof(wire::VerbRecord);
  for (const Verb* v : verbs)
    if (v->kind == VerbKind::kWrite) bytes += v->length;
  std::vector<std::byte> out(bytes);
  std::byte* record = out.data();
  std::byte* data = out.data() + verbs.size() * sizeof(wire::VerbRecord);
  for (const Verb* v : verbs) {
    wire::VerbRecord r{};
    r.kind = static_cast<uint8_t>(v->kind);
    r.length = v->length;
    r.offset = v->remote.offset();
    r.operand = v->operand;
    r.swap = v->swap;
    std::memcpy(record, &r, sizeof r);
    record += sizeof r;
    if (v->kind == VerbKind::kWrite && v->length > 0) {
      std::memcpy(data, v->local, v->length);
      data += v->length;
    }
  }
  return out;
}

Status DeliverVerbResults(std::span<const Verb* const> verbs, std::span<const std::byte> reply) {
  uint64_t expected = 0;
  for (const Verb* v : verbs) expected += ResultBytes(v->kind, v->length);
  if (expected != reply.size())
    return Status::Corruption("verb reply of " + std::to_string(reply.size()) + " bytes where " +
                              std::to_string(expected) + " were expected");
  const std::byte* at = reply.data();
  for (const Verb* v : verbs) {
    const uint64_t n = ResultBytes(v->kind, v->length);
    if (n > 0) std::memcpy(v->local, at, n);
    at += n;
  }
  return Status::Ok();
}

Status ExecuteVerbs(MemoryNode& node, uint32_t count, std::span<const std::byte> request,
                    std::vector<std::byte>* reply) {
  const std::optional<uint16_t> id = node.id();
  if (!id) return Status::InvalidArgument("verbs before the memory node's id is known");
  const uint64_t records = uint64_t{count} * sizeof(wire::VerbRecord);
  if (records > request.size())
    return Status::InvalidArgument("verb batch of " + std::to_string(count) + " verbs in " +
                                   std::to_string(request.size()) + " bytes");
  // Judge every record, and the sizes, before the first verb lands.
  std::vector<wire::VerbRecord> batch(count);
  if (count > 0) std::memcpy(batch.data(), request.data(), records);
  uint64_t write_bytes = 0, result_bytes = 0;
  for (const wire::VerbRecord& r : batch) {
    if (std::string defect = RecordDefect(node, r); !defect.empty())
      return Status::InvalidArgument(defect);
    const auto kind = static_cast<VerbKind>(r.kind);
    if (kind == VerbKind::kWrite) write_bytes += r.length;
    result_bytes += ResultBytes(kind, r.length);
  }
  // A batch reads at most the pool (dmindex's read a few nodes): no request makes the server
  // allocate more than that for its answer.
  if (result_bytes > node.size())
    return Status::InvalidArgument("verb batch asks for " + std::to_string(result_bytes) +
                                   " bytes of results, more than the pool holds");
  if (records + write_bytes != request.size())
    return Status::InvalidArgument("verb batch carries " + std::to_string(request.size() - records) +
                                   " bytes of WRITE data where its verbs write " +
                                   std::to_string(write_bytes));
  const size_t start = reply->size();
  reply->resize(start + result_bytes);
  std::byte* result = reply->data() + start;
  const std::byte* data = request.data() + records;
  for (size_t i = 0; i < batch.size(); ++i) {
    const wire::VerbRecord& r = batch[i];
    const auto kind = static_cast<VerbKind>(r.kind);
    Verb v{kind, r.length, GlobalAddress(*id, r.offset), nullptr, r.operand, r.swap};
    uint64_t old_word = 0;
    if (kind == VerbKind::kWrite) {
      v.local = const_cast<std::byte*>(data);  // Execute only reads a WRITE's source
      data += r.length;
    } else {
      v.local = kind == VerbKind::kRead ? static_cast<void*>(result) : &old_word;
    }
    // In posting order, as on one RDMA connection: whoever sees verb i's effect (another
    // client's verb, an RPC handler thread) sees every earlier one of the batch.
    if (i > 0) std::atomic_thread_fence(std::memory_order_release);
    DMX_RETURN_IF_ERROR(node.Execute(v));  // checked above; cannot fail
    if (kind == VerbKind::kCas || kind == VerbKind::kFaa) std::memcpy(result, &old_word, 8);
    result += ResultBytes(kind, r.length);
  }
  return Status::Ok();
}

}  // namespace dmindex::fabric::ucx
