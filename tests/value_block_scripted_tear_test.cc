// Out-of-line values (tree/value_block.h, tree/value_store.h): the reuse race of a value
// block, scripted (fabric/inproc/verb_script.h), and the lease that closes it
// (docs/SYNCHRONIZATION.md, "Out-of-line values").
//
// The race: a reader has READ a leaf that maps key K to block B1 and is slow to READ B1.
// Meanwhile K is updated (B1 retired), B1's grace period passes, and the next update of K
// takes B1 for its new value D - whose block has landed, but whose leaf write has not yet:
// K still maps to C. A reader that accepted B1's bytes now would answer D, a value of K that
// is not in the index (a later lookup answers C): not linearizable. B1's header is K's and
// its check matches, so only the lease tells the reader to let it go: it copied B1 after
// its lease ran out, so it reads the leaf again and answers C.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bytes_tree_env.h"
#include "fabric/inproc/verb_script.h"
#include "tree/node_validation.h"
#include "tree/value_block.h"

namespace dmindex::testing {
namespace {

using fabric::HeldVerb;
using fabric::VerbKind;

constexpr uint32_t kNodeBytes = 1024;

// Offers each verb to one script, then the other.
class BothScripts final : public fabric::VerbScript {
 public:
  BothScripts(VerbScript& a, VerbScript& b) : a_(a), b_(b) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    const Outcome o = a_.Run(copy);
    return o == Outcome::kPass ? b_.Run(copy) : o;
  }

 private:
  VerbScript& a_;
  VerbScript& b_;
};

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<BytesTree> tree;
  std::unique_ptr<BytesTree::Ctx> writer, reader, other;
  GlobalAddress root_word;
  tree::SlottedLayout layout;

  GlobalAddress Leaf() {
    uint64_t raw = 0;
    EXPECT_TRUE(writer->ep.Read(root_word, &raw, 8).ok());
    return GlobalAddress::FromRaw(raw);
  }
  // The block the leaf (the root: the tree has one leaf) points at for `key`.
  GlobalAddress BlockOf(const std::string& key) {
    std::vector<std::byte> image(kNodeBytes);
    EXPECT_TRUE(writer->ep.Read(Leaf(), image.data(), kNodeBytes).ok());
    tree::NodeValidator<tree::BytesKV> v(layout, true);
    tree::NodeHeader<tree::BytesKV> h;
    EXPECT_TRUE(v.Decode(image.data(), &h));
    tree::SlottedLeafCodec codec(layout);
    const int slot = codec.Find(image.data(), h, key);
    EXPECT_GE(slot, 0);
    return slot < 0 ? GlobalAddress() : codec.BlockAt(image.data(), h, static_cast<uint32_t>(slot)).addr;
  }
};

Bed MakeBed(std::chrono::microseconds lease) {
  Bed b;
  b.fabric = MakeBytesFabric({}, 1, 64ull << 20);
  tree::TreeOptions o = ShermanBytes();
  o.node_bytes = kNodeBytes;
  o.max_key_bytes = 64;
  o.inline_value_bytes = 16;
  o.value_lease = lease;
  b.tree = MakeBytesTree(*b.fabric, o, &b.root_word);
  b.layout = *tree::SlottedLayout::For(o);
  b.writer = NewCtx(*b.tree);
  b.reader = NewCtx(*b.tree);
  b.other = NewCtx(*b.tree);
  return b;
}

std::string Value(char c) { return std::string(100, c); }  // out of line: > 16 bytes

