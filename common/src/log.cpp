#include "cuset/common/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "cuset/common/error.hpp"

namespace cuset::log {
namespace {

Level initialLevel() {
  if (const char* env = std::getenv("CUSET_LOG")) {
    try {
      return parseLevel(env);
    } catch (const Error&) {
      std::fprintf(stderr, "cuset: ignoring CUSET_LOG=%s (expected debug|info|warn|error|off)\n", env);
    }
  }
  return Level::info;
}

std::atomic<Level>& currentLevel() {
  static std::atomic<Level> current{initialLevel()};
  return current;
}

std::mutex& outputMutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void setLevel(Level l) { currentLevel().store(l); }
Level level() { return currentLevel().load(std::memory_order_relaxed); }

Level parseLevel(std::string_view text) {
  if (text == "debug") return Level::debug;
  if (text == "info") return Level::info;
  if (text == "warn") return Level::warn;
  if (text == "error") return Level::error;
  if (text == "off") return Level::off;
  throw makeError("unknown log level '{}' (expected debug, info, warn, error or off)", text);
}

void write(Level l, std::string_view message) {
  static constexpr const char* kTags[] = {"debug", "info", "warning", "error", ""};
  std::lock_guard lock(outputMutex());
  if (l == Level::info) {
    fmt::print(stderr, "{}\n", message);
  } else {
    fmt::print(stderr, "cuset {}: {}\n", kTags[static_cast<int>(l)], message);
  }
  std::fflush(stderr);
}

}  // namespace cuset::log
