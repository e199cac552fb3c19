// Ctrl-C for the bench driver: the first SIGINT raises a flag that the runner polls (the run
// in progress stops at an operation boundary, what was measured is reported); the handler then
// reverts to the default, so a second Ctrl-C kills the process as usual.
#pragma once

#include <atomic>

namespace dmindex::bench {

class ScopedInterruptHandler {
 public:
  ScopedInterruptHandler();
  ~ScopedInterruptHandler();
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;

  // Raised by SIGINT while this handler is installed.
  const std::atomic<bool>& flag() const;
};

}  // namespace dmindex::bench