TEST(ValueBlockScriptedTear, AReaderPastItsLeaseNeverAnswersAReusedBlock) {
  const auto lease = std::chrono::milliseconds(5);
  Bed b = MakeBed(lease);
  const std::string k = "key/K";
  ASSERT_TRUE(b.tree->Upsert(*b.writer, k, Value('A')).ok());
  ASSERT_TRUE(b.tree->Upsert(*b.writer, "key/other", Value('O')).ok());
  const GlobalAddress b1 = b.BlockOf(k);
  ASSERT_FALSE(b1.is_null());
  const GlobalAddress leaf = b.Leaf();

  // The reader's READ of B1 is held before it copies anything; the writer thread's first
  // WRITE into the leaf (the record of D) too, after the block WRITE ahead of it landed.
  HeldVerb read_b1(HeldVerb::At(VerbKind::kRead, b1), {});
  HeldVerb leaf_write(
      [leaf](const fabric::Verb& v) {
        return v.kind == VerbKind::kWrite && v.remote.node() == leaf.node() &&
               v.remote.offset() >= leaf.offset() && v.remote.offset() < leaf.offset() + kNodeBytes;
      },
      {});
  BothScripts scripts(read_b1, leaf_write);
  b.fabric->SetVerbScript(&scripts);

  const uint64_t retries_before = b.tree->Stats().retries;
  std::string got;
  Status looked;
  std::thread reader([&] { looked = b.tree->Lookup(*b.reader, k, &got); });
  ASSERT_TRUE(read_b1.WaitHeld()) << "the lookup never READ the value block";

  // K -> C: B1 is retired. The first leaf WRITE is this update's; let it through.
  std::thread update_c([&] { EXPECT_TRUE(b.tree->Update(*b.writer, k, Value('C')).ok()); });
  ASSERT_TRUE(leaf_write.WaitHeld());
  leaf_write.Release();
  update_c.join();
  // Past the grace period (twice the lease), B1 may be handed out again.
  std::this_thread::sleep_for(3 * lease);

  // K -> D takes B1; its leaf write is held, so K still maps to C.
  HeldVerb leaf_write_d(
      [leaf](const fabric::Verb& v) {
        return v.kind == VerbKind::kWrite && v.remote.node() == leaf.node() &&
               v.remote.offset() >= leaf.offset() && v.remote.offset() < leaf.offset() + kNodeBytes;
      },
      {});
  BothScripts scripts_d(read_b1, leaf_write_d);
  b.fabric->SetVerbScript(&scripts_d);
  std::thread update_d([&] { EXPECT_TRUE(b.tree->Update(*b.writer, k, Value('D')).ok()); });
  ASSERT_TRUE(leaf_write_d.WaitHeld());
  std::vector<std::byte> block(tree::value_block::kHeaderBytes + 100);
  ASSERT_TRUE(b.other->ep.Read(b1, block.data(), static_cast<uint32_t>(block.size())).ok());
  std::string in_b1;
  ASSERT_TRUE(tree::value_block::Decode(block.data(), static_cast<uint32_t>(block.size()),
                                        tree::BytesKV::Owner(k), 100, &in_b1))
      << "B1 does not hold a valid block of K: the race was not set up";
  ASSERT_EQ(in_b1, Value('D')) << "B1 was not reused for D";

  // The reader copies B1 - a valid block of K holding D - after its lease ran out.
  read_b1.Release();
  reader.join();
  ASSERT_TRUE(looked.ok()) << looked.ToString();
  EXPECT_EQ(got, Value('C')) << "the lookup answered a value (" << got.substr(0, 1)
                             << ") that was never K's in the index";
  EXPECT_GT(b.tree->Stats().retries, retries_before) << "the expired block READ was not read again";
  std::string now;
  ASSERT_TRUE(b.tree->Lookup(*b.other, k, &now).ok());
  EXPECT_EQ(now, Value('C'));

  leaf_write_d.Release();
  update_d.join();
  b.fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(b.tree->Lookup(*b.other, k, &now).ok());
  EXPECT_EQ(now, Value('D'));
  EXPECT_EQ(b.BlockOf(k), b1);
}

// A block is handed out again only after the grace period: an update right after another
// never takes the block the first one retired.
TEST(ValueBlockScriptedTear, ARetiredBlockIsNotReusedWithinTheGracePeriod) {
  Bed b = MakeBed(std::chrono::seconds(10));
  const std::string k = "key/K";
  ASSERT_TRUE(b.tree->Upsert(*b.writer, k, Value('A')).ok());
  const GlobalAddress first = b.BlockOf(k);
  std::vector<GlobalAddress> seen = {first};
  for (char c = 'B'; c < 'Z'; ++c) {
    ASSERT_TRUE(b.tree->Update(*b.writer, k, Value(c)).ok());
    const GlobalAddress now = b.BlockOf(k);
    for (GlobalAddress s : seen) ASSERT_NE(now, s) << "a block was reused within the grace period";
    seen.push_back(now);
    std::string v;
    ASSERT_TRUE(b.tree->Lookup(*b.reader, k, &v).ok());
    ASSERT_EQ(v, Value(c));
  }
}

}  // namespace
}  // namespace dmindex::testing
