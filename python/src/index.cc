// dmindex._dmindex.Cluster, Index and open_index: where an index lives, and the index.
#include <chrono>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "handles.h"

namespace dmindex::python {
namespace {

using Release = nb::gil_scoped_release;

struct PyCluster {
  std::shared_ptr<Cluster> c;
  Cluster& Get() const {
    if (!c) Misuse("the cluster handle is closed");
    return *c;
  }
};
struct PyIndex {
  std::shared_ptr<IndexState> s;
};

// Marks an index busy while a call runs with the GIL released.
class IndexUse {
 public:
  explicit IndexUse(IndexState& s) : state_(s), index_(s.Get()) { ++state_.busy; }
  ~IndexUse() { --state_.busy; }
  IndexUse(const IndexUse&) = delete;
  IndexUse& operator=(const IndexUse&) = delete;
  Index* operator->() const { return &index_; }

 private:
  IndexState& state_;
  Index& index_;
};

template <typename Value>
Value Option(nb::handle v, const char* name) {
  Value out;
  if (!nb::try_cast(v, out)) Misuse(std::string("option ") + name + ": wrong type");
  return out;
}

KeyFormat KeyFormatNamed(const std::string& name) {
  if (name == "bytes") return KeyFormat::kBytes;
  if (name == "u64") return KeyFormat::kU64;
  Misuse("option key_format: '" + name + "' (the formats: 'bytes', 'u64')");
}

// IndexOptions from keyword arguments of the same names; an option not given keeps the C++
// default (IndexOptions{}), an unknown one is InvalidArgument naming it.
// `options`: a string as ParseIndexOptions reads it ("design=sherman;node_bytes=2048"), applied
// before the keyword arguments.
IndexOptions OptionsFrom(const nb::kwargs& kwargs) {
  IndexOptions o;
  if (kwargs.contains("options")) Check(ParseIndexOptions(Option<std::string>(kwargs["options"], "options"), &o));
  for (auto [key, value] : kwargs) {
    const std::string k = nb::cast<std::string>(key);
    if (k == "options") continue;
    if (k == "design") o.design = Option<std::string>(value, "design");
    else if (k == "name") o.name = Option<std::string>(value, "name");
    else if (k == "create_if_missing") o.create_if_missing = Option<bool>(value, "create_if_missing");
    else if (k == "key_format") o.key_format = KeyFormatNamed(Option<std::string>(value, "key_format"));
    else if (k == "max_key_bytes") o.max_key_bytes = Option<uint32_t>(value, "max_key_bytes");
    else if (k == "inline_value_bytes") o.inline_value_bytes = Option<uint32_t>(value, "inline_value_bytes");
    else if (k == "max_value_bytes") o.max_value_bytes = Option<uint32_t>(value, "max_value_bytes");
    else if (k == "node_bytes") o.node_bytes = Option<uint32_t>(value, "node_bytes");
    else if (k == "cache_bytes") o.cache_bytes = Option<uint64_t>(value, "cache_bytes");
    else if (k == "compute_nodes") o.compute_nodes = Option<uint32_t>(value, "compute_nodes");
    else if (k == "bulk_fill") o.bulk_fill = Option<double>(value, "bulk_fill");
    else if (k == "knobs") o.knobs = Option<std::map<std::string, std::string>>(value, "knobs");
    else
      Misuse("unknown option '" + k + "' (the options: design, name, create_if_missing, key_format, "
             "max_key_bytes, inline_value_bytes, max_value_bytes, node_bytes, cache_bytes, "
             "compute_nodes, bulk_fill, knobs; options: a string of them)");
  }
  return o;
}

nb::dict OptionsDict(const IndexOptions& o) {
  nb::dict d;
  d["design"] = o.design;
  d["name"] = o.name;
  d["create_if_missing"] = o.create_if_missing;
  d["key_format"] = o.key_format == KeyFormat::kBytes ? "bytes" : "u64";
  d["max_key_bytes"] = o.max_key_bytes;
  d["inline_value_bytes"] = o.inline_value_bytes;
  d["max_value_bytes"] = o.max_value_bytes;
  d["node_bytes"] = o.node_bytes;
  d["cache_bytes"] = o.cache_bytes;
  d["compute_nodes"] = o.compute_nodes;
  d["bulk_fill"] = o.bulk_fill;
  d["knobs"] = o.knobs;
  return d;
}

PyIndex OpenIndex(std::shared_ptr<Cluster> cluster, const nb::kwargs& kwargs) {
  const IndexOptions options = OptionsFrom(kwargs);
  Result<std::unique_ptr<Index>> opened = Status::Ok();
  {
    Release nogil;
    opened = Index::Open(options, std::move(cluster));
  }
  Check(opened.status());
  auto state = std::make_shared<IndexState>();
  state->index = std::move(*opened);
  return PyIndex{state};
}

// Properties as a dict: every name the object lists, with its value now.
template <typename Object>
std::map<std::string, uint64_t> Properties(const Object& o) {
  std::map<std::string, uint64_t> out;
  for (const std::string& name : o.PropertyNames())
    if (auto v = o.GetIntProperty(name)) out[name] = *v;
  return out;
}

PySession OpenSession(PyIndex& self, uint32_t compute_node) {
  Result<std::unique_ptr<Session>> opened = Status::Ok();
  {
    IndexUse index(*self.s);
    Release nogil;
    opened = index->OpenSession(compute_node);
  }
  Check(opened.status());
  auto state = std::make_shared<SessionState>();
  state->index = self.s;
  state->session = std::move(*opened);
  self.s->sessions.push_back(state);
  return PySession{state};
}

void BulkLoad(PyIndex& self, nb::iterable pairs) {
  std::vector<KeyValue> sorted;
  for (nb::handle pair : pairs) {
    nb::sequence kv = nb::cast<nb::sequence>(pair);
    if (nb::len(kv) != 2) Misuse("bulk_load: every item is a (key, value) pair");
    sorted.push_back({std::string(Bytes::Key(kv[0]).slice()), std::string(Bytes::Value(kv[1]).slice())});
  }
  Status st;
  {
    IndexUse index(*self.s);
    Release nogil;
    st = index->BulkLoad(sorted);
  }
  Check(st);
}

nb::dict Stats(PyIndex& self) {
  IndexStats st;
  {
    IndexUse index(*self.s);
    Release nogil;
    st = index->Stats();
  }
  nb::dict d;
  d["cache_hits"] = st.cache_hits;
  d["cache_misses"] = st.cache_misses;
  d["cache_bytes"] = st.cache_bytes;
  d["pool_bytes"] = st.pool_bytes;
  d["retries"] = st.retries;
  return d;
}

PyCluster Connect(std::vector<std::string> servers, const std::string& transport,
                  const std::string& cluster_key_file, double connect_timeout_s, double op_timeout_s) {
  MemoryServers ms;
  ms.addresses = std::move(servers);
  if (transport == "shm") ms.transport = Transport::kShm;
  else if (transport == "tcp") ms.transport = Transport::kTcp;
  else Misuse("transport '" + transport + "' (the transports: 'shm', 'tcp')");
  ms.cluster_key_file = cluster_key_file;
  auto ms_of = [](double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); };
  ms.connect_timeout = ms_of(connect_timeout_s);
  ms.op_timeout = ms_of(op_timeout_s);
  Result<std::shared_ptr<Cluster>> c = Status::Ok();
  {
    Release nogil;
    c = Cluster::Open(ms);
  }
  Check(c.status());
  return PyCluster{*c};
}

PyCluster Embedded(uint16_t memory_nodes, uint64_t pool_bytes, double round_trip_us, double bandwidth_gbps) {
  EmbeddedCluster e{memory_nodes, pool_bytes, round_trip_us, bandwidth_gbps};
  Result<std::shared_ptr<Cluster>> c = Cluster::Open(e);
  Check(c.status());
  return PyCluster{*c};
}

void BindCluster(nb::module_& m) {
  const EmbeddedCluster e;
  const MemoryServers ms;
  nb::class_<PyCluster>(m, "Cluster")
      .def_static("embedded", &Embedded, nb::arg("memory_nodes") = e.memory_nodes,
                  nb::arg("pool_bytes") = e.pool_bytes, nb::arg("round_trip_us") = e.round_trip_us,
                  nb::arg("bandwidth_gbps") = e.bandwidth_gbps)
      .def_static("connect", &Connect, nb::arg("servers"), nb::arg("transport") = "shm",
                  nb::arg("cluster_key_file") = "",
                  nb::arg("connect_timeout_s") = ms.connect_timeout.count() / 1000.0,
                  nb::arg("op_timeout_s") = ms.op_timeout.count() / 1000.0)
      .def_prop_ro("memory_nodes", [](PyCluster& self) { return self.Get().memory_nodes(); })
      .def_prop_ro("backend", [](PyCluster& self) { return self.Get().backend(); })
      .def("properties", [](PyCluster& self) { return Properties(self.Get()); })
      .def("open_index", [](PyCluster& self, const nb::kwargs& kw) {
        self.Get();
        return OpenIndex(self.c, kw);
      })
      .def("close", [](PyCluster& self) { self.c.reset(); })
      .def_prop_ro("closed", [](PyCluster& self) { return !self.c; })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyCluster& self, nb::args) { self.c.reset(); });
}

}  // namespace

