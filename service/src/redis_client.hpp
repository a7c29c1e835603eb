#pragma once
// A synchronous Redis connection over hiredis (docs/dependencies.md): one per thread, reconnected on the
// next command after Redis went away, with replies copied into plain values so that no hiredis object
// outlives a call.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cuset/common/error.hpp"

struct redisContext;

namespace cuset::service {

// redis://[:password@]host[:port][/db]
struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string password;
  int db = 0;
  std::string display() const;  // without the password
};
RedisAddress parseRedisAddress(const std::string& url);  // throws cuset::Error naming what is wrong

struct RedisValue {
  enum class Kind { nil, integer, string, array, error } kind = Kind::nil;
  long long integer = 0;
  std::string text;  // string, status or error
  std::vector<RedisValue> elements;
  bool isNil() const { return kind == Kind::nil; }
};

// Redis cannot be reached (refused, timed out, closed): the caller waits and tries again.
class RedisUnavailable : public Error {
 public:
  using Error::Error;
};

class RedisConnection {
 public:
  explicit RedisConnection(RedisAddress address, std::chrono::milliseconds commandTimeout = std::chrono::seconds(5));
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Throws RedisUnavailable when Redis cannot be reached, cuset::Error for an error reply (its text).
  RedisValue command(const std::vector<std::string>& args);
  // As command(), but an error reply is returned, not thrown.
  RedisValue commandAllowingError(const std::vector<std::string>& args);
  const RedisAddress& address() const { return address_; }

 private:
  void connect();
  struct ContextFree {
    void operator()(redisContext* c) const;
  };
  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<redisContext, ContextFree> context_;
};

}  // namespace cuset::service
