#include "cuset/common/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace cuset {

ProgressBar::ProgressBar(std::string label, std::size_t total, std::string unit, bool wanted)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      enabled_(wanted && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      lastRender_(start_) {}

ProgressBar::~ProgressBar() { finish(); }

std::string ProgressBar::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string ProgressBar::formatStatus(std::size_t done, std::size_t total, double elapsed,
                                      const std::string& unit) {
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const std::string eta = done >= total ? std::string("0s")
                         : rate > 0    ? formatDuration(static_cast<double>(total - done) / rate)
                                       : std::string("?");
  return fmt::format("{}/{} {:.1f} {}/s ETA {}", done, total, rate, unit, eta);
}

void ProgressBar::advance(std::size_t n) {
  std::lock_guard lock(mutex_);
  done_ += n;
  render(false);
}

void ProgressBar::setSuffix(std::string suffix) {
  std::lock_guard lock(mutex_);
  suffix_ = std::move(suffix);
}

void ProgressBar::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  render(true);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void ProgressBar::render(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && done_ < total_ && now - lastRender_ < std::chrono::milliseconds(100)) return;
  lastRender_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  constexpr int kWidth = 28;
  const double fraction = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  fmt::print(stderr, "\r{} [{:#<{}}{:.<{}}] {}{}{}\x1b[K", label_, "", filled, "", kWidth - filled,
             formatStatus(done_, total_, elapsed, unit_), suffix_.empty() ? "" : " ", suffix_);
  std::fflush(stderr);
}

}  // namespace cuset
