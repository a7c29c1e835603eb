#pragma once
// Levelled logging to stderr through fmt. The level comes from --log-level or CUSET_LOG.
#include <fmt/format.h>

#include <string_view>

namespace cuset::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

void setLevel(Level level);
Level level();
// Parses "debug|info|warn|error|off"; throws cuset::Error on anything else.
Level parseLevel(std::string_view text);
void write(Level level, std::string_view message);

template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::debug) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::info) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::warn) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::error) write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace cuset::log
