// The append log's directory lock under leases (alloc/append_log.h): a grower whose lease
// ended while it held the lock - taken over by another process that grew the log meanwhile -
// writes nothing when it comes back, so the taker's segment record stands.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "alloc/append_log.h"
#include "alloc/node_allocator.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "lease/lease.h"

namespace dmindex {
namespace {

using fabric::VerbCopy;
using fabric::VerbScript;

constexpr uint32_t kBlockBytes = 256;

// Runs `stall` once, on the thread posting the first batch that writes `count_word` (a
// grower's [record, count, unlock]), before that batch goes out and before its guard is asked:
// the grower stalled right before its last round trip.
class StallBeforeRecord final : public VerbScript {
 public:
  StallBeforeRecord(GlobalAddress count_word, std::function<void()> stall)
      : count_word_(count_word), stall_(std::move(stall)) {}
  Outcome Run(const VerbCopy&) override { return Outcome::kPass; }
  void BeforePost(std::span<const fabric::Verb> verbs) override {
    bool writes_count = false;
    for (const fabric::Verb& v : verbs)
      writes_count |= v.kind == fabric::VerbKind::kWrite && v.remote == count_word_;
    if (writes_count && !fired_.exchange(true)) stall_();
  }

 private:
  const GlobalAddress count_word_;
  const std::function<void()> stall_;
  std::atomic<bool> fired_{false};
};

struct Process {
  std::unique_ptr<lease::Lease> lease;
  std::unique_ptr<fabric::Endpoint> ep;
  alloc::NodeAllocator allocator{1};
  std::unique_ptr<alloc::AppendLog> log;
};

TEST(AppendLogTakeover, AGrowerWhoseLeaseEndedBeforeItsLastPostWritesNothing) {
  std::atomic<int64_t> now_ms{1'000'000};
  const lease::ClockFn clock = [&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load())); };
  lease::ScopedTestClock scoped(clock);
  fabric::InProcOptions fo;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  auto fabric = std::move(fabric::InProcFabric::Create(fo)).value();

  auto setup_ep = std::move(fabric->Connect()).value();
  alloc::NodeAllocator setup_allocator(1);
  auto dir_word = setup_allocator.AllocateOn(*setup_ep, 0, 64);  // a zeroed word: no directory yet
  ASSERT_TRUE(dir_word.ok()) << dir_word.status().ToString();

  lease::LeaseOptions lo;
  lo.renew_in_background = false;
  lo.clock = clock;
  Process grower, taker;
  for (Process* p : {&grower, &taker}) {
    p->lease = std::move(lease::Lease::Claim(*fabric, lo)).value();
    p->ep = std::move(fabric->Connect()).value();
    p->log = std::make_unique<alloc::AppendLog>(*dir_word, kBlockBytes, 1);
    ASSERT_TRUE(p->log->Open(*p->ep, p->allocator).ok());
    p->log->HoldUnder(p->lease.get());
  }
  const GlobalAddress directory = grower.log->directory();

  // While the grower stalls, holding the directory lock with a segment cut for it: its lease
  // runs out (an observer watched its slot stand still past the takeover wait, then fenced
  // it), and the taker appends - taking the dead grower's lock over and growing the log.
  Result<GlobalAddress> taker_block = Status::Aborted("the taker never ran");
  StallBeforeRecord stall(directory + 8 * 3, [&] {
    auto observer_ep = std::move(fabric->Connect()).value();
    lease::LeaseObserver observer;
    ASSERT_TRUE(observer.FenceIfExpired(*observer_ep, grower.lease->id()).ok());
    now_ms += 10'000;
    auto fenced = observer.FenceIfExpired(*observer_ep, grower.lease->id());
    ASSERT_TRUE(fenced.ok() && *fenced);
    std::thread t([&] { taker_block = taker.log->Append(*taker.ep, taker.allocator, 0); });
    t.join();
  });
  fabric->SetVerbScript(&stall);
  const Result<GlobalAddress> grower_block = grower.log->Append(*grower.ep, grower.allocator, 0);
  fabric->SetVerbScript(nullptr);

  ASSERT_TRUE(taker_block.ok()) << taker_block.status().ToString();
  EXPECT_FALSE(grower_block.ok()) << "a grower whose lease was fenced appended at " << grower_block->ToString();
  // The directory lists the taker's segment, holding the block it was handed, and is unlocked.
  std::vector<std::byte> image(alloc::AppendLog::kDirectoryBytes);
  ASSERT_TRUE(setup_ep->Read(directory, image.data(), image.size()).ok());
  const auto segments = grower.log->Parse(image.data());
  ASSERT_EQ(segments.size(), 1u);
  const auto& s = segments[0];
  EXPECT_TRUE(taker_block->node() == s.base.node() && taker_block->offset() >= s.base.offset() &&
              taker_block->offset() < s.base.offset() + s.capacity * kBlockBytes)
      << "the taker's block " << taker_block->ToString() << " is not in the listed segment at "
      << s.base.ToString() << ": the fenced grower's record replaced the taker's";
  uint64_t lock_word = 1;
  ASSERT_TRUE(setup_ep->Read(directory + 8 * 2, &lock_word, 8).ok());
  EXPECT_EQ(lock_word, 0u);
}

}  // namespace
}  // namespace dmindex