Index& IndexState::Get() const {
  if (!index) Misuse("the index is closed");
  return *index;
}

void IndexState::CloseSessions(const char* call) {
  if (busy) Misuse(std::string(call) + ": the index is in use by another thread");
  for (auto& weak : sessions)
    if (auto s = weak.lock(); s && s->busy) Misuse(std::string(call) + ": a session of the index is in use by another thread");
  for (auto& weak : sessions)
    if (auto s = weak.lock()) s->Close();
  sessions.clear();
}

void IndexState::Drop(bool force) {
  if (!index) Misuse("drop: the index is closed");
  CloseSessions("drop");
  const Status st = index->Drop(DropOptions{.force = force});
  if (st.ok() || st.IsNotSupported()) index.reset();  // closed by Drop either way
  Check(st);
}

void IndexState::Close() {
  if (!index) return;  // a second close, as the C++ Close
  CloseSessions("close");
  const Status st = index->Close();
  index.reset();
  Check(st);
}

void BindIndex(nb::module_& m) {
  BindCluster(m);
  nb::class_<PyIndex>(m, "Index")
      .def_prop_ro("design", [](PyIndex& self) { return self.s->Get().design(); })
      .def_prop_ro("options", [](PyIndex& self) { return OptionsDict(self.s->Get().options()); })
      .def("session", &OpenSession, nb::arg("compute_node") = 0)
      .def("bulk_load", &BulkLoad, nb::arg("pairs"))
      .def("stats", &Stats)
      .def("properties", [](PyIndex& self) { return Properties(self.s->Get()); })
      .def("cluster_properties", [](PyIndex& self) {
        const auto& cluster = self.s->Get().cluster();
        return cluster ? Properties(*cluster) : std::map<std::string, uint64_t>{};
      })
      .def("close", [](PyIndex& self) { self.s->Close(); })
      .def("drop", [](PyIndex& self, bool force) { self.s->Drop(force); },
           nb::arg("force") = false)
      .def_prop_ro("closed", [](PyIndex& self) { return !self.s->index; })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyIndex& self, nb::args) { self.s->Close(); });
  // open_index(cluster=None, **options): the cluster is a keyword like the options.
  m.def("open_index", [](const nb::kwargs& kw) {
    std::shared_ptr<Cluster> c;
    nb::kwargs options;
    for (auto [key, value] : kw) {
      if (nb::cast<std::string>(key) != "cluster") {
        options[key] = value;
      } else if (!value.is_none()) {
        PyCluster* given = nullptr;
        if (!nb::try_cast(value, given) || !given) Misuse("open_index: cluster is a dmindex.Cluster or None");
        given->Get();  // a closed handle is misuse, not "make me an embedded cluster"
        c = given->c;
      }
    }
    return OpenIndex(std::move(c), options);
  });
  m.def("designs", &Index::Designs);
}

}  // namespace dmindex::python
