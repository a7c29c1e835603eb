#pragma once
// Content hashing (XXH3-128): cache keys for compiled kernels and fingerprints of input buffers.
// Not cryptographic: it detects accidental and adversarial-by-mistake changes (an input mutated by a
// kernel), which is all the harness needs, at memory bandwidth.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cuset {

struct Hash128 {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::string hex() const;  // 32 lowercase hex digits
  friend bool operator==(const Hash128&, const Hash128&) = default;
};

Hash128 hashBytes(const void* data, std::size_t size);
inline Hash128 hashString(std::string_view text) { return hashBytes(text.data(), text.size()); }

// Incremental hashing of several pieces. Each piece is length-prefixed so that ("ab","c") and
// ("a","bc") hash differently.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;

  ContentHasher& add(std::string_view piece);
  ContentHasher& add(const void* data, std::size_t size);
  Hash128 digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cuset
