// The correctness harness with byte-string keys and values (issue 12): every registered design
// that takes the bytes key format, through the public API only. Designs that answer
// NotSupported for the format are skipped (and say so), so a design is covered the moment it
// takes byte keys.
//
//  * RandomOpsMatchStdMap - random inserts, updates, deletes, lookups and scans of keys that
//    share long prefixes, extend one another, end in 0x00 or have the longest allowed length,
//    with empty values, values at and around the inline limit and out-of-line ones up to
//    64 KiB (and one of max_value_bytes, 1 MiB), against a std::map; then a full comparison,
//    and a value over the limit refused with the limit named.
//  * ConcurrentOpsAreLinearizable - the check workload (check/workload.h) on a bytes index:
//    8 threads on 128 hot keys under torn and delayed verbs, values of 8 to 2008 bytes (inline
//    and out of line), history checked for per-key linearizability and scans; again on an
//    index that starts empty (ConcurrentOpsFromAnEmptyIndexAreLinearizable).
//  * ConcurrentOpsWithRepartitioningAreLinearizable - the same while a partitioned design
//    (DEX) moves its byte-string partition boundaries every 2 ms.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <map>
#include <random>

#include "api/cluster_access.h"
#include "bench/runner.h"
#include "check/workload.h"
#include "test_fabrics.h"
#include "harness_config.h"

