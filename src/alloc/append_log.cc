#include "alloc/append_log.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/retry.h"

namespace dmindex::alloc {
namespace {

constexpr uint64_t kMagic = 0x01676f6c2d786d64ull;  // "dmx-log" and format 1
constexpr uint32_t kMagicWord = 0, kBlockWord = 1, kLockWord = 2, kCountWord = 3;

uint64_t WordAt(const std::byte* image, uint32_t i) {
  uint64_t w;
  std::memcpy(&w, image + 8ull * i, 8);
  return w;
}

}  // namespace

Status AppendLog::Open(fabric::Endpoint& ep, NodeAllocator& allocator) {
  if (block_bytes_ == 0 || block_bytes_ % 64 != 0)
    return Status::InvalidArgument("append log: block size " + std::to_string(block_bytes_) +
                                   " is not a positive multiple of 64");
  uint64_t raw = 0;
  DMX_RETURN_IF_ERROR(ep.Read(dir_word_, &raw, 8));
  if (raw == 0) {  // no directory yet: write one completely, then try to publish it
    auto block = allocator.AllocateOn(ep, 0, kDirectoryBytes);
    if (!block.ok()) return block.status();
    std::vector<std::byte> image(kDirectoryBytes);
    const uint64_t header[] = {kMagic, block_bytes_};
    std::memcpy(image.data(), header, sizeof(header));
    DMX_RETURN_IF_ERROR(ep.Write(*block, image.data(), kDirectoryBytes));
    uint64_t old = 0;
    DMX_RETURN_IF_ERROR(ep.Cas(dir_word_, 0, block->raw(), &old));
    if (old != 0) allocator.Free(*block, kDirectoryBytes);  // another opener published first
    raw = old != 0 ? old : block->raw();
  }
  const GlobalAddress dir = GlobalAddress::FromRaw(raw);
  uint64_t header[2] = {};
  DMX_RETURN_IF_ERROR(ep.Read(dir, header, sizeof(header)));
  if (header[0] != kMagic)
    return Status::Corruption("append log directory " + dir.ToString() + " has no valid header");
  if (header[1] != block_bytes_)
    return Status::InvalidArgument("append log of " + std::to_string(header[1]) +
                                   "-byte blocks opened for " + std::to_string(block_bytes_) + "-byte blocks");
  directory_ = dir;
  return Status::Ok();
}

std::vector<AppendLog::Segment> AppendLog::Parse(const std::byte* image) const {
  std::vector<Segment> out;
  const uint64_t n = std::min<uint64_t>(WordAt(image, kCountWord), kMaxSegments);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t w = kHeaderWords + 3 * i;
    Segment s{GlobalAddress::FromRaw(WordAt(image, w)), WordAt(image, w + 1), WordAt(image, w + 2)};
    if (s.base.is_null() || s.capacity == 0) continue;  // record read before it landed
    s.used = std::min(s.used, s.capacity);
    out.push_back(s);
  }
  return out;
}

Status AppendLog::SyncLocked(fabric::Endpoint& ep) {
  std::vector<std::byte> image(kDirectoryBytes);
  DMX_RETURN_IF_ERROR(ep.Read(directory_, image.data(), kDirectoryBytes));
  const uint64_t n = std::min<uint64_t>(WordAt(image.data(), kCountWord), kMaxSegments);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t w = kHeaderWords + 3 * i;
    const GlobalAddress base = GlobalAddress::FromRaw(WordAt(image.data(), w));
    const uint64_t capacity = WordAt(image.data(), w + 2);
    if (base.is_null() || capacity == 0 || base.node() >= newest_.size()) continue;
    newest_[base.node()] = {true, i, base, capacity};
  }
  return Status::Ok();
}

