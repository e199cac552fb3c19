// OpJournal and ReadJournal (journal.h). One line per record, fields separated by spaces,
// keys and values in hex:
//   i <id> <kind: l i u d> <key> <value or -> <invoke ns>
//   r <id> <outcome: o n u> <value or -> <response ns>
//   x <id>                                   (not performed: NotOwner)
#include "check/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "common/runtime.h"

namespace dmindex::check {
namespace {

constexpr char kKinds[] = "liud";  // OpKind order: lookup, insert, update, delete
constexpr char kOutcomes[] = "onu";  // Outcome order: ok, not found, unknown

std::string Hex(const std::string& bytes) {
  if (bytes.empty()) return "-";
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool Unhex(const std::string& text, std::string* out) {
  out->clear();
  if (text == "-") return true;
  if (text.size() % 2 != 0) return false;
  for (size_t i = 0; i < text.size(); i += 2) {
    int byte = 0;
    for (size_t j = i; j < i + 2; ++j) {
      const char c = text[j];
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) return false;
      byte = byte * 16 + digit;
    }
    out->push_back(static_cast<char>(byte));
  }
  return true;
}

int IndexIn(const char* table, const std::string& field) {
  const char* at = field.size() == 1 ? std::strchr(table, field[0]) : nullptr;
  return at == nullptr || *at == '\0' ? -1 : static_cast<int>(at - table);
}

}  // namespace

int64_t JournalNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(runtime::Now().time_since_epoch()).count();
}

Result<std::unique_ptr<OpJournal>> OpJournal::Create(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("cannot create journal " + path + ": " + std::strerror(errno));
  return std::unique_ptr<OpJournal>(new OpJournal(fd, path));
}

OpJournal::~OpJournal() { close(fd_); }

Status OpJournal::Append(const std::string& line) {
  // One write: a record is in the file whole, or (the process died inside the call) not at
  // all or cut short at the end, which the reader ignores.
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError("cannot append to journal " + path_ + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<uint64_t> OpJournal::Invoke(OpKind kind, const Key& key, const Value& value) {
  if (kind == OpKind::kScan) return Status::InvalidArgument("journals record point operations only");
  const uint64_t id = next_id_++;
  std::ostringstream line;
  line << "i " << id << ' ' << kKinds[static_cast<int>(kind)] << ' ' << Hex(key) << ' ' << Hex(value)
       << ' ' << JournalNow() << '\n';
  DMX_RETURN_IF_ERROR(Append(line.str()));
  return id;
}

Status OpJournal::Respond(uint64_t id, Outcome outcome, const Value& value) {
  const int64_t now = JournalNow();
  std::ostringstream line;
  line << "r " << id << ' ' << kOutcomes[static_cast<int>(outcome)] << ' ' << Hex(value) << ' ' << now << '\n';
  return Append(line.str());
}

Status OpJournal::Refused(uint64_t id) { return Append("x " + std::to_string(id) + "\n"); }

Result<JournalOps> ReadJournal(const std::string& path, uint32_t process, uint32_t thread) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read journal " + path);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (!text.empty() && text.back() != '\n') text.erase(text.rfind('\n') + 1);  // cut short
  std::map<uint64_t, Operation> open;  // invoked, by id
  JournalOps result;
  uint64_t unknown_run = 0;  // unknown outcomes answered in a row so far
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    std::istringstream fields(line);
    std::string tag, a, b;
    uint64_t id = 0;
    int64_t ns = 0;
    fields >> tag >> id;
    const auto bad = [&] {
      return Status::InvalidArgument("journal " + path + " line " + std::to_string(number) + " is malformed: " + line);
    };
    if (tag == "x") {
      if (open.erase(id) != 1) return bad();
      continue;
    }
    std::string kind, bytes;
    fields >> kind >> a;
    if (tag == "i") fields >> b;
    fields >> ns;
    if (!fields || (tag != "i" && tag != "r")) return bad();
    if (tag == "i") {
      Operation op;
      const int k = IndexIn(kKinds, kind);
      if (k < 0 || !Unhex(a, &op.key) || !Unhex(b, &op.value) || open.count(id) != 0) return bad();
      op.kind = static_cast<OpKind>(k);
      op.process = process;
      op.thread = thread;
      op.invoke_ns = ns;
      if (op.kind == OpKind::kLookup) op.value.clear();
      open.emplace(id, std::move(op));
      continue;
    }
    auto it = open.find(id);
    const int outcome = IndexIn(kOutcomes, kind);
    if (it == open.end() || outcome < 0 || !Unhex(a, &bytes)) return bad();
    Operation op = std::move(it->second);
    open.erase(it);
    op.outcome = static_cast<Outcome>(outcome);
    op.response_ns = ns;
    if (op.kind == OpKind::kLookup) op.value = bytes;
    result.unknown += op.outcome == Outcome::kUnknown;
    unknown_run = op.outcome == Outcome::kUnknown ? unknown_run + 1 : 0;
    result.longest_unknown_run = std::max(result.longest_unknown_run, unknown_run);
    result.ops.push_back(std::move(op));
  }
  for (auto& [id, op] : open) {  // in flight when the process died
    op.outcome = Outcome::kUnknown;
    op.response_ns = std::numeric_limits<int64_t>::max();
    ++result.pending;
    result.ops.push_back(std::move(op));
  }
  return result;
}

}  // namespace dmindex::check
