#pragma once
// Errors crossing a module boundary are cuset::Error: a message a user can act on, with the
// context (file, field, line, candidate) prepended by each layer that knows it.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace cuset {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <class... Args>
[[nodiscard]] Error makeError(fmt::format_string<Args...> format, Args&&... args) {
  return Error(fmt::format(format, std::forward<Args>(args)...));
}

// Call inside a catch block: rethrows the current exception as an Error whose message is
// "<context>: <original message>".
[[noreturn]] void rethrowWithContext(const std::string& context);

}  // namespace cuset
