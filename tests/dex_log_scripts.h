// Scripts and lookups shared by the tests of DEX's redo log (dex_durability_test.cc,
// dex_log_failure_test.cc): where a compute node's log lies, and a script that fails or
// holds the WRITEs of one thread into it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "alloc/catalog.h"
#include "common/runtime.h"
#include "designs/dex/redo_log.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"

namespace dmindex::testing {

// The redo log of compute node `cn` of index `name` (its log directory: catalog aux word 1).
inline GlobalAddress LogOf(fabric::Fabric& fabric, const std::string& name, uint32_t cn) {
  auto ep = std::move(fabric.Connect()).value();
  auto entry = alloc::Catalog::Open(*ep, name);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  uint64_t dir = 0, log = 0;
  EXPECT_TRUE(ep->Read(entry->aux_word(1), &dir, 8).ok());
  EXPECT_NE(dir, 0u);
  EXPECT_TRUE(ep->Read(GlobalAddress::FromRaw(dir) + 8ull * cn, &log, 8).ok());
  return GlobalAddress::FromRaw(log);
}

// Fails the first `count` WRITEs into [from, to) that the thread which called `arm()` posts,
// or (count 0) runs `hold` on the first one before passing it: the record of a write failing
// (both of its posts), or still in flight while the test looks. Other threads' WRITEs (the
// write-back thread posting a failed record again) pass.
class RecordScript final : public fabric::VerbScript {
 public:
  RecordScript(GlobalAddress from, GlobalAddress to, int count, std::function<void()> hold = {})
      : from_(from), to_(to), count_(count), hold_(std::move(hold)) {}
  void arm() {
    armer_ = std::this_thread::get_id();
    armed_.store(true);
  }
  int seen() const { return seen_.load(); }
  Outcome Run(const fabric::VerbCopy& c) override {
    const fabric::Verb& v = c.verb();
    if (!armed_.load() || v.kind != fabric::VerbKind::kWrite || v.remote < from_ || !(v.remote < to_) ||
        std::this_thread::get_id() != armer_)
      return Outcome::kPass;
    const int n = seen_.fetch_add(1);
    if (count_ == 0) {
      if (n == 0) hold_();
      return Outcome::kPass;
    }
    return n < count_ ? Outcome::kFail : Outcome::kPass;
  }

 private:
  const GlobalAddress from_, to_;
  const int count_;
  const std::function<void()> hold_;
  std::thread::id armer_;
  std::atomic<bool> armed_{false};
  std::atomic<int> seen_{0};
};

// Runs `write` with the first record it posts into the log at `log` held in flight (the
// verbs before it in its batch have landed), and `read` on another thread meanwhile. The
// hold ends as soon as `read` returned (the failure) or after 300 ms (a correct reader is
// still waiting then, whatever the load). Returns whether `read` returned while it was held;
// `write` must be acknowledged.
inline bool ReadReturnsWhileARecordIsHeld(fabric::InProcFabric& fabric, GlobalAddress log,
                                          const std::function<Status()>& write, const std::function<void()>& read) {
  using designs::dex::RedoLog;
  std::atomic<bool> in_flight{false}, answered_early{false};
  runtime::Thread reader;
  RecordScript script(log + RedoLog::kHeaderBytes, log + RedoLog::BlockBytes(256 << 10), 0, [&] {
    in_flight.store(true);
    reader = runtime::Thread([&] {
      read();
      if (in_flight.load()) answered_early.store(true);
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (!answered_early.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    in_flight.store(false);
  });
  fabric.SetVerbScript(&script);
  script.arm();
  const Status written = write();
  reader.join();
  fabric.SetVerbScript(nullptr);
  EXPECT_TRUE(written.ok()) << written.ToString();
  EXPECT_EQ(script.seen(), 1) << "the write posted no record";
  return answered_early.load();
}

// The writes whose records fail in the tests of failed records: an update of key 100, a
// delete of 120 and an insert of 201 by `writer`, each with the first two WRITEs into the
// ring of the log at `log` failing (its record's post and re-post). None is acknowledged.
inline void WritesWhoseRecordsFail(fabric::InProcFabric& fabric, GlobalAddress log, Session& writer) {
  using designs::dex::RedoLog;
  const std::vector<std::pair<const char*, std::function<Status()>>> writes = {
      {"update", [&] { return writer.Update(100, 10000); }},
      {"delete", [&] { return writer.Delete(120); }},
      {"insert", [&] { return writer.Insert(201, 201); }},
  };
  for (const auto& [what, write] : writes) {
    RecordScript script(log + RedoLog::kHeaderBytes, log + RedoLog::BlockBytes(256 << 10), 2);
    fabric.SetVerbScript(&script);
    script.arm();
    const Status s = write();
    fabric.SetVerbScript(nullptr);
    ASSERT_EQ(script.seen(), 2) << what << ": the record was not posted twice";
    ASSERT_FALSE(s.ok()) << what << ": acknowledged without its record";
  }
}

// What `reader` is told about keys 100, 120 and 201 once it is told anything: the value, or
// nullopt for NotFound; a key it is not told about (Unavailable) is missing. With `wait` (a
// write-back thread runs), Unavailable is waited out for up to 10 s.
inline std::map<uint64_t, std::optional<uint64_t>> ToldAboutWritesWhoseRecordsFailed(Session& reader, bool wait) {
  std::map<uint64_t, std::optional<uint64_t>> told;
  for (uint64_t k : {100, 120, 201}) {
    for (int i = 0; i < 2000; ++i) {
      uint64_t v = 0;
      const Status s = reader.Lookup(k, &v);
      if (s.IsUnavailable() && wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      EXPECT_TRUE(s.ok() || s.IsNotFound() || s.IsUnavailable()) << k << ": " << s.ToString();
      if (!s.IsUnavailable()) told[k] = s.ok() ? std::optional<uint64_t>(v) : std::nullopt;
      break;
    }
    EXPECT_TRUE(!wait || told.contains(k)) << "key " << k << " stayed unavailable with a write-back thread";
  }
  return told;
}

}  // namespace dmindex::testing
