#include "cuset/common/hash.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstdint>
#include <new>

namespace cuset {

std::string Hash128::hex() const { return fmt::format("{:016x}{:016x}", high, low); }

Hash128 hashBytes(const void* data, std::size_t size) {
  const XXH128_hash_t h = XXH3_128bits(data, size);
  return {h.high64, h.low64};
}

struct ContentHasher::State {
  XXH3_state_t* xxh = XXH3_createState();
  State() {
    if (xxh == nullptr) throw std::bad_alloc();
    XXH3_128bits_reset(xxh);
  }
  ~State() { XXH3_freeState(xxh); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {}
ContentHasher::~ContentHasher() = default;

ContentHasher& ContentHasher::add(const void* data, std::size_t size) {
  const std::uint64_t length = size;
  XXH3_128bits_update(state_->xxh, &length, sizeof(length));
  XXH3_128bits_update(state_->xxh, data, size);
  return *this;
}

ContentHasher& ContentHasher::add(std::string_view piece) { return add(piece.data(), piece.size()); }

Hash128 ContentHasher::digest() const {
  const XXH128_hash_t h = XXH3_128bits_digest(state_->xxh);
  return {h.high64, h.low64};
}

}  // namespace cuset
