// The multi-process correctness run over UCX (ucx-shm): two memory-server processes, one
// process that creates and loads an index, two `dmindex check` compute processes racing on
// the same hot keys of it (inserts, updates, deletes, lookups, scans), each writing its
// history; then one process merges the histories, checks them (linearizability per key,
// scans), reads every key back and checks that every acknowledged write survived and every
// acknowledged delete stuck. Run for every registered design that several processes can
// share (designs::SharedAcrossProcesses); the others are skipped with the reason.
//
// The runs are shown to be meaningful (the processes overlapped in time and read each other's
// writes) and the checks to be sharp (a merge missing one process's history, and an index
// changed behind the histories' back, both fail naming a key).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "check/history_file.h"
#include "common/key_text.h"
#include "designs/registry.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"
#include "test_fabrics.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


using testing::RunTool;
using testing::ToolRun;

class MultiProcessCheckTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (Status shared = designs::SharedAcrossProcesses(GetParam()); !shared.ok())
      GTEST_SKIP() << shared.message();
    for (int i = 0; i < 2; ++i) {
      auto server = testing::StartShmMemserver();
      ASSERT_TRUE(server.ok()) << server.status().ToString();
      if (i > 0) memservers_ += ",";
      memservers_ += (*server)->address().ToString();
      servers_.push_back(std::move(server).value());
    }
  }
  // The start barrier is a directory of the processes' files: removed whole, or the next
  // test of this process would find its parties there already and not wait at all.
  void TearDown() override {
    std::error_code ignored;
    for (const std::string& path : files_) std::filesystem::remove_all(path, ignored);
  }

  // A fabric of this test process (standing for one more compute process).
  std::unique_ptr<fabric::Fabric> Connect() {
    auto f = fabric::ucx::UcxFabric::Create(memservers_, fabric::ucx::UcxOptions{});
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  // `compute_nodes`: DEX hosts that many of the cluster's compute nodes (the lowest free).
  std::unique_ptr<Index> Open(fabric::Fabric& fabric, const std::string& name, uint32_t node_bytes,
                              bool byte_keys = false, uint32_t compute_nodes = 1) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.name = name;
    o.node_bytes = node_bytes;
    o.compute_nodes = compute_nodes;
    if (byte_keys) {  // as `dmindex check` creates it with kByteKeyFlags
      o.key_format = KeyFormat::kBytes;
      o.max_key_bytes = 64;
    }
    auto index = designs::MakeIndex(GetParam(), fabric, o);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(index).value() : nullptr;
  }
  // `dmindex check` on the design under test, over the memory servers.
  ToolRun Check(const std::string& args) {
    return RunTool("check --design " + Design() + " --memservers " + memservers_ + " " + args);
  }
  bool IsDex() const { return GetParam() == "dex"; }
  // DEX: two compute nodes in the cluster, each hosted by one process at a time.
  std::string Design() const { return IsDex() ? "dex:partitions=2" : GetParam(); }
  // Per-role flags. DEX serves each key in the process hosting its compute node: the loader
  // and the verifier host both, the racing processes one each, handing keys to each other
  // every few milliseconds (so each reads what the other wrote).
  std::string LoaderFlags() const { return IsDex() ? " --compute-nodes 2" : ""; }
  std::string RacerFlags() const { return IsDex() ? " --compute-nodes 1 --repartition-ms 2" : ""; }
  std::string VerifierFlags() const { return IsDex() ? " --compute-nodes 2" : ""; }
  std::string TempFile(const std::string& name) {
    files_.push_back(::testing::TempDir() + "/mp_" + std::to_string(getpid()) + "_" + name + ".json");
    return files_.back();
  }

  void RunProcesses(const std::string& format, const std::string& work_load);

  std::vector<std::unique_ptr<fabric::ucx::MemserverProcess>> servers_;
  std::string memservers_;
  std::vector<std::string> files_;
};

