// What a DEX compute process that dies leaves behind, checked the same way for an in-process
// "crash" (tests/dex_publication_test.cc) and a real SIGKILL over UCX (tests/dex_crash_test.cc).
//
// The dead process was told its writes were done; some of them reached the pool (write-
// throughs, write-backs of cooled or non-admitted pages), the rest died with its cache. What is
// provable, and checked here (docs/DEX.md, "What may reach the pool"):
//  * the pool alone is a well-formed B-link tree (tree/pool_audit.h): no pointer to a block
//    never written, fences that tile each level, no parent ahead of its children;
//  * every pair in it is a value that some acknowledged write gave that key (nothing is
//    invented, nothing torn);
//  * keys the dead process never touched after a clean close of an earlier one (`durable`)
//    are all there: what had reached the pool before is not lost by the crash;
//  * a process hosting the dead one's compute nodes (after its leases were released) reads
//    exactly that content: every key the pool holds, with the pool's value, and no other key,
//    by lookups and by a scan - with no Corruption and no error of any kind.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "alloc/catalog.h"
#include "designs/dex/dex_admin.h"
#include "designs/dex/partition_store.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "tree/node_layout.h"
#include "tree/pool_audit.h"
#include "u64_api.h"

namespace dmindex::testing {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


// Per key, every value an acknowledged write gave it (nullopt: an acknowledged delete).
using AckedWrites = std::map<Key, std::vector<std::optional<Value>>>;

// Audits the pool of index `name` and returns its content (key -> value).
inline std::map<Key, Value> PoolContentOf(fabric::Fabric& fabric, const std::string& name,
                                          uint32_t node_bytes) {
  std::map<Key, Value> content;
  auto ep = fabric.Connect();
  EXPECT_TRUE(ep.ok());
  if (!ep.ok()) return content;
  auto entry = alloc::Catalog::Open(**ep, name);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  if (!entry.ok()) return content;
  // DEX's u64 format: fixed slots, values as 8-byte strings in the slot (designs/dex/dex_keys.h).
  tree::PoolContent<tree::U64BytesKV> pool;
  Status audit =
      tree::AuditPool(**ep, *tree::NodeLayout<tree::U64BytesKV>::For(node_bytes), entry->root_word, &pool);
  EXPECT_TRUE(audit.ok()) << audit.ToString();
  for (const auto& e : pool.entries) {
    EXPECT_EQ(e.value.size(), 8u) << "key " << e.key;
    if (e.value.size() == 8) content[e.key] = u64::Decode(e.value);
  }
  return content;
}

// `host` hosts every compute node of the index now. `durable`: keys whose value the pool
// must hold (their last write reached it before the dead process started, and the dead
// process did not write them).
inline void CheckWhatTheDeadLeft(fabric::Fabric& fabric, const std::string& name, uint32_t node_bytes,
                                 Index& host, const AckedWrites& acked,
                                 const std::map<Key, Value>& durable) {
  const std::map<Key, Value> pool = PoolContentOf(fabric, name, node_bytes);
  if (::testing::Test::HasFailure()) return;
  for (const auto& [k, v] : pool) {
    auto it = acked.find(k);
    ASSERT_NE(it, acked.end()) << "the pool holds key " << k << ", which was never written";
    bool written = false;
    for (const auto& w : it->second) written |= w == v;
    ASSERT_TRUE(written) << "the pool holds key " << k << " = " << v << ", a value never written to it";
  }
  for (const auto& [k, v] : durable) {
    auto it = pool.find(k);
    ASSERT_NE(it, pool.end()) << "key " << k << " had reached the pool before the crash and is gone";
    EXPECT_EQ(it->second, v) << "key " << k;
  }
  auto session = host.OpenSession(0);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  size_t found = 0;
  for (const auto& [k, writes] : acked) {
    Value v = 0;
    Status s = (*session)->Lookup(k, &v);
    auto it = pool.find(k);
    if (it == pool.end()) {
      ASSERT_TRUE(s.IsNotFound()) << "key " << k << " (not in the pool): " << s.ToString();
    } else {
      ASSERT_TRUE(s.ok()) << "key " << k << " (in the pool): " << s.ToString();
      ASSERT_EQ(v, it->second) << "key " << k;
      ++found;
    }
  }
  EXPECT_EQ(found, pool.size());
  std::vector<KeyValue> all;
  ReadOptions ro;
  ro.readahead = 256;
  Iterator it_all = (*session)->NewIterator(ro);  // batches continue after the last key returned
  for (it_all.SeekToFirst(); it_all.Valid(); it_all.Next())
    all.push_back({u64::Decode(it_all.key()), u64::Decode(it_all.value())});
  ASSERT_TRUE(it_all.status().ok()) << "scan: " << it_all.status().ToString();
  ASSERT_EQ(all.size(), pool.size());
  auto it = pool.begin();
  for (const KeyValue& kv : all) {
    ASSERT_EQ(kv.key, it->first);
    ASSERT_EQ(kv.value, it->second) << "key " << kv.key;
    ++it;
  }
}

// Releases every compute node's lease as `dmindex indexes --release-host N --token T` does.
inline void ReleaseLeasesOfTheDead(fabric::Fabric& fabric, const std::string& name) {
  auto ep = std::move(fabric.Connect()).value();
  auto entry = alloc::Catalog::Open(*ep, name);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  uint64_t raw = 0;
  ASSERT_TRUE(ep->Read(entry->aux_word(0), &raw, 8).ok());
  auto snap = designs::dex::PartitionStore(GlobalAddress::FromRaw(raw)).Inspect(*ep);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  for (uint32_t i = 0; i < snap->leases.size(); ++i) {
    if (snap->leases[i] == 0) continue;
    Status s = designs::dex::ReleaseDexHost(*ep, *entry, i, snap->leases[i]);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

// With durability=log (DEX's default): `host` finds every key with the value of its last
// acknowledged write (absent after an acknowledged delete). `in_flight`: a write that was
// never acknowledged (the process died inside it) - its key may also hold that value (nullopt:
// its delete). Returns the number of keys checked.
inline size_t CheckNothingAcknowledgedLost(Index& host, const AckedWrites& acked,
                                           const std::map<Key, std::optional<Value>>& in_flight = {}) {
  auto session = host.OpenSession(0);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return 0;
  size_t checked = 0, lost = 0;
  for (const auto& [k, writes] : acked) {
    Value v = 0;
    Status s = (*session)->Lookup(k, &v);
    EXPECT_TRUE(s.ok() || s.IsNotFound()) << "key " << k << ": " << s.ToString();
    const std::optional<Value> got = s.ok() ? std::optional<Value>(v) : std::nullopt;
    auto f = in_flight.find(k);
    if (got != writes.back() && (f == in_flight.end() || got != f->second)) {
      if (++lost <= 5)
        ADD_FAILURE() << "key " << k << ": last acknowledged "
                      << (writes.back() ? std::to_string(*writes.back()) : std::string("delete")) << ", found "
                      << (got ? std::to_string(*got) : std::string("nothing"));
    }
    ++checked;
  }
  EXPECT_EQ(lost, 0u) << "acknowledged writes lost, of " << checked << " keys";
  return checked;
}

}  // namespace dmindex::testing
