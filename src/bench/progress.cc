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

void Progress::Bar(const std::string& label, double fraction, const std::string& detail) {
  if (!enabled_ || !Due()) return;
  constexpr int kWidth = 30;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar = label + " [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
  bar += std::to_string(static_cast<int>(fraction * 100)) + "%";
  Draw(detail.empty() ? bar : bar + "  " + detail);
}

void Progress::Spin(const std::string& label) {
  if (!enabled_) return;
  auto now = runtime::Now();
  if (label != spin_label_) spin_label_ = label, spin_start_ = now;
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