// What the multi-process run rests on: a second opener of a name finds the first one's root
// (grown through several levels), and each sees the other's inserts, updates and deletes -
// also the first, whose cached root and inner nodes went stale meanwhile.
TEST_P(MultiProcessCheckTest, TwoOpenersOfOneNameShareTheIndex) {
  if (IsDex())
    GTEST_SKIP() << "DEX serves each key only in the process hosting its partition; "
                    "dex_processes_test covers two openers handing keys to each other";
  auto fabric_a = Connect(), fabric_b = Connect();
  ASSERT_TRUE(fabric_a && fabric_b);
  auto a = Open(*fabric_a, "opened-twice", 256);  // small nodes: a tree of several levels
  ASSERT_NE(a, nullptr);
  auto sa = std::move(a->OpenSession()).value();
  std::map<Key, Value> model;
  for (Key k = 1; k <= 600; ++k) {
    ASSERT_TRUE(sa->Insert(k, k * 10).ok());
    model[k] = k * 10;
  }
  auto b = Open(*fabric_b, "opened-twice", 256);
  ASSERT_NE(b, nullptr);
  auto sb = std::move(b->OpenSession()).value();
  Value v = 0;
  for (Key k = 1; k <= 600; ++k) {
    ASSERT_TRUE(sb->Lookup(k, &v).ok()) << "the second opener misses key " << k;
    ASSERT_EQ(v, k * 10);
  }
  for (Key k = 601; k <= 1800; ++k) ASSERT_TRUE(sb->Insert(k, model[k] = k * 10).ok());
  for (Key k = 1; k <= 300; ++k) ASSERT_TRUE(sb->Update(k, model[k] = k * 10 + 1).ok());
  for (Key k = 301; k <= 400; ++k) {
    ASSERT_TRUE(sb->Delete(k).ok());
    model.erase(k);
  }
  for (Key k = 1; k <= 1800; ++k) {
    Status s = sa->Lookup(k, &v);
    auto want = model.find(k);
    ASSERT_EQ(s.ok(), want != model.end()) << "key " << k << ": " << s.ToString();
    if (s.ok()) {
      ASSERT_EQ(v, want->second) << "key " << k;
    }
  }
  std::vector<KeyValue> all;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*sa, kMinKey, 5000, &all).ok());
  std::vector<KeyValue> want;
  for (const auto& [k, val] : model) want.push_back({k, val});
  EXPECT_EQ(all, want);
  // And back: the first opener's writes reach the second.
  ASSERT_TRUE(sa->Insert(5000, 7).ok());
  ASSERT_TRUE(sb->Lookup(5000, &v).ok());
  EXPECT_EQ(v, 7u);
}

// The index of the byte-key run: 64-byte keys in 1 KiB nodes (the slotted format's node size
// rule), values of 8 to 2008 bytes, inline and out of line (check/workload.h).
constexpr const char* kByteKeyFlags = " --key-format bytes --max-key-bytes 64 --node-size 1024";

