#include "bench/interrupt.h"

#include <csignal>

namespace dmindex::bench {
namespace {

// A signal handler receives no context pointer, so the flag it raises must live at namespace
// scope; it is private to this file and reached only through ScopedInterruptHandler.
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set from a signal handler");

struct sigaction previous_action;

extern "C" void OnInterrupt(int) { interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

ScopedInterruptHandler::ScopedInterruptHandler() {
  interrupted.store(false);
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second Ctrl-C gets the default: terminate
  sigaction(SIGINT, &action, &previous_action);
}

ScopedInterruptHandler::~ScopedInterruptHandler() { sigaction(SIGINT, &previous_action, nullptr); }

const std::atomic<bool>& ScopedInterruptHandler::flag() const { return interrupted; }

}  // namespace dmindex::bench
