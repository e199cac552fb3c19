// The public Session and Index: argument checks done once for every design, then the
// design's Do* functions; the internal restart signal never leaves a public call.
#include "dmindex/index.h"

#include "common/key_text.h"
#include "common/retry_status.h"

namespace dmindex {

Status KeyRules::CheckKey(Slice key) const {
  if (format == KeyFormat::kU64) {
    if (key.size() != kU64KeyBytes)
      return Status::InvalidArgument("a key of a u64-format index has 8 bytes (U64Key), not " +
                                     std::to_string(key.size()));
    const uint64_t k = U64Key::Decode(key);
    if (k < kMinU64Key || k > kMaxU64Key)
      return Status::InvalidArgument("key " + std::to_string(k) +
                                     " is reserved (valid u64 keys are 1 .. 2^64-2)");
    return Status::Ok();
  }
  if (key.empty()) return Status::InvalidArgument("empty key (keys have 1 .. " + std::to_string(max_key_bytes) + " bytes)");
  if (key.size() > max_key_bytes)
    return Status::InvalidArgument("key of " + std::to_string(key.size()) + " bytes " +
                                   KeyText(key.substr(0, 16)) + "... is longer than max_key_bytes = " +
                                   std::to_string(max_key_bytes));
  return Status::Ok();
}

Status KeyRules::CheckValue(Slice value) const {
  if (value.size() <= max_value_bytes) return Status::Ok();
  return Status::InvalidArgument("value of " + std::to_string(value.size()) +
                                 " bytes is longer than max_value_bytes = " + std::to_string(max_value_bytes));
}

namespace {

// Where an iteration may start or stop: any key-shaped position, reserved ones and (bytes
// format) the empty string included - none of them needs to be a key of the index.
Status CheckPosition(const KeyRules& rules, Slice pos, const char* what) {
  if (rules.format == KeyFormat::kU64 ? pos.size() == kU64KeyBytes : pos.size() <= rules.max_key_bytes)
    return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " of " + std::to_string(pos.size()) +
                                 " bytes: " + (rules.format == KeyFormat::kU64
                                                   ? "a u64-format index takes 8-byte positions (U64Key)"
                                                   : "longer than max_key_bytes = " + std::to_string(rules.max_key_bytes)));
}

Status CheckRange(const KeyRules& rules, const KeyRange& range) {
  DMX_RETURN_IF_ERROR(CheckPosition(rules, range.start, "scan start"));
  if (range.end) DMX_RETURN_IF_ERROR(CheckPosition(rules, *range.end, "upper bound"));
  return Status::Ok();
}

// Designs loop on RetryStatus() inside their calls; one that leaks out is a bug, reported
// as such rather than handed to a caller who cannot know what it means.
Status Public(Status s, const char* call) {
  if (!IsRetry(s)) return s;
  return Status::Corruption(std::string(call) + ": the design's internal restart signal escaped "
                            "a public call (a bug in dmindex): " + s.message());
}

Status CheckBulkInput(const KeyRules& rules, std::span<const KeyValue> sorted) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    DMX_RETURN_IF_ERROR(rules.CheckKey(sorted[i].key));
    DMX_RETURN_IF_ERROR(rules.CheckValue(sorted[i].value));
    if (i > 0 && sorted[i].key <= sorted[i - 1].key)
      return Status::InvalidArgument("BulkLoad input not sorted and unique at position " +
                                     std::to_string(i) + " (key " + KeyText(sorted[i].key, rules.format) +
                                     " after " + KeyText(sorted[i - 1].key, rules.format) + ")");
  }
  return Status::Ok();
}

KeyRules RulesOf(const IndexOptions& o) {
  KeyRules r;
  r.format = o.key_format;
  r.max_key_bytes = o.key_format == KeyFormat::kU64 ? kU64KeyBytes : o.max_key_bytes;
  r.max_value_bytes = o.max_value_bytes;
  return r;
}

}  // namespace

Session::~Session() {
  alive_->store(false, std::memory_order_release);
  if (open_sessions_) open_sessions_->fetch_sub(1, std::memory_order_acq_rel);
}