// Loader, two racing processes (`work`: their load), verifier, and the two sharpness checks.
void MultiProcessCheckTest::RunProcesses(const std::string& format, const std::string& work_load) {
  const bool byte_keys = !format.empty();
  const std::string keys = " --index-name mp --keys 96 --key-stride 1" + format;  // one key set: full overlap
  const std::string h0 = TempFile("load"), h1 = TempFile("c1"), h2 = TempFile("c2");
  ToolRun load = Check(keys + LoaderFlags() + " --load --rounds 0 --history-out " + h0);
  ASSERT_EQ(load.exit_code, 0) << load.output;

  ToolRun run1, run2;
  // The racers meet at a start barrier after opening the index: however long each takes to
  // start (a loaded machine), their workloads run at the same time.
  const std::string barrier = TempFile("barrier");
  const std::string work = keys + RacerFlags() + work_load + " --start-barrier " + barrier;
  std::thread other([&] { run2 = Check(work + " --compute-node 2 --seed 22 --history-out " + h2); });
  run1 = Check(work + " --compute-node 1 --seed 11 --history-out " + h1);
  other.join();
  ASSERT_EQ(run1.exit_code, 0) << run1.output;
  ASSERT_EQ(run2.exit_code, 0) << run2.output;

  // The processes ran at the same time and read each other's writes.
  auto f1 = check::ReadHistoryFile(h1), f2 = check::ReadHistoryFile(h2);
  ASSERT_TRUE(f1.ok() && f2.ok()) << f1.status().ToString() << f2.status().ToString();
  auto span = [](const check::HistoryFile& f) {
    const auto& ops = f.history.ops;
    int64_t last = 0;
    for (const auto& op : ops) last = std::max(last, op.response_ns);
    return std::pair(f.history.clock_origin_ns + ops.front().invoke_ns, f.history.clock_origin_ns + last);
  };
  auto [begin1, end1] = span(*f1);
  auto [begin2, end2] = span(*f2);
  EXPECT_LT(std::max(begin1, begin2), std::min(end1, end2)) << "the compute processes did not overlap";
  auto reads_of = [](const check::HistoryFile& reader, uint32_t writer) {
    size_t n = 0;
    for (const auto& op : reader.history.ops)
      // Every value starts with the 8 bytes of its write's id, the writer in the top byte.
      n += op.kind == check::OpKind::kLookup && op.outcome == check::Outcome::kOk &&
           op.value.size() >= 8 && u64::Decode(Slice(op.value).substr(0, 8)) >> 56 == writer;
    return n;
  };
  const size_t one_reads_two = reads_of(*f1, 2), two_reads_one = reads_of(*f2, 1);
  EXPECT_GT(one_reads_two + two_reads_one, 0u) << "no process read the other's writes";

  // The verifying process: histories merged and checked, every key read back and checked.
  const std::string merged = TempFile("merged");
  ToolRun verify = Check("--merge " + h0 + " " + h1 + " " + h2 + format + VerifierFlags() +
                         " --final-state --compute-node 3 --history-out " + merged);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_NE(verify.output.find("OK: 3 merged histories of index mp and the final state of 96 keys"),
            std::string::npos) << verify.output;
  std::cout << "[ mp check ] " << GetParam() << (byte_keys ? " (byte keys)" : "") << ": " << one_reads_two << " + " << two_reads_one
            << " cross-process reads; " << verify.output;

  // Sharpness 1: without the history of the process whose writes the other read, the merge
  // is not linearizable.
  ToolRun partial = Check("--merge " + h0 + (one_reads_two > 0 ? " " + h1 : " " + h2) + format);
  EXPECT_EQ(partial.exit_code, 1) << partial.output;
  EXPECT_NE(partial.output.find("not linearizable, key "), std::string::npos) << partial.output;

  // Sharpness 2: a write no history knows of, made behind the histories' back, is found by the
  // final-state check (the first key is hot: every history touches it). DEX: this process
  // hosts both compute nodes, as the verifier does - the racers' last hand-over may have left
  // compute node 0 only keys that are deleted now, and the first key to compute node 1.
  auto fabric = Connect();
  ASSERT_TRUE(fabric);
  auto index = Open(*fabric, "mp", byte_keys ? 1024 : 512, byte_keys, IsDex() ? 2 : 1);
  ASSERT_NE(index, nullptr);
  {
    auto session = std::move(index->OpenSession()).value();
    std::string key;
    {
      Iterator first = session->NewIterator();
      first.SeekToFirst();
      ASSERT_TRUE(first.Valid()) << first.status().ToString();
      key = std::string(first.key());
    }
    const Status tamper = session->Insert(key, U64Key(0xdead).str());
    ASSERT_TRUE(tamper.ok()) << KeyText(key) << ": " << tamper.ToString();
  }
  index.reset();  // closed, as a process exits (DEX: gives its compute node back)
  ToolRun tampered = Check("--merge " + h0 + " " + h1 + " " + h2 + format + VerifierFlags() +
                           " --final-state --compute-node 3");
  EXPECT_EQ(tampered.exit_code, 1) << tampered.output;
  EXPECT_NE(tampered.output.find("wrong final state, key "), std::string::npos) << tampered.output;
}

TEST_P(MultiProcessCheckTest, ConcurrentProcessesAreLinearizableAndLoseNoWrite) {
  // Under a sanitizer every process runs 5-15 times slower (each of these took 90-150 s under
  // TSan, a fifth of CI's TSan pass): the same threads race over the same keys, with a quarter
  // of the operations. The Release build runs the whole load (three times in CI).
  const bool sanitized = std::string(DMINDEX_SANITIZER).size() > 0;
  RunProcesses("", sanitized ? " --threads 6 --ops 1500 --rounds 2" : " --threads 6 --ops 3000 --rounds 4");
}

// The same with byte-string keys and values (issue 12), for DEX, whose processes share a
// partition map of byte boundaries and hand keys to each other. naive and sherman pass it too
// (their processes share only the pool, as in the u64 run); CI repeats this suite 20 times,
// so they are left out of it.
TEST_P(MultiProcessCheckTest, ConcurrentProcessesWithByteKeysAreLinearizableAndLoseNoWrite) {
  if (!IsDex()) GTEST_SKIP() << "byte-key processes run for dex only (CI time); the u64 run covers " << GetParam();
  {
    auto fabric = Connect();
    ASSERT_TRUE(fabric);
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.name = "probe";
    o.node_bytes = 1024;
    o.key_format = KeyFormat::kBytes;
    o.max_key_bytes = 64;
    auto probe = designs::MakeIndex(GetParam(), *fabric, o);
    if (!probe.ok() && probe.status().IsNotSupported()) GTEST_SKIP() << probe.status().ToString();
  }
  RunProcesses(kByteKeyFlags, " --threads 4 --ops 1000 --rounds 2");
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, MultiProcessCheckTest, ::testing::ValuesIn(designs::DesignNames()),
                         testing::FabricParamName());

}  // namespace
}  // namespace dmindex
