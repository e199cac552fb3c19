// Verbs over TCP as dmindex messages (fabric/ucx/verb_messages.h), without a network: a
// batch encoded by the client side is carried out on a MemoryNode as the server does, and
// its results land in the client's buffers; a malformed batch is refused whole, before any
// of its verbs lands (a hostile or broken peer cannot half-apply a batch).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fabric/memory_node.h"
#include "fabric/pool_layout.h"
#include "fabric/ucx/verb_messages.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {
namespace {

class VerbMessagesTest : public ::testing::Test {
 protected:
  VerbMessagesTest() : pool_(kMinPoolBytes), node_(0, pool_.data(), pool_.size(), {}) {}

  // The first byte of the chunk area: free for the test (no chunk is handed out).
  GlobalAddress At(uint64_t plus) const { return GlobalAddress(0, kChunkAreaOffset + plus); }
  std::byte* Local(uint64_t plus) { return pool_.data() + kChunkAreaOffset + plus; }

  // Encodes `verbs` and carries them out on the node; results delivered into the verbs.
  Status RoundTrip(const std::vector<Verb>& verbs) {
    std::vector<const Verb*> batch;
    for (const Verb& v : verbs) batch.push_back(&v);
    const std::vector<std::byte> request = EncodeVerbs(batch);
    std::vector<std::byte> reply;
    DMX_RETURN_IF_ERROR(ExecuteVerbs(node_, static_cast<uint32_t>(batch.size()), request, &reply));
    return DeliverVerbResults(batch, reply);
  }

  std::vector<std::byte> pool_;
  MemoryNode node_;
};

TEST_F(VerbMessagesTest, ABatchLandsInOrderAndItsResultsComeBack) {
  const uint64_t seven = 7;
  uint64_t cas_old = 99, faa_old = 99, read_back = 0;
  const std::vector<Verb> verbs = {
      Verb::Write(At(0), &seven, 8),
      Verb::Cas(At(0), 7, 40, &cas_old),    // sees the WRITE before it
      Verb::Faa(At(0), 2, &faa_old),        // sees the CAS
      Verb::Read(At(0), &read_back, 8),     // sees all three
  };
  ASSERT_TRUE(RoundTrip(verbs).ok());
  EXPECT_EQ(cas_old, 7u);
  EXPECT_EQ(faa_old, 40u);
  EXPECT_EQ(read_back, 42u);
  uint64_t in_pool = 0;
  std::memcpy(&in_pool, Local(0), 8);
  EXPECT_EQ(in_pool, 42u);
}

TEST_F(VerbMessagesTest, AMalformedBatchIsRefusedBeforeAnyVerbLands) {
  const uint64_t one = 1;
  uint64_t old = 0;
  const std::vector<Verb> good = {Verb::Write(At(64), &one, 8)};
  std::vector<const Verb*> batch = {&good[0]};
  const std::vector<std::byte> request = EncodeVerbs(batch);
  std::vector<std::byte> reply;

  // Each defect comes after a valid WRITE, which must not land either.
  auto refused = [&](std::vector<Verb> tail) {
    std::vector<Verb> verbs = good;
    verbs.insert(verbs.end(), tail.begin(), tail.end());
    return RoundTrip(verbs);
  };
  Status outside = refused({Verb::Read(GlobalAddress(0, pool_.size() - 4), &old, 8)});
  EXPECT_TRUE(outside.IsInvalidArgument()) << outside.ToString();
  Status misaligned = refused({Verb::Cas(At(68), 0, 1, &old)});
  EXPECT_TRUE(misaligned.IsInvalidArgument()) << misaligned.ToString();
  // Fewer bytes than the records claim, and WRITE data that does not add up.
  EXPECT_TRUE(ExecuteVerbs(node_, 2, request, &reply).IsInvalidArgument());
  std::vector<std::byte> extra = request;
  extra.push_back(std::byte{0});
  EXPECT_TRUE(ExecuteVerbs(node_, 1, extra, &reply).IsInvalidArgument());
  // A verb kind no client sends.
  std::vector<std::byte> unknown = request;
  unknown[0] = std::byte{200};
  EXPECT_TRUE(ExecuteVerbs(node_, 1, unknown, &reply).IsInvalidArgument());
  EXPECT_TRUE(reply.empty());

  uint64_t in_pool = 5;
  std::memcpy(&in_pool, Local(64), 8);
  EXPECT_EQ(in_pool, 0u) << "a verb of a refused batch landed";
  // The same WRITE alone is fine.
  ASSERT_TRUE(ExecuteVerbs(node_, 1, request, &reply).ok());
  std::memcpy(&in_pool, Local(64), 8);
  EXPECT_EQ(in_pool, 1u);
}

TEST_F(VerbMessagesTest, AReplyOfTheWrongSizeIsCorruption) {
  uint64_t word = 0;
  const Verb read = Verb::Read(At(0), &word, 8);
  std::vector<const Verb*> batch = {&read};
  std::vector<std::byte> short_reply(4);
  EXPECT_TRUE(DeliverVerbResults(batch, short_reply).IsCorruption());
}

}  // namespace
}  // namespace dmindex::fabric::ucx
