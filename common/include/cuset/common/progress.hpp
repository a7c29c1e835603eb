#pragma once
// Progress of long work on stderr: done/total, rate, ETA. On a terminal, a one-line bar redrawn in
// place; anywhere else (CI, Slurm, nohup, a file) a plain line every 10% of the work or every 30 s,
// whichever comes first, so a log shows life without carriage-return noise. Callers print their own
// summary at the end.
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace cuset {

enum class ProgressMode {
  automatic,  // terminal when stderr is a TTY, else lines
  terminal,
  lines,
  off,
};

struct ProgressOptions {
  ProgressMode mode = ProgressMode::automatic;
  std::chrono::seconds lineInterval{30};  // lines mode: at most this long between lines
  // Where output goes and what time it is; tests supply their own. Default: stderr, steady_clock.
  std::function<void(std::string_view)> write;
  std::function<std::chrono::steady_clock::time_point()> now;
};

class ProgressBar {
 public:
  // `wanted == false` silences it (--quiet).
  ProgressBar(std::string label, std::size_t total, std::string unit = "it", bool wanted = true);
  ProgressBar(std::string label, std::size_t total, std::string unit, ProgressOptions options);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance(std::size_t n = 1);
  // Extra text after the rate and ETA, e.g. "loss 2.31".
  void setSuffix(std::string suffix);
  void finish();
  bool enabled() const { return mode_ != ProgressMode::off; }
  ProgressMode mode() const { return mode_; }

  // "12/40 3.1 it/s ETA 9s", exposed for tests.
  static std::string formatStatus(std::size_t done, std::size_t total, double elapsedSeconds, const std::string& unit);
  static std::string formatDuration(double seconds);

 private:
  void render(bool force);
  void emit(std::string_view text);
  std::chrono::steady_clock::time_point now() const;

  std::string label_;
  std::size_t total_;
  std::string unit_;
  std::string suffix_;
  std::size_t done_ = 0;
  ProgressOptions options_;
  ProgressMode mode_;
  bool finished_ = false;
  std::size_t lastDecile_ = 0;      // lines mode: the last 10% step a line was printed for
  bool lineSinceProgress_ = false;  // lines mode: the current count has been printed
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastRender_;
  std::mutex mutex_;
};

}  // namespace cuset
