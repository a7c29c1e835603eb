#pragma once
// A one-line progress bar on stderr: done/total, rate, ETA. On a non-TTY it stays quiet (CI logs and
// redirected output get no carriage-return noise); callers print their own summary at the end.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace cuset {

class ProgressBar {
 public:
  // `wanted == false` silences it even on a terminal (--quiet).
  ProgressBar(std::string label, std::size_t total, std::string unit = "it", bool wanted = true);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance(std::size_t n = 1);
  // Extra text after the rate and ETA, e.g. "loss 2.31".
  void setSuffix(std::string suffix);
  void finish();
  bool enabled() const { return enabled_; }

  // "12/40 3.1 it/s ETA 9s", exposed for tests.
  static std::string formatStatus(std::size_t done, std::size_t total, double elapsedSeconds,
                                  const std::string& unit);
  static std::string formatDuration(double seconds);

 private:
  void render(bool force);

  std::string label_;
  std::size_t total_;
  std::string unit_;
  std::string suffix_;
  std::size_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastRender_;
  std::mutex mutex_;
};

}  // namespace cuset