namespace dmindex {
namespace {

// Room for 64-byte keys and 32-byte inline values in 1 KiB nodes (SlottedLayout::MinNodeBytes).
// `design`: a name, or a name with knobs ("rftree:refresh_hops=off").
IndexOptions BytesOptions(const std::string& design, const std::string& name) {
  IndexOptions o = testing::HarnessIndexOptions(name);
  auto choice = bench::ParseDesignChoice(design);
  EXPECT_TRUE(choice.ok()) << choice.status().ToString();
  o.design = choice.ok() ? choice->name : design;
  if (choice.ok()) o.knobs = choice->knobs;
  o.key_format = KeyFormat::kBytes;
  o.max_key_bytes = 64;
  o.inline_value_bytes = 32;
  o.node_bytes = 1024;
  return o;
}

class BytesHarnessTest : public ::testing::TestWithParam<std::string> {
 protected:
  // The index, or null after GTEST_SKIP if the design does not take byte keys.
  std::unique_ptr<Index> Open(const fabric::FaultOptions& faults = {}) {
    cluster_ = ClusterOver(testing::MakeHarnessFabric(faults, 4 << 20));
    auto index = Index::Open(BytesOptions(GetParam(), "bytes-harness"), cluster_);
    if (!index.ok() && index.status().IsNotSupported()) return nullptr;
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(index).value() : nullptr;
  }
  std::shared_ptr<Cluster> cluster_;
};

std::string KeyOf(std::mt19937_64& rng) {
  static const std::string kPrefix(40, 'p');
  const uint64_t n = rng() % 300;
  std::string k = kPrefix.substr(0, rng() % 41) + std::to_string(n);
  switch (rng() % 6) {
    case 0: k.push_back('\0'); break;
    case 1: k.resize(64, 'z'); break;  // the longest key
    default: break;
  }
  return k;
}

std::string ValueOf(std::mt19937_64& rng, uint64_t stamp) {
  static const size_t kSizes[] = {0, 1, 8, 31, 32, 33, 100, 1000, 5000, 65536};
  std::string v(kSizes[rng() % std::size(kSizes)], '\0');
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>((stamp * 131 + i * 7) & 0xff);
  if (v.size() >= 8) std::memcpy(v.data(), &stamp, 8);
  return v;
}

TEST_P(BytesHarnessTest, RandomOpsMatchStdMap) {
  auto index = Open();
  if (index == nullptr) GTEST_SKIP() << GetParam() << " does not take byte keys yet";
  auto s = index->OpenSession(0);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Session& session = **s;
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(12);
  for (uint64_t op = 0; op < 4000; ++op) {
    const std::string k = KeyOf(rng);
    const auto it = model.find(k);
    switch (rng() % 5) {
      case 0:
      case 1: {
        const std::string v = ValueOf(rng, op);
        ASSERT_TRUE(session.Insert(k, v).ok());
        model[k] = v;
        break;
      }
      case 2: {
        const std::string v = ValueOf(rng, op);
        const Status st = session.Update(k, v);
        ASSERT_EQ(st.ok(), it != model.end()) << st.ToString();
        if (st.ok()) model[k] = v;
        break;
      }
      case 3: {
        const Status st = session.Delete(k);
        ASSERT_EQ(st.ok(), it != model.end()) << st.ToString();
        model.erase(k);
        break;
      }
      default: {
        std::string v;
        const Status st = session.Lookup(k, &v);
        ASSERT_EQ(st.ok(), it != model.end()) << st.ToString();
        if (st.ok()) {
          ASSERT_EQ(v, it->second) << "value of " << k << " (" << v.size() << " bytes)";
        }
      }
    }
  }
  // One value of the largest allowed size, and one byte more is refused naming the limit.
  const std::string big(1u << 20, 'B');
  const Status inserted = session.Insert("big", big);
  ASSERT_TRUE(inserted.ok()) << inserted.ToString();
  model["big"] = big;
  const Status over = session.Insert("big", std::string((1u << 20) + 1, 'B'));
  EXPECT_TRUE(over.IsInvalidArgument()) << over.ToString();
  EXPECT_NE(over.message().find(std::to_string(1u << 20)), std::string::npos) << over.ToString();

  Iterator iter = session.NewIterator();
  std::map<std::string, std::string> seen;
  for (iter.SeekToFirst(); iter.Valid(); iter.Next()) seen[std::string(iter.key())] = std::string(iter.value());
  ASSERT_TRUE(iter.status().ok()) << iter.status().ToString();
  ASSERT_EQ(seen.size(), model.size());
  EXPECT_TRUE(seen == model) << "the iterator's pairs differ from the model";
  std::string v;
  ASSERT_TRUE(session.Lookup("big", &v).ok());
  EXPECT_EQ(v, big);
}

// The check workload (8 threads on 128 hot keys, ~1 s per design: CI repeats it,
// .ci/concurrency-tests) under torn and delayed verbs, its history checked; `repartition_ms`:
// a partitioned design moves its boundaries that often. Returns the report's summary.
std::string RunCheckedWorkload(Index& index, uint32_t repartition_ms, uint64_t* repartitions) {
  check::WorkloadOptions options = testing::HarnessWorkload();
  options.ops_per_thread = 400;
  options.repartition_ms = repartition_ms;
  check::ConcurrentWorkload workload(index, options);
  EXPECT_TRUE(workload.Preload().ok());
  auto report = check::RunCheckedRounds(workload, testing::HarnessRounds());
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return "";
  EXPECT_EQ(workload.errors(), 0u) << "first error: " << workload.first_error();
  EXPECT_TRUE(report->ok()) << report->ToString();
  EXPECT_GT(report->scans_checked, 0u);
  *repartitions = workload.repartitions();
  return report->ToString(0);
}

TEST_P(BytesHarnessTest, ConcurrentOpsAreLinearizable) {
  auto index = Open(testing::HarnessFaults());
  if (index == nullptr) GTEST_SKIP() << GetParam() << " does not take byte keys yet";
  uint64_t repartitions = 0;
  const std::string report = RunCheckedWorkload(*index, 0, &repartitions);
  std::cout << "[ harness  ] " << GetParam() << " (bytes): " << report << "\n";
}

// Designs with logical partitions (DEX) move their boundaries - byte strings here, keys of
// the workload - every 2 ms while the threads run (as index_harness_test.cc does with the
// longest keys, which make that run too long for CI).
TEST_P(BytesHarnessTest, ConcurrentOpsWithRepartitioningAreLinearizable) {
  auto index = Open(testing::HarnessFaults());
  if (index == nullptr) GTEST_SKIP() << GetParam() << " does not take byte keys yet";
  if (index->partitioning() == nullptr) GTEST_SKIP() << GetParam() << " has no logical partitions";
  uint64_t repartitions = 0;
  const std::string report = RunCheckedWorkload(*index, 2, &repartitions);
  EXPECT_GT(repartitions, 0u);
  std::cout << "[ harness  ] " << GetParam() << " (bytes) with " << repartitions << " repartitionings: " << report
            << "\n";
}

// The same workload on an index that starts empty: the first round's inserts race to create
// the root and split the first leaves and the first internal nodes (Sherman's issue #26 was
// this case), with readers and scans crossing every split.
TEST_P(BytesHarnessTest, ConcurrentOpsFromAnEmptyIndexAreLinearizable) {
  auto index = Open(testing::HarnessFaults());
  if (index == nullptr) GTEST_SKIP() << GetParam() << " does not take byte keys yet";
  check::WorkloadOptions options = testing::HarnessWorkload();
  options.ops_per_thread = 250;
  check::ConcurrentWorkload workload(*index, options);
  auto report = check::RunCheckedRounds(workload, 1);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(workload.errors(), 0u) << "first error: " << workload.first_error();
  EXPECT_TRUE(report->ok()) << report->ToString();
  std::cout << "[ harness  ] " << GetParam() << " (bytes, from empty): " << report->ToString(0) << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, BytesHarnessTest, ::testing::ValuesIn(Index::Designs()), testing::FabricParamName());

// RF-tree with a search-layer cache filled once and never refreshed (every traversal after a
// split starts left of its key), and one refreshed after every stale read (refreshes race
// the splits): as in index_harness_test.cc's DesignVariants, with byte keys. XStore with
// sub-models of 4 keys: its memory servers retrain and expand all through the run, each
// expansion fitting a new prefix and alphabet to these keys (a few byte values: 'p', digits,
// 0x00, 'z'), while clients project keys of other prefixes and bytes with the older sets.
INSTANTIATE_TEST_SUITE_P(DesignVariants, BytesHarnessTest,
                         ::testing::Values("rftree:refresh_hops=off", "rftree:refresh_hops=1",
                                           "xstore:keys_per_model=4:expand_at=8"),
                         testing::FabricParamName());

}  // namespace
}  // namespace dmindex
