// A one-line progress display on stderr for the bulk load and the runs. It draws only when
// enabled (the driver enables it when stderr is a terminal), so logs and pipes stay clean;
// for long runs into a log, `log_every_s` > 0 prints a plain line that often instead
// (`dmindex bench --progress-s`).
#pragma once

#include <chrono>
#include <string>

namespace dmindex::bench {

class Progress {
 public:
  explicit Progress(bool enabled, double log_every_s = 0) : enabled_(enabled), log_every_s_(log_every_s) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { Clear(); }

  // A bar for a phase whose length is known; fraction in [0, 1]. Redraws at most 10x/s.
  void Bar(const std::string& label, double fraction, const std::string& detail = "");
  // A spinner with elapsed time, for a phase whose length is unknown (the bulk load).
  void Spin(const std::string& label);
  // Erases the line, so the next output starts clean.
  void Clear();

 private:
  bool Due();
  void Draw(const std::string& text);
  // Not drawing: a plain line every log_every_s seconds, if asked for.
  void Log(const std::string& text);

  const bool enabled_;
  const double log_every_s_;
  std::chrono::steady_clock::time_point last_log_{};
  bool drawn_ = false;
  unsigned spin_ = 0;
  std::chrono::steady_clock::time_point last_draw_{};
  std::chrono::steady_clock::time_point spin_start_{};
  std::string spin_label_;
};

}  // namespace dmindex::bench
