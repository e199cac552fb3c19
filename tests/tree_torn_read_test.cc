// What a reader does with a node image that does not validate (TreeReader::Read, docs/
// SYNCHRONIZATION.md "Readers of an image that does not validate"), on scripted tears
// (fabric/inproc/verb_script.h) instead of hoping for an unlucky schedule:
//  * a writer holding the node's lock is stopped in the middle of its WRITE: the reader keeps
//    reading, for as long as the writer holds the lock, and returns the new image once it is
//    done - however long that takes (here: until the test lets it go);
//  * a writer that dies in the middle of an unlocked WRITE leaves a torn image nobody will
//    ever finish: reported at once (Corruption; Retry where owners write without the lock,
//    so that the design decides) instead of after a timeout;
//  * two writers that tear two consecutive READs into equal bytes while the lock word read
//    between them was free: not Corruption - the reader takes the lock for one READ and
//    gets the node as the second writer left it;
//    with RF-tree's inline lock (trailer_lock) the same, the reader holding the leaf's
//    trailer for that READ too, since an inline writer takes no lock-table word;
//  * a pointer to memory no node was ever written to: Corruption at once, saying so.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <thread>

#include "alloc/node_allocator.h"
#include "common/retry_status.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "tree/lock_table.h"
#include "tree/node_lock.h"
#include "tree/tree_reader.h"

namespace dmindex::tree {
namespace {

using fabric::HeldVerb;
using fabric::VerbKind;

constexpr uint32_t kNodeBytes = 512;

struct Pool {
  // `trailer_lock`: nodes end in a trailer holding their version, a leaf's lock word (RF-tree's
  // inline version lock).
  explicit Pool(bool unlocked_writers, bool trailer_lock = false)
      : layout(*NodeLayout<U64KV>::For(kNodeBytes, trailer_lock)) {
    fabric::InProcOptions fo;
    fo.memory_nodes = 1;
    fo.pool_bytes = 64ull << 20;
    fabric = std::move(fabric::InProcFabric::Create(fo)).value();
    options.node_bytes = kNodeBytes;
    options.unlocked_writers = unlocked_writers;
    options.node_trailer = options.trailer_lock = trailer_lock;
    ep = std::move(fabric->Connect()).value();
    node = std::move(allocator.Allocate(*ep, kNodeBytes)).value();
    shared = std::make_unique<TreeShared<U64KV>>(*fabric, options, layout, GlobalAddress{});
    reader = std::make_unique<TreeReader<U64KV>>(*shared);
    cn = std::make_unique<ComputeNodeState<U64KV>>(0, 1, options, layout);
  }
  // A leaf image holding keys 1..n with values v.
  std::vector<std::byte> Leaf(uint64_t n, uint64_t v) {
    std::vector<std::byte> image(kNodeBytes);
    std::vector<LeafEntry<U64KV>> entries;
    for (uint64_t k = 1; k <= n; ++k) entries.push_back({k, v, {}});
    NodeHeader<U64KV> h;
    h.version = 1000 + v;
    shared->validator.leaf().Build(image.data(), h, entries, false);
    return image;
  }
  TreeContext<U64KV> Context() {
    return TreeContext<U64KV>(std::move(fabric->Connect()).value(), cn.get(), kNodeBytes);
  }

