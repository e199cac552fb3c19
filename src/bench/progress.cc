#include "bench/progress.h"

#include <algorithm>
#include <cstdio>

#include "common/runtime.h"

namespace dmindex::bench {

bool Progress::Due() {
  auto now = runtime::Now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return false;
  last_draw_ = now;
  return true;
}

void Progress::Draw(const std::string& text) {
  std::fprintf(stderr, "\r\033[K%s", text.c_str());  // \033[K: erase to the end of the line
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Log(const std::string& text) {
  if (log_every_s_ <= 0) return;
  const auto now = runtime::Now();
  if (last_log_ != std::chrono::steady_clock::time_point{} &&
      std::chrono::duration<double>(now - last_log_).count() < log_every_s_)
    return;
  if (last_log_ == std::chrono::steady_clock::time_point{}) {
    last_log_ = now;  // the first line after one interval, not at once
    return;
  }
  last_log_ = now;
  std::fprintf(stderr, "dmindex bench: %s\n", text.c_str());
  std::fflush(stderr);
}

void Progress::Bar(const std::string& label, double fraction, const std::string& detail) {
  if (!enabled_) {
    Log(label + " " + std::to_string(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 100)) + "%" +
        (detail.empty() ? "" : "  " + detail));
    return;
  }
  if (!Due()) return;
  constexpr int kWidth = 30;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar = label + " [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
  bar += std::to_string(static_cast<int>(fraction * 100)) + "%";
  Draw(detail.empty() ? bar : bar + "  " + detail);
}

void Progress::Spin(const std::string& label) {
  auto now = runtime::Now();
  if (label != spin_label_) spin_label_ = label, spin_start_ = now;
  if (!enabled_) {
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, " %.0f s", std::chrono::duration<double>(now - spin_start_).count());
    Log(label + elapsed);
    return;
  }
  if (!Due()) return;
  static constexpr char kFrames[] = {'|', '/', '-', '\\'};
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, " %.1fs",
                std::chrono::duration<double>(now - spin_start_).count());
  Draw(label + " " + kFrames[spin_++ % 4] + elapsed);
}

void Progress::Clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace dmindex::bench
