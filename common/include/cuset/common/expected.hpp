#pragma once
// A minimal expected<T, std::string> for operations where failure is a normal outcome (a bad
// candidate, a malformed JSONL line) rather than a bug: the caller turns the message into a verdict.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cuset {

struct Unexpected {
  Unexpected() = default;
  explicit Unexpected(std::string text) : message(std::move(text)) {}  // Unexpected("...") for every compiler, not only C++20 aggregates
  std::string message;
};

template <class T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
  Expected(Unexpected error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const std::string& error() const {
    assert(!ok());
    return std::get<1>(state_).message;
  }

 private:
  std::variant<T, Unexpected> state_;
};

}  // namespace cuset
