#include "tree/node_lock.h"

#include <cstring>
#include <vector>

#include "common/retry.h"
#include "dmindex/options.h"
#include "tree/lock_table.h"
#include "tree/redo_log.h"

namespace dmindex::tree {
namespace {

constexpr uint64_t kUnlocked = 0;
// A waiter asks the lease table about the holder once per this many failed CASes: a READ of
// node 0 per few milliseconds of waiting, nothing while locks change hands quickly.
constexpr uint64_t kHolderCheckEvery = 16;

// A taker needs a lease of the table: it must be live itself, and it asks the table (node 0)
// about the holder. A memory server's own tree has neither (Lease::OfMemoryServer): it waits.
bool CanTakeOver(const LockOwner& owner) { return owner.lease != nullptr && !owner.lease->memory_server(); }

// A live process never keeps a lock word naming its lease after the operation that took it
// has failed: nobody takes over a holder whose lease renews, so the process's own later
// writes of that node would wait on it forever (docs/SYNCHRONIZATION.md, "A live writer never
// keeps its own word"). So a verb on our own word that failed with Unavailable (its memory
// server went away and is not back yet) is asked again until it answers - while the word can
// only be released by us: while our lease is live (a lost lease leaves the word to a taker,
// below), and until the fabric gives the pool up (kOwnLockWordAnswer, `answers`: one budget
// for every round of one release). A memory server's own tree asks once: its verbs reach its
// own pool and fail only when it died, and its successor frees its words. A fabric that gave
// a pool up (Endpoint::GaveUpAPool) fails every verb from then on: no answer will come.
template <typename Ask>
Status AskOurWord(fabric::Endpoint& ep, const LockOwner& owner, GlobalAddress word, RetryBudget& answers,
                  Ask ask) {
  Backoff pause(backoff::kPoll, "our lock word's memory server", word);
  for (;;) {
    const Status s = ask();
    if (!s.IsUnavailable() || ep.GaveUpAPool() || (owner.lease != nullptr && owner.lease->memory_server()))
      return s;
    if (owner.lease != nullptr) DMX_RETURN_IF_ERROR(owner.lease->CheckLive());
    if (!answers.Spend()) return answers.Exhausted(word.ToString());
    pause.Pause();
  }
}

// `word` may still name `owner` and cannot be released now (`why`): the lease is given up
// (fenced for good, never renewed again), so that the word is taken over after TakeoverWait
// as a dead process's and its record replayed; the index opening must be reopened. Without
// a lease (or a memory server's) nothing can take the word over: it stays. A fabric that gave
// a pool up fails this process's every verb, renewals included: the lease runs out by itself.
Status LeaveToTakeover(fabric::Endpoint& ep, const LockOwner& owner, GlobalAddress word, const Status& why) {
  if (owner.lease == nullptr || owner.lease->memory_server() || ep.GaveUpAPool()) return why;
  return owner.lease->GiveUp("lock word " + word.ToString() + " may still name it: " + why.message());
}

// Lets go of `word` if it holds `mine` (a CAS of ours that may have landed, its reply lost),
// putting `free` back: by a CAS expecting our word, asked until it answers. A lock-table word
// is ours as owner.word and free as 0; a trailer ours as EncodeTrailerLock(owner.word) and free
// as the version it held.
Status ReleaseIfOurs(fabric::Endpoint& ep, GlobalAddress word, const LockOwner& owner, uint64_t mine,
                     uint64_t free) {
  if (owner.word == kUnlocked) return Status::Ok();
  RetryBudget answers(retry_limits::kOwnLockWordAnswer, "let go of our own lock word");
  uint64_t ignored = 0;
  const Status s = AskOurWord(ep, owner, word, answers, [&] { return ep.Cas(word, mine, free, &ignored); });
  return s.ok() ? s : LeaveToTakeover(ep, owner, word, s);
}

// What the word of `held` holds while it is held.
uint64_t HeldValue(const NodeLock::Held& held) {
  return held.trailer ? EncodeTrailerLock(held.owner.word) : held.owner.word;
}

}  // namespace

Status NodeLock::LockAndRead(fabric::Endpoint& ep, LocalLockTable* local, LockOwner owner,
                             GlobalAddress node, void* buf, uint32_t len, Held* held,
                             uint64_t* cas_failures) const {
  held->word = WordFor(node);
  held->node = node;
  held->node_bytes = len;
  held->owner = owner;
  held->rename = false;
  held->local = local;
  if (local != nullptr && local->Acquire(held->word)) {
    // Handed over: the global lock is already ours and the previous owner's writes landed.
    // The word still names the thread that took it: our first write renames it (redo_log.h).
    held->held = true;
    held->rename = owner.lease != nullptr;
    Status s = ep.Read(node, buf, len);
    if (!s.ok()) (void)Unlock(ep, held);
    return s;
  }
  Status s = Acquire(ep, node, buf, len, held, cas_failures);
  if (!s.ok() && local != nullptr) local->Release(held->word, false);
  return s;
}

Status NodeLock::TryLockAndRead(fabric::Endpoint& ep, LockOwner owner, GlobalAddress node,
                                void* buf, uint32_t len, Held* held, uint64_t* holder) const {
  held->word = WordFor(node);
  held->node = node;
  held->node_bytes = len;
  held->owner = owner;
  held->rename = false;
  held->local = nullptr;
  return TryOnce(ep, node, buf, len, held, holder);
}

Status NodeLock::TryOnce(fabric::Endpoint& ep, GlobalAddress node, void* buf, uint32_t len,
                         Held* held, uint64_t* holder) const {
  uint64_t old = ~kUnlocked;
  const uint64_t owner = held->owner.word;
  // The READ lands after the CAS (in-order batch); it is only used if the CAS won.
  Status cas = combine_ ? ep.Post({fabric::Verb::Cas(held->word, kUnlocked, owner, &old),
                                   fabric::Verb::Read(node, buf, len)},
                                  fabric::Ordering::kInOrder)
                        : ep.Cas(held->word, kUnlocked, owner, &old);
  // The CAS may have landed with its reply lost: let go of the word if it names us. By a CAS
  // expecting our word, not a WRITE after a READ: our lease may have run out over the outage
  // and a taker CASed the word between the two (docs/SYNCHRONIZATION.md, "A write posted again").
  if (cas.IsUnavailable()) {
    const Status released = ReleaseIfOurs(ep, held->word, held->owner, held->owner.word, kUnlocked);
    return released.ok() ? cas : released;
  }
  DMX_RETURN_IF_ERROR(cas);
  *holder = old;
  if (old != kUnlocked) return Status::Ok();
  held->held = true;
  if (combine_) return Status::Ok();
  Status s = ep.Read(node, buf, len);
  if (!s.ok()) (void)Unlock(ep, held);
  return s;
}

Status NodeLock::TakeOverIfDead(fabric::Endpoint& ep, LockOwner owner, GlobalAddress node, void* buf,
                                uint32_t len, uint64_t holder, Held* held, bool* took) const {
  *took = false;
  if (!CanTakeOver(owner) || holder == kUnlocked) return Status::Ok();
  held->word = WordFor(node);
  held->node = node;
  held->node_bytes = len;
  held->owner = owner;
  held->rename = false;
  bool won = false;
  Status s = TakeOver(ep, owner, held->word, holder, owner.word, holder, node, buf, len, &won);
  held->held = won;
  if (!s.ok()) {
    if (won) (void)Unlock(ep, held);
    return s;
  }
  *took = won;
  return Status::Ok();
}

Status NodeLock::TakeOverTrailerIfDead(fabric::Endpoint& ep, LockOwner owner, GlobalAddress node,
                                       GlobalAddress trailer_addr, void* buf, uint32_t len, uint64_t trailer,
                                       bool* took) const {
  *took = false;
  const uint64_t dead = TrailerLockWord(trailer);
  if (!CanTakeOver(owner) || dead == kUnlocked) return Status::Ok();
  return TakeOver(ep, owner, trailer_addr, trailer, EncodeTrailerLock(owner.word), dead, node, buf, len, took);
}

Status NodeLock::TakeOver(fabric::Endpoint& ep, LockOwner owner, GlobalAddress word, uint64_t seen,
                          uint64_t mine, uint64_t dead, GlobalAddress node, void* buf, uint32_t len,
                          bool* took) const {
  *took = false;
  auto fenced = observer_.FenceIfExpired(ep, LockWordHolder(dead));
  if (!fenced.ok()) return fenced.status();
  if (!*fenced) return Status::Ok();
  // The holder can never write again (its lease is revoked or gone). We write next, so we
  // must be live ourselves.
  DMX_RETURN_IF_ERROR(owner.lease->CheckLive());
  // A trailer lock holds our word shifted (EncodeTrailerLock); a lock-table word holds it as is.
  const bool trailer = mine != owner.word;
  // The dead holder's record becomes ours in the batch of the CAS, ahead of it: whenever the
  // word names us, the block it names holds the write still to finish, so a taker of ours
  // (we may die in the middle of the replay) finishes it too (docs/LOCK_TAKEOVER.md, "A taker
  // that dies"). The dead holder's block is never written: it stays whole for whoever takes
  // the word over if our CAS does not land. The record may be of any index's node (the word
  // is shared): read up to the largest node, and carried in a large block of ours if it is
  // larger than our own block (`len`, our node size, is its payload).
  FoundRecord found;
  DMX_RETURN_IF_ERROR(ReadRedoRecord(ep, dead, word, kMaxNodeBytes, &found));
  LockOwner taker = owner;  // the word our CAS writes names taker's block
  if (found.whole && found.payload.size() > len) {
    if (owner.large_blocks == nullptr) return Status::Ok();  // not ours to carry: left as it is
    auto large = owner.large_blocks->Get(word.node(), static_cast<uint32_t>(found.payload.size()));
    if (!large.ok()) return large.status();
    taker.word = EncodeLockWord(owner.lease->id(), *large);
  }
  const uint64_t taken = trailer ? EncodeTrailerLock(taker.word) : taker.word;
  std::vector<fabric::Verb> take, finish;
  const GlobalAddress block = LockWordRedoBlock(taker.word, word.node());
  if (found.whole) {
    if (block.is_null())
      return Status::InvalidArgument("a taker of lock word " + word.ToString() +
                                     " names no redo block to carry its dead holder's record");
    AdoptRedoRecord(&found, block, taker.word, &take, &finish);
  }
  const bool adopted = !take.empty();
  uint64_t old = kUnlocked;
  take.push_back(fabric::Verb::Cas(word, seen, taken, &old));
  Status cas = ep.Post(take, fabric::Ordering::kInOrder, *owner.lease);
  // Landed with its reply lost, or not: let go of it by a CAS back to the dead word (its
  // record, untouched, is still there for the next taker). A word that may still name us
  // is left to a taker, our copy with it.
  if (cas.IsUnavailable()) DMX_RETURN_IF_ERROR(ReleaseIfOurs(ep, word, taker, taken, seen));
  if (!cas.ok() || old != seen) {
    // Released meanwhile, another waiter took it over, or the batch failed: our copy must not
    // stay in our block as a record of a holding of this word that never was (were we to take
    // the word later and die before our first record, a taker would replay it over newer
    // writes). If it cannot be cleared, we never hold a word again: the lease is given up.
    if (adopted) {
      static const uint64_t kNone = 0;
      if (Status forget = ep.Write(block, &kNone, 8); !forget.ok())
        return LeaveToTakeover(ep, owner, word, forget);
    }
    return cas;
  }
  *took = true;
  takeovers_.fetch_add(1, std::memory_order_relaxed);
  if (adopted) {
    // A locked write like any other: posted while our lease is live, again while the word
    // names us; if it cannot be finished the word keeps naming us, with the record, and our
    // lease is given up so that the next taker finishes it. Never released over a torn node.
    const Held as_taker{word, node, len, taker, false, nullptr, trailer, true};
    Status replay = PostHolding(ep, as_taker, finish);
    if (replay.IsUnavailable()) replay = PostAgainWhileOurs(ep, as_taker, finish, replay);
    if (replay.ok() && taker.word != owner.word) replay = BackToOwnBlock(ep, taker, word, taken, mine);
    if (!replay.ok()) {
      *took = false;
      return LeaveToTakeover(ep, owner, word, replay);
    }
    repairs_.fetch_add(1, std::memory_order_relaxed);
  }
  // The node is whole now. A lock-table word can be released without this READ (the caller
  // does on an error); a trailer is released by writing the image's version, which needs it.
  RetryBudget answers(retry_limits::kOwnLockWordAnswer, "read the node taken over");
  const Status read = AskOurWord(ep, owner, word, answers, [&] { return ep.Read(node, buf, len); });
  if (!read.ok() && trailer) {
    *took = false;
    return LeaveToTakeover(ep, owner, word, read);
  }
  return read;
}

Status NodeLock::BackToOwnBlock(fabric::Endpoint& ep, const LockOwner& taker, GlobalAddress word,
                                uint64_t taken, uint64_t mine) const {
  // The large block's record is cleared (the node is whole), so whichever block the word names
  // holds no write in flight: a CAS from the large one to our own, asked until it answers. Our
  // writes from now on record in our own block, which the word must name before the first.
  RetryBudget answers(retry_limits::kOwnLockWordAnswer, "name our own redo block in a word taken over");
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(AskOurWord(ep, taker, word, answers, [&] { return ep.Cas(word, taken, mine, &old); }));
  // `mine`: an earlier CAS of ours landed and its reply was lost (AskOurWord asked again).
  if (old == taken || old == mine) return Status::Ok();
  return Status::Unavailable("lock word " + word.ToString() + " changed under its taker (" +
                             std::to_string(old) + ")");
}

Status NodeLock::Acquire(fabric::Endpoint& ep, GlobalAddress node, void* buf, uint32_t len, Held* held,
                         uint64_t* cas_failures) const {
  // A holder whose lease expired is taken over; one that holds no lease (or a live one that
  // never lets go: a bug) is reported after the limit instead of waited on forever. The
  // backoff (backoff::kLockHeld) keeps waiting threads off the holder's CPU and off the
  // memory node's NIC.
  RetryBudget budget(retry_limits::kNodeLockHeld, "lock node");
  Backoff backoff(backoff::kLockHeld, "the node lock", held->word);
  for (uint64_t failed = 1;; ++failed) {
    uint64_t holder = 0;
    DMX_RETURN_IF_ERROR(TryOnce(ep, node, buf, len, held, &holder));
    if (held->held) return Status::Ok();
    ++*cas_failures;
    if (failed % kHolderCheckEvery == 0) {
      // Our own lease's word: a live process releases its words, so it is another thread's
      // of ours - or one this process gave up (LeaveToTakeover): then stop, fenced, at once.
      if (held->owner.lease != nullptr && LockWordHolder(holder) == held->owner.lease->id())
        DMX_RETURN_IF_ERROR(held->owner.lease->CheckLive());
      bool took = false;
      DMX_RETURN_IF_ERROR(TakeOverIfDead(ep, held->owner, node, buf, len, holder, held, &took));
      if (took) return Status::Ok();
    }
    if (!budget.Spend())
      return budget.Exhausted(node.ToString() + " (lock word " + held->word.ToString() +
                              ", held by owner " + std::to_string(holder) + ")");
    backoff.Pause();
  }
}

Status NodeLock::PlanWrites(const Held& held, std::span<fabric::Verb> writes, bool unlock,
                            uint64_t (&header)[8], std::vector<fabric::Verb>* verbs) const {
  static const uint64_t kZero = kUnlocked;
  RedoRecord redo;
  if (held.owner.lease != nullptr && !writes.empty()) {
    const GlobalAddress block = LockWordRedoBlock(held.owner.word, held.word.node());
    DMX_RETURN_IF_ERROR(BuildRedoRecord(block, held.owner.word, held.word, held.node, held.node_bytes,
                                        writes, header, &redo));
  }
  bool recorded = redo.empty();
  for (const fabric::Verb& w : writes) {
    // Just before the first piece of the node: a fresh sibling on another memory node keeps
    // its own round trip, the record shares the node's.
    if (!recorded && w.remote.node() == held.node.node() && w.remote.offset() >= held.node.offset() &&
        w.remote.offset() < held.node.offset() + held.node_bytes) {
      if (held.rename) verbs->push_back(fabric::Verb::Write(held.word, &held.owner.word, 8));
      verbs->insert(verbs->end(), redo.record.begin(), redo.record.end());
      recorded = true;
    }
    verbs->push_back(w);
  }
  if (!redo.empty()) verbs->push_back(redo.clear);
  if (unlock) verbs->push_back(fabric::Verb::Write(held.word, &kZero, 8));
  return Status::Ok();
}

Status NodeLock::WriteAndUnlock(fabric::Endpoint& ep, Held* held,
                                std::span<fabric::Verb> writes) const {
  return PostAndRelease(ep, held, writes, {});
}

Status NodeLock::PostAndRelease(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                                std::span<const fabric::Verb> tail) const {
  const bool hand_over = held->local != nullptr && held->local->ShouldHandOver(held->word);
  Status live;
  if (held->owner.lease != nullptr) live = held->owner.lease->CheckLive();
  Status s = live;
  std::vector<fabric::Verb> verbs;
  uint64_t header[8];
  // A trailer is released by the caller's tail (a version), never by a WRITE of 0.
  if (s.ok()) s = PlanWrites(*held, writes, !hand_over && !held->trailer, header, &verbs);
  verbs.insert(verbs.end(), tail.begin(), tail.end());
  // Not live (or a write that cannot be recorded): nothing is written and the word stays
  // held; a live process takes it over after our lease and finds no record to replay. A lease
  // that could not be shown live (its renewal did not reach node 0: Unavailable) may renew
  // later with the word still naming it, so it is given up (LeaveToTakeover).
  // Only a batch that was posted goes again: a first CheckLive that failed (Unavailable too)
  // left `verbs` without the writes, and posting that tail alone would answer Ok for writes
  // never made.
  if (s.ok()) {
    s = PostHolding(ep, *held, verbs);
    if (s.IsUnavailable()) s = PostAgainWhileOurs(ep, *held, verbs, s);
  } else if (!live.ok()) {
    s = LeaveToTakeover(ep, held->owner, held->word, live);
  }
  held->held = false;
  if (held->local != nullptr) held->local->Release(held->word, hand_over && s.ok());
  return s;
}

Status NodeLock::WriteAndUnlockPosted(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                                      Posted* posted) const {
  if (posted->in_flight()) {
    if (Status reaped = posted->lock->ReapPosted(ep, posted); !reaped.ok()) {
      (void)Unlock(ep, held);  // ours is untouched: released as on any error
      return reaped;
    }
  }
  bool one_batch = combine_ && !held->trailer;
  for (const fabric::Verb& w : writes) one_batch = one_batch && w.remote.node() == held->word.node();
  if (!one_batch) return WriteAndUnlock(ep, held, writes);
  return PostReleaseUnwaited(ep, held, writes, posted);
}

Status NodeLock::PostReleaseUnwaited(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                                     Posted* posted) const {
  Status s;
  if (held->owner.lease != nullptr) s = held->owner.lease->CheckLive();
  if (!s.ok()) return PostAndRelease(ep, held, writes, {});  // its not-live path, word left to a taker
  // The writes' sources are the thread's node buffers, which its next operation reuses
  // before the batch is reaped: the batch writes from copies of its own.
  size_t bytes = 0;
  for (const fabric::Verb& w : writes) bytes += w.length;
  posted->sources.resize(bytes);
  std::vector<fabric::Verb> copies(writes.begin(), writes.end());
  size_t at = 0;
  for (fabric::Verb& w : copies) {
    std::memcpy(posted->sources.data() + at, w.local, w.length);
    w.local = posted->sources.data() + at;
    at += w.length;
  }
  posted->verbs.clear();
  // A write that cannot be recorded, or a batch refused with nothing posted: the waited
  // path, which handles both.
  s = PlanWrites(*held, copies, true, posted->header, &posted->verbs);
  if (s.ok()) s = ep.PostUnwaited(posted->verbs, fabric::Ordering::kInOrder, held->owner.lease);
  if (!s.ok()) return PostAndRelease(ep, held, writes, {});
  posted->held = *held;
  posted->lock = this;
  // The word is unlocked by the batch itself, never handed over: a thread of ours waiting
  // locally goes to the word, which frees only once our batch has landed.
  held->held = false;
  if (held->local != nullptr) held->local->Release(held->word, false);
  // Known failed already: posted again now, as a waited batch's failure is - a session that
  // goes idle after this insert must not keep the parent's word until its next operation.
  if (ep.unwaited_failed()) return ReapPosted(ep, posted);
  return Status::Ok();
}

Status NodeLock::ReapPosted(fabric::Endpoint& ep, Posted* posted) const {
  if (!posted->in_flight()) return Status::Ok();
  Status s = ep.Reap();
  if (s.IsUnavailable()) s = PostAgainWhileOurs(ep, posted->held, posted->verbs, s);
  posted->lock = nullptr;
  return s;
}

Status NodeLock::WriteUnlockAndTryLock(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                                       LocalLockTable* local, LockOwner owner, GlobalAddress next, void* buf,
                                       uint32_t len, Held* next_held, const fabric::Verb* trailer_release) const {
  next_held->held = false;
  const GlobalAddress next_word = WordFor(next);
  bool handed = false;  // the compute node holds next's global lock already (hocl hand-over)
  if (!combine_ || next.node() != held->node.node() || next_word == held->word ||
      (local != nullptr && !local->TryAcquire(next_word, &handed)))
    return WriteAndRelease(ep, held, writes, trailer_release);
  *next_held = Held{next_word, next, len, owner, handed && owner.lease != nullptr, local, false, false};
  // Behind held's unlock: the READ lands after the CAS and is used only if the CAS won. A
  // batch posted twice (PostAndRelease) finds our own word the second time.
  uint64_t old = kUnlocked;
  fabric::Verb tail[3];
  uint32_t n = 0;
  if (held->trailer) tail[n++] = *trailer_release;
  if (!handed) tail[n++] = fabric::Verb::Cas(next_word, kUnlocked, owner.word, &old);
  tail[n++] = fabric::Verb::Read(next, buf, len);
  Status s = PostAndRelease(ep, held, writes, {tail, n});
  const bool won = s.ok() && (handed || old == kUnlocked || old == owner.word);
  // Landed, but the batch failed: not kept.
  if (!s.ok() && !handed) {
    if (Status released = ReleaseIfOurs(ep, next_word, owner, owner.word, kUnlocked); !released.ok()) s = released;
  }
  if (!won && local != nullptr) local->Release(next_word, handed);
  next_held->held = won;
  return s;
}

Status NodeLock::PostAgainWhileOurs(fabric::Endpoint& ep, const Held& held, std::span<fabric::Verb> verbs,
                                    Status failed) const {
  // In flight when the memory server went away and it came back with its pool: a word that
  // still names us means nobody took the node since (owner tags are random per session,
  // tree_state.h: a word holding ours was written by us), so the same verbs go again - as a
  // new write under the lock, after a new CheckLive. The READ of the word rode through the
  // outage (docs/SYNCHRONIZATION.md, "A write posted again"): our lease may have run out
  // meanwhile and been revoked by a taker that has not CASed the word yet.
  if (held.owner.word == kUnlocked) return failed;
  RetryBudget answers(retry_limits::kOwnLockWordAnswer, "read back our own lock word");
  Status s = failed;
  while (s.IsUnavailable()) {
    uint64_t now = kUnlocked;
    const Status read =
        AskOurWord(ep, held.owner, held.word, answers, [&] { return ep.Read(held.word, &now, 8); });
    if (!read.ok()) return LeaveToTakeover(ep, held.owner, held.word, read);
    // Handed over locally (rename): the word may still name the thread before us - our lease,
    // its redo block; the local table keeps every other thread of ours off it until we release.
    const bool ours = now == HeldValue(held) ||
                      (held.rename && held.owner.lease != nullptr &&
                       LockWordHolder(now) == held.owner.lease->id());
    if (!ours) return s;  // released by the batch, or taken over since
    if (held.owner.lease != nullptr) {
      if (Status live = held.owner.lease->CheckLive(); !live.ok())
        return LeaveToTakeover(ep, held.owner, held.word, live);
    }
    s = PostHolding(ep, held, verbs);
  }
  return s;
}

Status NodeLock::PostHolding(fabric::Endpoint& ep, const Held& held, std::span<fabric::Verb> verbs) const {
  lease::Lease* lease = held.owner.lease;
  if (!held.trailer) return PostInOrder(ep, lease, verbs);
  return lease != nullptr ? ep.Post(verbs, fabric::Ordering::kInOrder, *lease) : ep.Post(verbs, fabric::Ordering::kInOrder);
}

Status NodeLock::TryTrailerLock(fabric::Endpoint& ep, LockOwner owner, GlobalAddress trailer_addr, uint64_t version,
                                GlobalAddress node, void* buf, uint32_t len, uint64_t* seen) const {
  const uint64_t mine = EncodeTrailerLock(owner.word);
  *seen = ~version;
  const Status cas = len == 0 ? ep.Cas(trailer_addr, version, mine, seen)
                              : ep.Post({fabric::Verb::Cas(trailer_addr, version, mine, seen),
                                         fabric::Verb::Read(node, buf, len)},
                                        fabric::Ordering::kInOrder);
  // As in TryOnce: landed with its reply lost, or not; let go of it by a CAS expecting ours.
  if (cas.IsUnavailable()) {
    const Status released = ReleaseIfOurs(ep, trailer_addr, owner, mine, version);
    return released.ok() ? cas : released;
  }
  return cas;
}

Status NodeLock::WriteAndReleaseTrailer(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                                        const fabric::Verb& release) const {
  return PostAndRelease(ep, held, writes, {&release, 1});
}

Status NodeLock::PostInOrder(fabric::Endpoint& ep, lease::Lease* lease, std::span<fabric::Verb> verbs) const {
  size_t begin = 0;
  while (begin < verbs.size()) {
    size_t end = begin + 1;
    if (combine_)
      while (end < verbs.size() && verbs[end].remote.node() == verbs[begin].remote.node()) ++end;
    const std::span<fabric::Verb> batch = verbs.subspan(begin, end - begin);
    DMX_RETURN_IF_ERROR(lease != nullptr ? ep.Post(batch, fabric::Ordering::kInOrder, *lease)
                                         : ep.Post(batch, fabric::Ordering::kInOrder));
    begin = end;
  }
  return Status::Ok();
}

}  // namespace dmindex::tree
