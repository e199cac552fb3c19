// Operation traces in the line format of YCSB's site.ycsb.BasicDB, so that a stream written
// by the real YCSB client (`-db site.ycsb.BasicDB`) replays unchanged on every design, and a
// dmindex run can be written out for other tools:
//
//   READ usertable user123 [ <all fields>]
//   SCAN usertable user123 100 [ <all fields>]
//   UPDATE usertable user123 [ field0=... ]
//   INSERT usertable user123 [ field0=... ]
//   DELETE usertable user123
//
// BasicDB's property dump ("***...", "\"key\"=\"value\"") and YCSB's statistics ("[OVERALL],
// ...") are skipped; any other line is an error naming its line number. A read-modify-write
// is a READ line and an UPDATE line, as BasicDB sees it.
//
// Keys are kept verbatim: each distinct key of the trace (any word, "user..." or not) is a byte
// string, stored as written - string order, leading zeros kept. The operations name them by
// integer: the i-th distinct key is i + 1 (RecordCodec maps it back to the bytes). On request
// (`bench --key-format u64`), a key "user<number>" maps to the integer key number + 1 instead
// (0 is reserved for the fence keys): key order is then numeric and any other key an error.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/op_stream.h"
#include "bench/key_space.h"
#include "bench/record_shape.h"
#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::bench {

// "user<number>" -> number + 1; InvalidArgument for anything else.
Result<Key> KeyOfYcsbName(std::string_view name);

struct Trace {
  std::string name;              // the run trace's file name
  std::vector<RecordPair> load;    // bulk loaded first: the load trace's INSERTs, sorted, unique
  std::vector<Operation> ops;    // the run trace, in file order
  std::vector<Key> final_keys;   // every key present after all of `ops`, sorted
  // Verbatim keys: the bytes of integer key i + 1 (null with integer keys).
  std::shared_ptr<const std::vector<std::string>> key_names;
  uint32_t longest_key = 0;      // bytes of the longest key
};

// `load_path` (may be empty): a YCSB load phase (INSERT lines only). `run_path`: the stream
// to execute. Operations that may name an absent key (per the trace's own inserts and
// deletes) are marked so. `integer_keys`: user<N> is integer N + 1 (else keys are verbatim).
Result<Trace> ReadTrace(const std::string& run_path, const std::string& load_path, bool integer_keys);

// Each thread's part of a trace: every key's operations go to one thread, in file order, so
// a read after an insert of the same key still comes after it.
std::vector<std::vector<Operation>> SplitByKey(const std::vector<Operation>& ops, uint32_t threads);

// A trace as an OpSource.
class TraceOps : public OpSource {
 public:
  explicit TraceOps(std::shared_ptr<const std::vector<Operation>> ops) : ops_(std::move(ops)) {}
  bool Next(Operation* op) override {
    if (next_ >= ops_->size()) return false;
    *op = (*ops_)[next_++];
    return true;
  }

 private:
  std::shared_ptr<const std::vector<Operation>> ops_;
  size_t next_ = 0;
};

// --trace-out: collects every completed operation of a run (all threads, warm-up included)
// and writes them in completion order, keys and fields as the run's records have them
// (RecordCodec): a byte-string run's key bytes, a u64 run's records by YCSB's name
// (YcsbKeyName); writes with every field YCSB's BasicDB would print, each its own length.
class TraceRecorder {
 public:
  TraceRecorder(uint32_t threads, std::string table);
  // The run's records (the runner sets it before the run starts).
  void UseCodec(std::shared_ptr<const RecordCodec> codec) { codec_ = std::move(codec); }
  void Record(uint32_t thread, uint64_t sequence, const Operation& op);
  // Writes the lines to `path` (replacing it).
  Status WriteTo(const std::string& path) const;

 private:
  struct Entry {
    uint64_t sequence;
    Operation op;
  };
  std::string Line(const Operation& op) const;

  const std::string table_;
  std::shared_ptr<const RecordCodec> codec_;
  std::vector<std::vector<Entry>> per_thread_;
};

// Writes `text` to `path` (replacing it).
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace dmindex::bench
