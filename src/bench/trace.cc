#include "bench/trace.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "bench/key_space.h"
#include "bench/random.h"
#include "common/parse_values.h"

namespace dmindex::bench {
namespace {

// The whitespace-separated words of a line, up to `n` of them.
std::vector<std::string_view> Words(std::string_view line, size_t n) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (words.size() < n) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    words.push_back(line.substr(start, i - start));
  }
  return words;
}

Result<OpKind> KindOf(std::string_view word) {
  if (word == "READ") return OpKind::kRead;
  if (word == "UPDATE") return OpKind::kUpdate;
  if (word == "INSERT") return OpKind::kInsert;
  if (word == "SCAN") return OpKind::kScan;
  if (word == "DELETE") return OpKind::kDelete;
  return Status::InvalidArgument("unknown operation '" + std::string(word) + "'");
}

// Lines YCSB writes around BasicDB's: its property dump and its statistics.
bool IsYcsbChatter(std::string_view line) {
  return line.empty() || line.front() == '"' || line.front() == '*' || line.front() == '[';
}

// The integer keys of a trace's key words: user<N> -> N + 1, or verbatim byte strings
// numbered in order of first appearance.
class TraceKeys {
 public:
  explicit TraceKeys(bool integer_keys) : integer_keys_(integer_keys) {}

  Result<Key> KeyOf(std::string_view word) {
    if (integer_keys_) return KeyOfYcsbName(word);
    if (word.size() > kMaxKeyBytes)
      return Status::InvalidArgument("a key of " + std::to_string(word.size()) + " bytes (at most " +
                                     std::to_string(kMaxKeyBytes) + ")");
    auto [it, added] = ids_.try_emplace(std::string(word), names_->size() + 1);
    if (added) {
      names_->push_back(it->first);
      longest_ = std::max<uint32_t>(longest_, static_cast<uint32_t>(word.size()));
    }
    return it->second;
  }
  std::shared_ptr<const std::vector<std::string>> names() const {
    return integer_keys_ ? nullptr : names_;
  }
  uint32_t longest() const { return integer_keys_ ? 8 : longest_; }

 private:
  const bool integer_keys_;
  std::unordered_map<std::string, Key> ids_;
  std::shared_ptr<std::vector<std::string>> names_ = std::make_shared<std::vector<std::string>>();
  uint32_t longest_ = 0;
};

// Parses the operation lines of `path`, in order; `where` prefixes errors.
Status ReadOps(const std::string& path, TraceKeys& keys, std::vector<Operation>* ops) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Status::InvalidArgument("trace '" + path + "' is a directory");
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot open trace '" + path + "'");
  std::string line;
  for (uint64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (IsYcsbChatter(line)) continue;
    const auto bad = [&](const std::string& why) {
      return Status::InvalidArgument(path + ":" + std::to_string(line_no) + ": " + why + ": '" +
                                     line.substr(0, 80) + (line.size() > 80 ? "...'" : "'"));
    };
    const std::vector<std::string_view> w = Words(line, 4);
    auto kind = w.empty() ? Result<OpKind>(Status::InvalidArgument("empty")) : KindOf(w[0]);
    if (!kind.ok()) return bad("not a trace line (READ, UPDATE, INSERT, SCAN or DELETE <table> <key> ...)");
    if (w.size() < 3) return bad("expected '<operation> <table> <key>'");
    auto key = keys.KeyOf(w[2]);
    if (!key.ok()) return bad(key.status().message());
    Operation op;
    op.kind = *kind;
    op.key = *key;
    op.record = *key - 1;
    if (op.kind == OpKind::kScan) {
      auto count = w.size() > 3 ? ParseCount(w[3], 1, 1'000'000) : Result<uint64_t>(Status::InvalidArgument("missing"));
      if (!count.ok()) return bad("a SCAN needs a record count in [1, 1000000]");
      op.scan_length = static_cast<uint32_t>(*count);
    }
    op.value = MakeValue(op.key, static_cast<uint32_t>(line_no));
    ops->push_back(op);
  }
  if (in.bad()) return Status::IoError("cannot read trace '" + path + "'");
  return Status::Ok();
}

}  // namespace

