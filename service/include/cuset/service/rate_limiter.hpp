#pragma once
// Requests per second per client (a bearer token, or an address where the server takes none): a token
// bucket of `rate` tokens a second holding at most two seconds' worth.
#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace cuset::service {

class RateLimiter {
 public:
  explicit RateLimiter(double ratePerSecond) : rate_(ratePerSecond) {}

  // 0 when the request may go now; otherwise the seconds until it may.
  double take(const std::string& client) {
    if (rate_ <= 0) return 0;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu_);
    Bucket& b = buckets_.try_emplace(client, Bucket{2 * rate_, now}).first->second;
    b.tokens = std::min(2 * rate_, b.tokens + rate_ * std::chrono::duration<double>(now - b.last).count());
    b.last = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / rate_;
  }

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point last;
  };
  double rate_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace cuset::service