Status AppendLog::GrowLocked(fabric::Endpoint& ep, NodeAllocator& allocator, uint16_t node) {
  // The directory lock serialises growers of every process; it is held for one chunk RPC.
  // Its word names our lease; without one, a tag whose epoch bits are 0 (never taken over).
  const uint64_t owner = lease_ != nullptr ? lease_->id().Pack() : uint64_t{1} << lease::HolderId::kBits;
  DMX_RETURN_IF_ERROR(LockDirectory(ep, owner));
  static const uint64_t kZero = 0;
  // An unlock after a failure swaps our own word back to 0 and nothing else: if our lease
  // ended meanwhile, a taker may hold the lock now, and a plain WRITE would release it.
  // One that cannot tell whether the word is still ours gives its lease up, so that a word
  // left naming it is taken over as a dead grower's (a live lease would keep it for good).
  auto unlock = [&](Status s) {
    uint64_t seen = 0;
    Status u = ep.Cas(Word(kLockWord), owner, 0, &seen);
    if (!u.ok() && lease_ != nullptr)
      u = lease_->GiveUp("the append log's directory lock " + Word(kLockWord).ToString() +
                         " may still name it: " + u.message());
    return s.ok() ? u : s;
  };
  // Under the lock the list does not change: another grower may have added a segment on
  // this node that still has room.
  std::vector<std::byte> image(kDirectoryBytes);
  if (Status s = ep.Read(directory_, image.data(), kDirectoryBytes); !s.ok()) return unlock(s);
  const uint64_t n = WordAt(image.data(), kCountWord);
  uint64_t tail = 0;
  for (uint32_t i = 0; i < n && i < kMaxSegments; ++i) {  // the node's newest record wins
    const uint32_t w = kHeaderWords + 3 * i;
    const GlobalAddress base = GlobalAddress::FromRaw(WordAt(image.data(), w));
    if (base.is_null() || base.node() != node) continue;
    newest_[node] = {true, i, base, WordAt(image.data(), w + 2)};
    tail = WordAt(image.data(), w + 1);
  }
  if (newest_[node].known && tail < newest_[node].capacity) return unlock(Status::Ok());
  if (n >= kMaxSegments)
    return unlock(Status::OutOfSpace("append log " + directory_.ToString() + " lists its maximum of " +
                                     std::to_string(kMaxSegments) + " segments"));
  // Segments double per memory node from kFirstSegmentBytes: a small index takes little of
  // the pool, a large one few directory records. A segment larger than the memory servers'
  // chunks cannot be cut from one: halve it until it can.
  uint32_t on_node = 0;
  for (uint32_t i = 0; i < n && i < kMaxSegments; ++i)
    on_node += GlobalAddress::FromRaw(WordAt(image.data(), kHeaderWords + 3 * i)).node() == node;
  uint64_t capacity = std::max<uint64_t>(
      1, (kFirstSegmentBytes << std::min(on_node, kMaxSegmentDoublings)) / block_bytes_);
  Result<GlobalAddress> segment = Status::InvalidArgument("no segment");
  for (;; capacity /= 2) {
    segment = allocator.AllocateOn(ep, node, static_cast<uint32_t>(capacity * block_bytes_));
    if (segment.ok() || !segment.status().IsInvalidArgument() || capacity == 1) break;
  }
  if (!segment.ok()) return unlock(segment.status());
  reserved_bytes_.fetch_add(capacity * block_bytes_, std::memory_order_relaxed);
  const uint64_t record[] = {segment->raw(), 0, capacity};
  const uint64_t count = n + 1;
  const uint32_t at = kHeaderWords + 3 * static_cast<uint32_t>(n);
  // Record, then the count that covers it, then the unlock: in this order (one round trip),
  // and only while our lease is live at the instant the batch goes out (fabric::PostGuard): a
  // grower that stalled here past its lease may have been taken over by one that listed its
  // own segment as record n since, which this batch would overwrite (and whose lock its
  // unlock would release). The WRITE of 0 is then safe: nobody took over a live lease.
  std::vector<fabric::Verb> batch{fabric::Verb::Write(Word(at), record, sizeof(record)),
                                  fabric::Verb::Write(Word(kCountWord), &count, 8),
                                  fabric::Verb::Write(Word(kLockWord), &kZero, 8)};
  Status s = lease_ != nullptr ? ep.Post(batch, fabric::Ordering::kInOrder, *lease_)
                               : ep.Post(batch, fabric::Ordering::kInOrder);
  if (!s.ok()) return unlock(s);
  newest_[node] = {true, static_cast<uint32_t>(n), *segment, capacity};
  return Status::Ok();
}

Status AppendLog::LockDirectory(fabric::Endpoint& ep, uint64_t owner) {
  RetryBudget budget(retry_limits::kNodeLockHeld, "lock the append log's directory");
  Backoff backoff(backoff::kLockHeld, "the append log's directory lock", Word(kLockWord));
  for (uint64_t failed = 1;; ++failed) {
    uint64_t old = 0;
    DMX_RETURN_IF_ERROR(ep.Cas(Word(kLockWord), 0, owner, &old));
    if (old == 0) return Status::Ok();
    // Every 16th failure: is the holder dead? Then the lock is ours with nothing to repair
    // (the header comment says why).
    const lease::HolderId holder = lease::HolderId::Unpack(old & ((uint64_t{1} << lease::HolderId::kBits) - 1));
    if (lease_ != nullptr && failed % 16 == 0 && holder.valid() && old >> lease::HolderId::kBits == 0) {
      auto fenced = observer_.FenceIfExpired(ep, holder);
      if (!fenced.ok()) return fenced.status();
      if (*fenced) {
        DMX_RETURN_IF_ERROR(lease_->CheckLive());
        uint64_t seen = 0;
        DMX_RETURN_IF_ERROR(ep.Cas(Word(kLockWord), old, owner, &seen));
        if (seen == old) return Status::Ok();
      }
    }
    if (!budget.Spend()) return budget.Exhausted(directory_.ToString());
    backoff.Pause();
  }
}

Result<GlobalAddress> AppendLog::Append(fabric::Endpoint& ep, NodeAllocator& allocator, uint16_t node) {
  if (node >= newest_.size()) return Status::InvalidArgument("no memory node " + std::to_string(node));
  std::lock_guard lock(mu_);
  // Each round either takes a block or adds a segment with room; another process can only
  // fill that segment by taking its blocks, which is progress too.
  RetryBudget budget(retry_limits::kTreeRestarts, "append a block to the log");
  for (;;) {
    if (!newest_[node].known) DMX_RETURN_IF_ERROR(SyncLocked(ep));
    const Newest seg = newest_[node];
    if (seg.known) {
      uint64_t old = 0;
      DMX_RETURN_IF_ERROR(ep.Faa(TailWord(seg.index), 1, &old));
      if (old < seg.capacity) {
        appended_bytes_.fetch_add(block_bytes_, std::memory_order_relaxed);
        return seg.base + old * block_bytes_;
      }
    }
    DMX_RETURN_IF_ERROR(GrowLocked(ep, allocator, node));
    if (!budget.Spend()) return budget.Exhausted("on memory node " + std::to_string(node));
  }
}

}  // namespace dmindex::alloc