Result<Key> KeyOfYcsbName(std::string_view name) {
  const std::string_view digits = name.starts_with("user") ? name.substr(4) : std::string_view();
  auto n = ParseCount(digits, 0, kMaxKey - 1);
  if (!name.starts_with("user") || !n.ok())
    return Status::InvalidArgument("key '" + std::string(name) + "' is not user<number>, which "
                                   "--key-format u64 maps to integer number + 1 (without it, keys replay "
                                   "verbatim as byte strings)");
  return *n + 1;
}

Result<Trace> ReadTrace(const std::string& run_path, const std::string& load_path, bool integer_keys) {
  Trace t;
  TraceKeys keys(integer_keys);
  t.name = std::filesystem::path(run_path).filename().string();
  if (!load_path.empty()) {
    std::vector<Operation> load;
    DMX_RETURN_IF_ERROR(ReadOps(load_path, keys, &load));
    for (const Operation& op : load) {
      if (op.kind != OpKind::kInsert)
        return Status::InvalidArgument(load_path + ": a load trace holds INSERT lines only, found " +
                                       OpKindName(op.kind));
      t.load.push_back({op.key, MakeValue(op.key, 0)});
    }
    std::sort(t.load.begin(), t.load.end(), [](auto& a, auto& b) { return a.key < b.key; });
    t.load.erase(std::unique(t.load.begin(), t.load.end(), [](auto& a, auto& b) { return a.key == b.key; }),
                 t.load.end());
  }
  DMX_RETURN_IF_ERROR(ReadOps(run_path, keys, &t.ops));
  if (t.ops.empty()) return Status::InvalidArgument("trace '" + run_path + "' holds no operation");
  // Which keys exist at each line, by the trace's own inserts and deletes.
  std::unordered_set<Key> present;
  for (const RecordPair& kv : t.load) present.insert(kv.key);
  for (Operation& op : t.ops) {
    op.may_be_absent = !present.contains(op.key);
    if (op.kind == OpKind::kInsert) present.insert(op.key);
    if (op.kind == OpKind::kDelete) present.erase(op.key);
  }
  t.final_keys.assign(present.begin(), present.end());
  std::sort(t.final_keys.begin(), t.final_keys.end());
  t.key_names = keys.names();
  t.longest_key = keys.longest();
  return t;
}

std::vector<std::vector<Operation>> SplitByKey(const std::vector<Operation>& ops, uint32_t threads) {
  std::vector<std::vector<Operation>> parts(threads);
  for (const Operation& op : ops) parts[Mix64(op.key) % threads].push_back(op);
  return parts;
}

TraceRecorder::TraceRecorder(uint32_t threads, std::string table)
    : table_(std::move(table)), per_thread_(threads) {}

void TraceRecorder::Record(uint32_t thread, uint64_t sequence, const Operation& op) {
  per_thread_[thread].push_back({sequence, op});
}

std::string TraceRecorder::Line(const Operation& op) const {
  const RecordShape& shape = codec_->shape();
  const std::string key = table_ + " " + (codec_->integers() ? YcsbKeyName(op.record, shape.order, shape.zero_padding)
                                                             : codec_->EncodeKey(op.key));
  const auto write = [&] { return key + " [ " + codec_->TraceFields(op.key, op.value) + "]\n"; };
  switch (op.kind) {
    case OpKind::kRead: return "READ " + key + " [ <all fields>]\n";
    case OpKind::kUpdate: return "UPDATE " + write();
    case OpKind::kInsert: return "INSERT " + write();
    case OpKind::kScan: return "SCAN " + key + " " + std::to_string(op.scan_length) + " [ <all fields>]\n";
    case OpKind::kReadModifyWrite:  // what BasicDB sees: a read, then an update
      return "READ " + key + " [ <all fields>]\nUPDATE " + write();
    case OpKind::kDelete: return "DELETE " + key + "\n";
  }
  return {};
}

Status TraceRecorder::WriteTo(const std::string& path) const {
  std::vector<const Entry*> all;
  for (const auto& entries : per_thread_)
    for (const Entry& e : entries) all.push_back(&e);
  std::sort(all.begin(), all.end(), [](const Entry* a, const Entry* b) { return a->sequence < b->sequence; });
  // Line by line: with YCSB's records a run's text is about a kilobyte per write.
  std::ofstream out(path, std::ios::trunc);
  for (const Entry* e : all) out << Line(e->op);
  out.close();
  if (!out) return Status::IoError("cannot write '" + path + "'");
  return Status::Ok();
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write '" + path + "'");
  return Status::Ok();
}

}  // namespace dmindex::bench