Status Session::Lookup(Slice key, std::string* value) {
  DMX_RETURN_IF_ERROR(rules_.CheckKey(key));
  return Public(DoLookup(key, value), "Lookup");
}

Status Session::Insert(Slice key, Slice value) {
  DMX_RETURN_IF_ERROR(rules_.CheckKey(key));
  DMX_RETURN_IF_ERROR(rules_.CheckValue(value));
  return Public(DoInsert(key, value), "Insert");
}

Status Session::Update(Slice key, Slice value) {
  DMX_RETURN_IF_ERROR(rules_.CheckKey(key));
  DMX_RETURN_IF_ERROR(rules_.CheckValue(value));
  return Public(DoUpdate(key, value), "Update");
}

Status Session::Delete(Slice key) {
  DMX_RETURN_IF_ERROR(rules_.CheckKey(key));
  return Public(DoDelete(key), "Delete");
}

Status Session::Lookup(uint64_t key, uint64_t* value) {
  std::string v;
  DMX_RETURN_IF_ERROR(Lookup(U64Key(key), &v));
  if (v.size() != 8)
    return Status::InvalidArgument("key " + std::to_string(key) + " holds a value of " +
                                   std::to_string(v.size()) + " bytes; the integer Lookup reads 8-byte values");
  *value = U64Key::Decode(v);
  return Status::Ok();
}

Status Session::Insert(uint64_t key, uint64_t value) { return Insert(U64Key(key), U64Key(value)); }
Status Session::Update(uint64_t key, uint64_t value) { return Update(U64Key(key), U64Key(value)); }
Status Session::Delete(uint64_t key) { return Delete(U64Key(key)); }

Status Session::Scan(Slice start, size_t count, std::vector<KeyValue>* out) {
  out->clear();
  DMX_RETURN_IF_ERROR(CheckPosition(rules_, start, "scan start"));
  if (count == 0) return Status::Ok();
  return Public(DoScan(KeyRange{std::string(start), false, std::nullopt}, count, out), "Scan");
}

Status Session::ScanRangeOf(Session& inner, const KeyRange& range, size_t count,
                            std::vector<KeyValue>* out) {
  out->clear();
  DMX_RETURN_IF_ERROR(CheckRange(inner.rules_, range));
  if (count == 0 || range.Empty()) return Status::Ok();
  return Public(inner.DoScan(range, count, out), "Scan");
}

Status Session::ScanReverseOf(Session& inner, const ReverseRange& range, size_t count,
                              std::vector<KeyValue>* out) {
  out->clear();
  DMX_RETURN_IF_ERROR(CheckPosition(inner.rules_, range.start, "lower bound"));
  if (range.end) DMX_RETURN_IF_ERROR(CheckPosition(inner.rules_, *range.end, "reverse scan start"));
  if (count == 0 || range.Empty()) return Status::Ok();
  return Public(inner.DoScanReverse(range, count, out), "Scan");
}

Status Session::CompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                               std::string* current) {
  if (swapped == nullptr) return Status::InvalidArgument("CompareAndSwap: `swapped` is null (it says whether the swap happened)");
  *swapped = false;
  DMX_RETURN_IF_ERROR(rules_.CheckKey(key));
  DMX_RETURN_IF_ERROR(rules_.CheckValue(expected));
  DMX_RETURN_IF_ERROR(rules_.CheckValue(desired));
  std::string found;
  Status s = Public(DoCompareAndSwap(key, expected, desired, swapped, &found), "CompareAndSwap");
  if (s.ok() && !*swapped && current != nullptr) *current = std::move(found);
  return s;
}

Status Session::DoCompareAndSwap(Slice, Slice, Slice, bool*, std::string*) {
  return Status::NotSupported("CompareAndSwap: this design has no atomic compare of a value (docs/API.md)");
}

