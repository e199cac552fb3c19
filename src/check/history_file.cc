#include "check/history_file.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace dmindex::check {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "dmindex-history";
// Version 3: keys and values are byte strings, written in hex (JSON strings must be UTF-8).
constexpr int kVersion = 3;

std::string Hex(const std::string& bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Bytes(const json& j) {
  const std::string hex = j.get<std::string>();
  if (hex.size() % 2 != 0) throw std::invalid_argument("odd-length hex string");
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw std::invalid_argument(std::string("not a hex digit: ") + c);
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(digit(hex[2 * i]) * 16 + digit(hex[2 * i + 1]));
  return out;
}

// [kind, outcome, process, thread, key, value, invoke_ns, response_ns, scan_count, [[k, v]...],
//  scan_after, scan_end (null: none)], and for a CompareAndSwap or a reverse scan three more:
//  expected, swapped, scan_reverse; keys and values in hex.
json OpToJson(const Operation& op) {
  json pairs = json::array();
  for (const KeyValue& kv : op.scan_result) pairs.push_back({Hex(kv.key), Hex(kv.value)});
  json j = json::array({static_cast<int>(op.kind), static_cast<int>(op.outcome), op.process,
                        op.thread, Hex(op.key), Hex(op.value), op.invoke_ns, op.response_ns,
                        op.scan_count, std::move(pairs), op.scan_after,
                        op.scan_end ? json(Hex(*op.scan_end)) : json(nullptr)});
  if (op.kind == OpKind::kCompareAndSwap || op.scan_reverse) {
    j.push_back(Hex(op.expected));
    j.push_back(op.swapped);
    j.push_back(op.scan_reverse);
  }
  return j;
}

template <typename E>
E EnumAt(const json& j, int max) {
  const int v = j.get<int>();
  if (v < 0 || v > max) throw std::out_of_range("enum value " + std::to_string(v) + " out of range");
  return static_cast<E>(v);
}

Operation OpFromJson(const json& j) {
  if (!j.is_array() || (j.size() != 12 && j.size() != 15))
    throw std::invalid_argument("an operation is not a 12- or 15-element array");
  Operation op;
  op.kind = EnumAt<OpKind>(j[0], static_cast<int>(OpKind::kCompareAndSwap));
  op.outcome = EnumAt<Outcome>(j[1], static_cast<int>(Outcome::kUnknown));
  op.process = j[2].get<uint32_t>();
  op.thread = j[3].get<uint32_t>();
  op.key = Bytes(j[4]);
  op.value = Bytes(j[5]);
  op.invoke_ns = j[6].get<int64_t>();
  op.response_ns = j[7].get<int64_t>();
  op.scan_count = j[8].get<uint32_t>();
  for (const json& kv : j[9]) op.scan_result.push_back({Bytes(kv.at(0)), Bytes(kv.at(1))});
  op.scan_after = j[10].get<bool>();
  if (!j[11].is_null()) op.scan_end = Bytes(j[11]);
  if (j.size() == 15) {
    op.expected = Bytes(j[12]);
    op.swapped = j[13].get<bool>();
    op.scan_reverse = j[14].get<bool>();
  }
  return op;
}

}  // namespace

Status WriteHistoryFile(const std::string& path, const HistoryFile& file) {
  json initial = json::array();
  for (const auto& [key, value] : file.history.initial) initial.push_back({Hex(key), Hex(value)});
  json ops = json::array();
  for (const Operation& op : file.history.ops) ops.push_back(OpToJson(op));
  json doc = {{"format", kFormat},
              {"version", kVersion},
              {"design", file.design},
              {"index", file.index},
              {"process", file.process},
              {"clock", "steady_clock (CLOCK_MONOTONIC), ns"},
              {"clock_origin_ns", file.history.clock_origin_ns},
              {"initial", std::move(initial)},
              {"ops", std::move(ops)}};
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError("cannot write history file " + path);
  out << doc.dump() << "\n";
  out.close();
  if (!out) return Status::IoError("writing history file " + path + " failed");
  return Status::Ok();
}

Result<HistoryFile> ReadHistoryFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read history file " + path);
  try {
    const json doc = json::parse(in);
    if (!doc.is_object() || doc.value("format", "") != kFormat)
      return Status::InvalidArgument(path + " is not a dmindex history file");
    if (doc.at("version").get<int>() != kVersion)
      return Status::InvalidArgument(path + ": unsupported history version " + doc.at("version").dump());
    HistoryFile file;
    file.design = doc.at("design").get<std::string>();
    file.index = doc.at("index").get<std::string>();
    file.process = doc.at("process").get<uint32_t>();
    file.history.clock_origin_ns = doc.at("clock_origin_ns").get<int64_t>();
    for (const json& kv : doc.at("initial"))
      file.history.initial[Bytes(kv.at(0))] = Bytes(kv.at(1));
    for (const json& op : doc.at("ops")) file.history.ops.push_back(OpFromJson(op));
    return file;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(path + ": malformed history file: " + e.what());
  }
}

}  // namespace dmindex::check
