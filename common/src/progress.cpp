#include "cuset/common/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace cuset {

ProgressBar::ProgressBar(std::string label, std::size_t total, std::string unit, bool wanted)
    : ProgressBar(std::move(label), total, std::move(unit), ProgressOptions{.mode = wanted ? ProgressMode::automatic : ProgressMode::off}) {}

ProgressBar::ProgressBar(std::string label, std::size_t total, std::string unit, ProgressOptions options)
    : label_(std::move(label)), total_(total), unit_(std::move(unit)), options_(std::move(options)), mode_(options_.mode) {
  if (mode_ == ProgressMode::automatic) mode_ = ::isatty(STDERR_FILENO) == 1 ? ProgressMode::terminal : ProgressMode::lines;
  start_ = lastRender_ = now();
}

ProgressBar::~ProgressBar() { finish(); }

std::chrono::steady_clock::time_point ProgressBar::now() const { return options_.now ? options_.now() : std::chrono::steady_clock::now(); }

void ProgressBar::emit(std::string_view text) {
  if (options_.write) {
    options_.write(text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  }
}

std::string ProgressBar::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string ProgressBar::formatStatus(std::size_t done, std::size_t total, double elapsed, const std::string& unit) {
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const std::string eta = done >= total ? std::string("0s") : rate > 0 ? formatDuration(static_cast<double>(total - done) / rate) : std::string("?");
  return fmt::format("{}/{} {:.1f} {}/s ETA {}", done, total, rate, unit, eta);
}

void ProgressBar::advance(std::size_t n) {
  std::lock_guard lock(mutex_);
  done_ += n;
  lineSinceProgress_ = false;
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
  if (mode_ == ProgressMode::terminal) {
    render(true);
    emit("\n");
  } else if (mode_ == ProgressMode::lines && !lineSinceProgress_ && done_ > 0) {
    render(true);  // the final count, unless the last line already showed it
  }
}

void ProgressBar::render(bool force) {
  if (mode_ == ProgressMode::off) return;
  const auto t = now();
  const double elapsed = std::chrono::duration<double>(t - start_).count();
  const std::string status = formatStatus(done_, total_, elapsed, unit_) + (suffix_.empty() ? "" : " " + suffix_);
  if (mode_ == ProgressMode::lines) {
    const std::size_t decile = total_ ? std::min<std::size_t>(10, done_ * 10 / total_) : 10;
    if (!force && decile <= lastDecile_ && t - lastRender_ < options_.lineInterval) return;
    lastDecile_ = std::max(lastDecile_, decile);
    lastRender_ = t;
    lineSinceProgress_ = true;
    emit(fmt::format("{} {} ({}%)\n", label_, status, total_ ? done_ * 100 / total_ : 100));
    return;
  }
  if (!force && done_ < total_ && t - lastRender_ < std::chrono::milliseconds(100)) return;
  lastRender_ = t;
  constexpr int kWidth = 28;
  const double fraction = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  emit(fmt::format("\r{} [{:#<{}}{:.<{}}] {}\x1b[K", label_, "", filled, "", kWidth - filled, status));
}

}  // namespace cuset