  std::unique_ptr<fabric::InProcFabric> fabric;
  TreeOptions options;
  const NodeLayout<U64KV> layout;
  alloc::NodeAllocator allocator{1};
  std::unique_ptr<fabric::Endpoint> ep;
  GlobalAddress node;
  std::unique_ptr<TreeShared<U64KV>> shared;
  std::unique_ptr<TreeReader<U64KV>> reader;
  std::unique_ptr<ComputeNodeState<U64KV>> cn;
};

TEST(TornRead, AReaderWaitsForTheLockHolderThatIsWritingTheNode) {
  Pool pool(false);
  const auto old_image = pool.Leaf(3, 1), new_image = pool.Leaf(5, 2);
  ASSERT_TRUE(pool.ep->Write(pool.node, old_image.data(), kNodeBytes).ok());
  // The writer takes the node's lock and its WRITE of the new image stops after the
  // header: the node holds the new header over the old slots.
  HeldVerb hold(HeldVerb::At(VerbKind::kWrite, pool.node), {{0, 64}});
  pool.fabric->SetVerbScript(&hold);
  NodeLock lock(false);
  NodeLock::Held held;
  std::thread writer([&] {
    auto ep = std::move(pool.fabric->Connect()).value();
    uint64_t cas_failures = 0;
    std::vector<std::byte> buf(kNodeBytes);
    ASSERT_TRUE(lock.LockAndRead(*ep, nullptr, LockOwner{nullptr, 77}, pool.node, buf.data(), kNodeBytes, &held, &cas_failures).ok());
    fabric::Verb write = fabric::Verb::Write(pool.node, new_image.data(), kNodeBytes);
    ASSERT_TRUE(lock.WriteAndUnlock(*ep, &held, {&write, 1}).ok());
  });
  ASSERT_TRUE(hold.WaitHeld());
  std::atomic<bool> done{false};
  Status read;
  NodeHeader<U64KV> h;
  std::vector<std::byte> got(kNodeBytes);
  auto ctx = pool.Context();
  std::thread reader([&] {
    read = pool.reader->Read(ctx, pool.node, got.data(), &h);
    done = true;
  });
  // The reader finds the lock held and keeps waiting, many reads long, for its holder.
  while (pool.cn->retries.load() < 50) std::this_thread::yield();
  EXPECT_FALSE(done.load()) << read.ToString();
  hold.Release();
  writer.join();
  reader.join();
  pool.fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(h.count, 5u);  // the writer's image
}

class TornReadDeadWriter : public ::testing::TestWithParam<bool> {};  // unlocked_writers

TEST_P(TornReadDeadWriter, AnImageNobodyIsWritingIsReportedAtOnce) {
  Pool pool(GetParam());
  const auto old_image = pool.Leaf(3, 1), new_image = pool.Leaf(5, 2);
  ASSERT_TRUE(pool.ep->Write(pool.node, old_image.data(), kNodeBytes).ok());
  // An unlocked write-back (DEX owner) lands the new header, and its writer dies.
  HeldVerb hold(HeldVerb::At(VerbKind::kWrite, pool.node), {{0, 64}});
  pool.fabric->SetVerbScript(&hold);
  std::thread writer([&] {
    auto ep = std::move(pool.fabric->Connect()).value();
    EXPECT_FALSE(ep->Write(pool.node, new_image.data(), kNodeBytes).ok());
  });
  ASSERT_TRUE(hold.WaitHeld());
  hold.Fail();
  writer.join();
  pool.fabric->SetVerbScript(nullptr);
  auto ctx = pool.Context();
  NodeHeader<U64KV> h;
  std::vector<std::byte> got(kNodeBytes);
  Status read = pool.reader->Read(ctx, pool.node, got.data(), &h);
  if (GetParam()) EXPECT_TRUE(IsRetry(read)) << read.ToString();
  else EXPECT_EQ(read.code(), Status::Code::kCorruption) << read.ToString();
  EXPECT_NE(read.message().find("does not validate even under its lock"), std::string::npos)
      << read.ToString();
  // One torn READ, then one more with the lock word, then one under the lock: no waiting.
  EXPECT_LE(pool.cn->retries.load(), 1u);
  uint64_t lock_word = 1;
  ASSERT_TRUE(pool.ep->Read(LockWordFor(pool.node, LockArea::kProcesses), &lock_word, 8).ok());
  EXPECT_EQ(lock_word, 0u) << "the reader left the lock it took held";
}

// Serves the first `count` READs of `node` the same torn image, whatever the pool holds: the
// schedule of two writers that tear two consecutive READs into equal bytes. Writer 1 turns
// image A into B while the first READ copies B's header and A's body; it unlocks; the reader
// reads the lock word (free); writer 2 takes the lock and turns B into C while the second
// READ copies B's header (not yet overwritten) and C's body - equal to A's where writer 2
// undid writer 1's change (a key inserted, then deleted: a heap line put back as it was).
// Then writer 2 finishes and unlocks: the pool holds C, a valid image.
class RepeatedTear final : public fabric::VerbScript {
 public:
  // `on_last`: runs when the last torn READ is served (another writer acting meanwhile).
  RepeatedTear(GlobalAddress node, std::vector<std::byte> torn, int count,
               std::function<void()> on_last = nullptr)
      : node_(node), torn_(std::move(torn)), left_(count), on_last_(std::move(on_last)) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    const fabric::Verb& v = copy.verb();
    if (v.kind != VerbKind::kRead || v.remote != node_ || v.length != kNodeBytes || left_.load() == 0)
      return Outcome::kPass;
    std::memcpy(v.local, torn_.data(), std::min<size_t>(v.length, torn_.size()));
    if (--left_ == 0 && on_last_) on_last_();
    return Outcome::kDone;
  }
  int left() const { return left_.load(); }