Status Session::DeleteRange(Slice begin, Slice end, uint64_t* deleted) {
  if (deleted != nullptr) *deleted = 0;
  DMX_RETURN_IF_ERROR(rules_.CheckKey(begin));
  DMX_RETURN_IF_ERROR(CheckPosition(rules_, end, "DeleteRange end"));
  // Batches of the range, each read after the keys deleted so far: a key the scan returns
  // was present at some instant, and its Delete is NotFound only if someone else removed it.
  KeyRange range{std::string(begin), false, std::string(end)};
  std::vector<KeyValue> batch;
  for (;;) {
    DMX_RETURN_IF_ERROR(ScanRangeOf(*this, range, 256, &batch));
    for (const KeyValue& kv : batch) {
      Status s = Public(DoDelete(kv.key), "DeleteRange");
      if (s.ok() && deleted != nullptr) ++*deleted;
      if (!s.ok() && !s.IsNotFound()) return s;
    }
    if (batch.size() < 256) return Status::Ok();
    range.start = std::move(batch.back().key);
    range.after_start = true;
  }
}

Status Session::Write(const WriteBatch& batch, size_t* applied) {
  if (applied != nullptr) *applied = 0;
  for (const WriteBatch::Write& w : batch.writes()) {
    DMX_RETURN_IF_ERROR(rules_.CheckKey(w.key));
    DMX_RETURN_IF_ERROR(rules_.CheckValue(w.value));
  }
  for (const WriteBatch::Write& w : batch.writes()) {
    Status s = w.kind == WriteBatch::Kind::kPut ? Public(DoInsert(w.key, w.value), "Write")
                                                : Public(DoDelete(w.key), "Write");
    if (!s.ok() && !(s.IsNotFound() && w.kind == WriteBatch::Kind::kDelete)) return s;
    if (applied != nullptr) ++*applied;
  }
  return Status::Ok();
}

Iterator Session::NewIterator(const ReadOptions& options) { return Iterator(*this, options); }

std::vector<Status> Session::MultiGet(std::span<const Slice> keys, std::vector<std::string>* values) {
  values->assign(keys.size(), std::string());
  std::vector<Status> statuses(keys.size());
  // Invalid keys are answered here; the design sees only valid ones.
  std::vector<Slice> valid;
  std::vector<size_t> where;
  valid.reserve(keys.size());
  where.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    statuses[i] = rules_.CheckKey(keys[i]);
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
  std::vector<std::string> found(valid.size());
  std::vector<Status> answers(valid.size());
  DoMultiGet(valid, found, answers);
  for (size_t j = 0; j < valid.size(); ++j) {
    (*values)[where[j]] = std::move(found[j]);
    statuses[where[j]] = Public(std::move(answers[j]), "MultiGet");
  }
  return statuses;
}

void Session::DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                         std::span<Status> statuses) {
  for (size_t i = 0; i < keys.size(); ++i) statuses[i] = DoLookup(keys[i], &values[i]);
}

Index::Index(std::string design, IndexOptions options)
    : design_(std::move(design)),
      options_(std::move(options)),
      rules_(RulesOf(options_)),
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
  // Stats and properties answer from this snapshot afterwards: a closed design may have
  // released what it counts with (the stores' handles).
  final_stats_ = DoStats();
  final_properties_ = AllProperties();
  closed_ = true;
  return Public(DoClose(), "Close");
}

Status Index::Drop(const DropOptions& options) {
  if (!closed_) {
    if (const uint32_t open = open_sessions_->load(std::memory_order_acquire); open > 0)
      return Status::InvalidArgument("Drop: " + std::to_string(open) +
                                     " session(s) of this index are still open; destroy them first");
    // Decided while still open: refused (Busy), the handle keeps working.
    DMX_RETURN_IF_ERROR(Public(DoPrepareDrop(options), "Drop"));
    DMX_RETURN_IF_ERROR(Close());
  }
  return Public(DoDrop(options), "Drop");
}

Status Index::DoDrop(const DropOptions&) {
  return Status::NotSupported("Drop: the " + design_ + " design cannot free an index's memory yet (docs/API.md)");
}

Status Index::BulkLoad(std::span<const KeyValue> sorted) {
  if (closed_) return Status::InvalidArgument("BulkLoad: the index is closed");
  DMX_RETURN_IF_ERROR(CheckBulkInput(rules_, sorted));
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
  (*session)->rules_ = rules_;
  open_sessions_->fetch_add(1, std::memory_order_acq_rel);
  return session;
}

IndexStats Index::Stats() const { return closed_ ? final_stats_ : DoStats(); }

Index::Properties Index::AllProperties() const {
  if (closed_) return final_properties_;
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
