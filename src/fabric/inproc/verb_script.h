// Scripted tears: deterministic schedules for the in-process fabric.
//
// Random tearing (FaultOptions::tear) finds races by luck; a script reproduces one on purpose.
// A test installs a VerbScript (InProcFabric::SetVerbScript) and every READ and WRITE is first
// offered to it, on the thread that posted it. The script either passes the verb back (the
// fabric carries it out as configured) or carries out the copy itself, piece by piece, at the
// instants it chooses. That is enough for the races the tree's validation must survive:
//   * a READ that spans writes: copy part of a node, let the test run writes, copy the rest
//     (a reader that combines pieces from before and after them);
//   * a half-published node: land part of a WRITE (or none of it), let a reader look, then
//     land the rest;
//   * a writer that dies mid-WRITE: land part of it and fail the verb, the rest never lands.
// HeldVerb below is the script for one such pause; other schedules are other VerbScripts.
//
// Atomic verbs (CAS, FAA) cannot tear (single words); they are offered to RunAtomic, whose one
// fault is the one a real fabric shows for them: the verb lands and its completion is lost
// (the server died with the reply in flight), so the poster cannot know it landed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "common/runtime.h"
#include "fabric/verb.h"

namespace dmindex::fabric {

// The data movement of one READ or WRITE, handed to a script.
class VerbCopy {
 public:
  VerbCopy(const Verb& verb, std::byte* target) : verb_(verb), target_(target) {}
  const Verb& verb() const { return verb_; }
  // Moves bytes [from, to) of the verb (offsets from its start, clamped to its length) from
  // the pool to local memory (READ) or back (WRITE), word by word like every copy of the
  // fabric: aligned 8-byte words never tear.
  void Copy(uint64_t from, uint64_t to) const;

 private:
  const Verb& verb_;
  std::byte* const target_;
};

class VerbScript {
 public:
  enum class Outcome {
    kPass,  // not this script's verb: the fabric carries it out as usual
    kDone,  // the script copied what it meant to: the verb completes
    kFail,  // the verb fails (Unavailable) after whatever the script copied
  };
  enum class AtomicOutcome {
    kPass,       // carried out as usual
    kLostReply,  // carried out, then fails (Unavailable): its poster cannot tell it landed
    kNotLanded,  // fails (Unavailable) without landing: its poster died before posting it
  };
  virtual ~VerbScript() = default;
  // Called concurrently from every thread that posts a READ or WRITE.
  virtual Outcome Run(const VerbCopy& copy) = 0;
  // Called concurrently from every thread that posts a CAS or FAA.
  virtual AtomicOutcome RunAtomic(const Verb&) { return AtomicOutcome::kPass; }
  // Called with every batch before any of its verbs goes out (and before the post's guard is
  // asked, Endpoint::Post): a script may block here, as a post waits in the UCX fabric for a
  // memory server that is restarting.
  virtual void BeforePost(std::span<const Verb>) {}
};

// Holds one verb in the middle of its copy. The first READ or WRITE that `match` accepts
// gets the byte ranges `first` copied, then its thread blocks until the test calls Release
// (the rest is copied in address order and the verb completes) or Fail (the rest is never
// copied and the verb fails). Every other verb, and every verb after the held one, passes.
//
//   HeldVerb hold(HeldVerb::At(VerbKind::kRead, leaf), {{0, 64}});  // header only
//   fabric.SetVerbScript(&hold);
//   runtime::Thread reader(...);        // its READ of `leaf` stops after the header
//   ASSERT_TRUE(hold.WaitHeld());
//   ... writes through another endpoint ...
//   hold.Release();                 // the READ copies the rest of the node and returns
//   reader.join();
//   fabric.SetVerbScript(nullptr);  // before `hold` goes away
class HeldVerb final : public VerbScript {
 public:
  using Match = std::function<bool(const Verb&)>;
  struct Range {
    uint64_t from = 0;
    uint64_t to = 0;
  };

  HeldVerb(Match match, std::vector<Range> first);
  // Matches a verb of `kind` that starts at `remote`.
  static Match At(VerbKind kind, GlobalAddress remote);

  // Test side: waits until the verb is held; false if none was after `timeout`.
  bool WaitHeld(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Lets the held verb finish (or fail); a verb that is matched later is not held at all.
  // Idempotent, so a test can call it on every exit path.
  void Release();
  void Fail();

  Outcome Run(const VerbCopy& copy) override;

 private:
  enum class Phase { kArmed, kTaken, kHeld, kReleased, kFailed };
  void Finish(Phase end);

  const Match match_;
  const std::vector<Range> first_;
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  Phase phase_ = Phase::kArmed;
};

// Where the fabric keeps the installed script. A test's script usually lives on its stack and
// goes away right after the test removes it, while other threads (a design's background
// thread, a worker) may have picked it up for a verb a moment before: removing the script
// (Set(nullptr)) therefore returns only once no thread still runs a script installed before.
// Replacing one script by another does not wait: a test may swap scripts while a verb is held
// in the old one (it removes the last one when every held verb is released). A poster that
// finds no script pays one load; the count is taken only while a script is installed.
class ScriptSlot {
 public:
  class Borrowed {
   public:
    Borrowed(VerbScript* script, std::atomic<uint64_t>* users) : script_(script), users_(users) {}
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    ~Borrowed() {
      if (users_ != nullptr) users_->fetch_sub(1);
    }
    VerbScript* get() const { return script_; }

   private:
    VerbScript* const script_;
    std::atomic<uint64_t>* const users_;
  };

  Borrowed Borrow();
  void Set(VerbScript* script);

 private:
  std::atomic<VerbScript*> script_{nullptr};
  std::atomic<uint64_t> users_{0};  // posters that found a script and may be running it
};

}  // namespace dmindex::fabric