 private:
  const GlobalAddress node_;
  const std::vector<std::byte> torn_;
  std::atomic<int> left_;
  const std::function<void()> on_last_;
};

// Writer 1 turned A into B while the reader's READs copied B's header over A's slots (torn);
// the pool holds `pool_image` (written first). Serves the reader's first `count` READs of the
// node that torn image, runs `on_last` with the last one, and returns what the reader read.
Status ReadThroughEqualTears(Pool& pool, const std::vector<std::byte>& pool_image, int count,
                             NodeHeader<U64KV>* h, std::function<void()> on_last = nullptr) {
  std::vector<std::byte> torn = pool.Leaf(3, 1);
  std::memcpy(torn.data(), pool.Leaf(5, 2).data(), 64);  // B's header over A's slots
  EXPECT_TRUE(pool.ep->Write(pool.node, pool_image.data(), kNodeBytes).ok());
  RepeatedTear script(pool.node, torn, count, std::move(on_last));
  pool.fabric->SetVerbScript(&script);
  auto ctx = pool.Context();
  std::vector<std::byte> got(kNodeBytes);
  Status read = pool.reader->Read(ctx, pool.node, got.data(), h);
  pool.fabric->SetVerbScript(nullptr);
  EXPECT_EQ(script.left(), 0);  // every torn READ was served
  return read;
}

uint64_t WordAt(Pool& pool, GlobalAddress at) {
  uint64_t word = ~0ull;
  EXPECT_TRUE(pool.ep->Read(at, &word, 8).ok());
  return word;
}

TEST_P(TornReadDeadWriter, EqualTornImagesFromTwoWritersAreNotCorruption) {
  Pool pool(GetParam());
  NodeHeader<U64KV> h;
  Status read = ReadThroughEqualTears(pool, pool.Leaf(3, 3), 2, &h);
  // Before the reader took the lock to look, equal bytes with the lock free were reported as
  // Corruption (or Retry): a node that was merely being written.
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(h.version, 1003u);  // writer 2's image, read under the lock
  EXPECT_EQ(h.count, 3u);
  EXPECT_EQ(WordAt(pool, LockWordFor(pool.node, LockArea::kProcesses)), 0u) << "the reader left the lock it took held";
}

// RF-tree's inline lock (TreeOptions::trailer_lock): a leaf's writer holds its trailer, not a
// lock-table word, so the READ a reader makes "under the lock" after two equal torn images
// must hold the trailer too. Writer 2 locks the trailer (1002 -> 1003) after the reader found
// it free, and lands all of C but its trailer while the reader READs under the lock-table
// word. Before the reader also took the trailer (TreeReader::ReadUnderTrailer) that READ was
// called Corruption: a node that was merely being written. Now its CAS on the trailer fails,
// it waits for writer 2 and returns writer 2's image.
TEST(TornRead, EqualTornImagesWhileAnInlineWriterHoldsTheTrailerAreNotCorruption) {
  Pool pool(false, /*trailer_lock=*/true);
  const GlobalAddress trailer = pool.node + pool.layout.TrailerOffset();
  const uint64_t held = 1002 | 1;
  NodeHeader<U64KV> h;
  Status read = ReadThroughEqualTears(pool, pool.Leaf(5, 2), 3, &h, [&] {
    std::vector<std::byte> landed = pool.Leaf(3, 3);
    std::memcpy(landed.data() + pool.layout.TrailerOffset(), &held, 8);
    ASSERT_TRUE(pool.ep->Write(pool.node, landed.data(), kNodeBytes).ok());
  });
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(h.version, 1003u);  // writer 2's image
  EXPECT_EQ(WordAt(pool, trailer), held) << "the reader changed a trailer another writer holds";
  EXPECT_EQ(WordAt(pool, LockWordFor(pool.node, LockArea::kProcesses)), 0u) << "the reader left the lock-table word held";
}

// The same two equal torn READs with nobody writing afterwards: the reader reads under the
// lock-table word and the trailer, gets the node, and leaves both as it found them.
TEST(TornRead, AReaderUnderTheTrailerPutsItBack) {
  Pool pool(false, /*trailer_lock=*/true);
  NodeHeader<U64KV> h;
  Status read = ReadThroughEqualTears(pool, pool.Leaf(3, 3), 2, &h);
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(h.version, 1003u);
  EXPECT_EQ(WordAt(pool, pool.node + pool.layout.TrailerOffset()), 1003u) << "C's version again, free";
  EXPECT_EQ(WordAt(pool, LockWordFor(pool.node, LockArea::kProcesses)), 0u);
}

INSTANTIATE_TEST_SUITE_P(Writers, TornReadDeadWriter, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "unlocked_writers" : "locked_writers"; });

TEST(TornRead, ABlockNoNodeWasWrittenToIsCorruptionAtOnce) {
  Pool pool(true);
  auto ctx = pool.Context();
  NodeHeader<U64KV> h;
  std::vector<std::byte> got(kNodeBytes);
  Status read = pool.reader->Read(ctx, pool.node, got.data(), &h);  // fresh chunk memory: zero
  EXPECT_EQ(read.code(), Status::Code::kCorruption) << read.ToString();
  EXPECT_NE(read.message().find("zero memory"), std::string::npos) << read.ToString();
  EXPECT_EQ(pool.cn->retries.load(), 0u);
}

}  // namespace
}  // namespace dmindex::tree
