// The public Session and Index: argument checks done once for every design, then the
// design's Do* functions; the internal restart signal never leaves a public call.
#include "dmindex/index.h"

#include "common/retry_status.h"

namespace dmindex {
namespace {

Status CheckKey(Key key) {
  if (IsValidKey(key)) return Status::Ok();
  return Status::InvalidArgument("key " + std::to_string(key) +
                                 " is reserved (valid keys are 1 .. 2^64-2)");
}

// A range's keys are checked like any key; an end bound may be one past the largest key.
Status CheckRange(const KeyRange& range) {
  DMX_RETURN_IF_ERROR(CheckKey(range.start));
  if (range.end && *range.end != kMaxKey + 1) DMX_RETURN_IF_ERROR(CheckKey(*range.end));
  return Status::Ok();
}

// Designs loop on RetryStatus() inside their calls; one that leaks out is a bug, reported
// as such rather than handed to a caller who cannot know what it means.
Status Public(Status s, const char* call) {
  if (!IsRetry(s)) return s;
  return Status::Corruption(std::string(call) + ": the design's internal restart signal escaped "
                            "a public call (a bug in dmindex): " + s.message());
}

Status CheckBulkInput(std::span<const KeyValue> sorted) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    DMX_RETURN_IF_ERROR(CheckKey(sorted[i].key));
    if (i > 0 && sorted[i].key <= sorted[i - 1].key)
      return Status::InvalidArgument("BulkLoad input not sorted and unique at position " +
                                     std::to_string(i) + " (key " + std::to_string(sorted[i].key) +
                                     " after " + std::to_string(sorted[i - 1].key) + ")");
  }
  return Status::Ok();
}

}  // namespace

Session::~Session() {
  if (open_sessions_) open_sessions_->fetch_sub(1, std::memory_order_acq_rel);
}

Status Session::Lookup(Key key, Value* value) {
  DMX_RETURN_IF_ERROR(CheckKey(key));
  return Public(DoLookup(key, value), "Lookup");
}

Status Session::Insert(Key key, Value value) {
  DMX_RETURN_IF_ERROR(CheckKey(key));
  return Public(DoInsert(key, value), "Insert");
}

Status Session::Update(Key key, Value value) {
  DMX_RETURN_IF_ERROR(CheckKey(key));
  return Public(DoUpdate(key, value), "Update");
}

Status Session::Delete(Key key) {
  DMX_RETURN_IF_ERROR(CheckKey(key));
  return Public(DoDelete(key), "Delete");
}

Status Session::Scan(Key start, size_t count, std::vector<KeyValue>* out) {
  out->clear();
  DMX_RETURN_IF_ERROR(CheckKey(start));
  if (count == 0) return Status::Ok();
  return Public(DoScan(KeyRange{start, false, std::nullopt}, count, out), "Scan");
}

Status Session::ScanRangeOf(Session& inner, const KeyRange& range, size_t count,
                            std::vector<KeyValue>* out) {
  out->clear();
  DMX_RETURN_IF_ERROR(CheckRange(range));
  if (count == 0 || range.Empty()) return Status::Ok();
  return Public(inner.DoScan(range, count, out), "Scan");
}

Iterator Session::NewIterator(const ReadOptions& options) { return Iterator(*this, options); }

std::vector<Status> Session::MultiGet(std::span<const Key> keys, std::vector<Value>* values) {
  values->assign(keys.size(), Value{});
  std::vector<Status> statuses(keys.size());
  // Invalid keys are answered here; the design sees only valid ones.
  std::vector<Key> valid;
  std::vector<size_t> where;
  valid.reserve(keys.size());
  where.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    statuses[i] = CheckKey(keys[i]);
    if (!statuses[i].ok()) continue;
    valid.push_back(keys[i]);
    where.push_back(i);
  }
  if (valid.empty()) return statuses;
  if (valid.size() == keys.size()) {
    DoMultiGet(keys, *values, statuses);
    for (Status& s : statuses) s = Public(std::move(s), "MultiGet");
    return statuses;
  }
  std::vector<Value> found(valid.size());
  std::vector<Status> answers(valid.size());
  DoMultiGet(valid, found, answers);
  for (size_t j = 0; j < valid.size(); ++j) {
    (*values)[where[j]] = found[j];
    statuses[where[j]] = Public(std::move(answers[j]), "MultiGet");
  }
  return statuses;
}

void Session::DoMultiGet(std::span<const Key> keys, std::span<Value> values,
                         std::span<Status> statuses) {
  for (size_t i = 0; i < keys.size(); ++i) statuses[i] = DoLookup(keys[i], &values[i]);
}

Index::Index(std::string design, IndexOptions options)
    : design_(std::move(design)),
      options_(std::move(options)),
      open_sessions_(std::make_shared<std::atomic<uint32_t>>(0)) {}

Index::~Index() = default;

void Index::CloseForDestructor() {
  if (closed_) return;
  closed_ = true;
  Status ignored = DoClose();  // a destructor cannot report it: Close() does
  (void)ignored;
}

Status Index::Close() {
  if (closed_) return Status::Ok();
  if (const uint32_t open = open_sessions_->load(std::memory_order_acquire); open > 0)
    return Status::InvalidArgument("Close: " + std::to_string(open) +
                                   " session(s) of this index are still open; destroy them first");
  closed_ = true;
  return Public(DoClose(), "Close");
}

Status Index::BulkLoad(std::span<const KeyValue> sorted) {
  if (closed_) return Status::InvalidArgument("BulkLoad: the index is closed");
  DMX_RETURN_IF_ERROR(CheckBulkInput(sorted));
  return Public(DoBulkLoad(sorted), "BulkLoad");
}

Result<std::unique_ptr<Session>> Index::OpenSession(uint32_t compute_node) {
  if (closed_) return Status::InvalidArgument("OpenSession: the index is closed");
  if (compute_node >= options_.compute_nodes)
    return Status::InvalidArgument("compute node " + std::to_string(compute_node) +
                                   " does not exist (compute_nodes = " +
                                   std::to_string(options_.compute_nodes) + ")");
  auto session = DoOpenSession(compute_node);
  if (!session.ok()) return Public(session.status(), "OpenSession");
  (*session)->open_sessions_ = open_sessions_;
  open_sessions_->fetch_add(1, std::memory_order_acq_rel);
  return session;
}

IndexStats Index::Stats() const { return DoStats(); }

Index::Properties Index::AllProperties() const {
  const IndexStats s = DoStats();
  Properties p = {
      {"dmindex.cache.hits", s.cache_hits},     {"dmindex.cache.misses", s.cache_misses},
      {"dmindex.cache.bytes", s.cache_bytes},   {"dmindex.pool.bytes", s.pool_bytes},
      {"dmindex.retries", s.retries},
  };
  AddProperties(&p);
  return p;
}

std::optional<uint64_t> Index::GetIntProperty(std::string_view name) const {
  for (const auto& [n, v] : AllProperties())
    if (n == name) return v;
  return std::nullopt;
}

std::vector<std::string> Index::PropertyNames() const {
  std::vector<std::string> names;
  for (auto& [n, v] : AllProperties()) names.push_back(std::move(n));
  return names;
}

}  // namespace dmindex
