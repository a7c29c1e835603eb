#include "redis_client.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <charconv>

namespace cuset::service {
namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

RedisValue copy(const redisReply& r) {
  RedisValue v;
  switch (r.type) {
    case REDIS_REPLY_INTEGER:
      v.kind = RedisValue::Kind::integer;
      v.integer = r.integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      v.kind = RedisValue::Kind::string;
      v.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      v.kind = RedisValue::Kind::error;
      v.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      v.kind = RedisValue::Kind::array;
      for (std::size_t i = 0; i < r.elements; ++i) v.elements.push_back(copy(*r.element[i]));
      break;
    default:
      break;
  }
  return v;
}

timeval toTimeval(std::chrono::milliseconds ms) {
  return {static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

int number(const std::string& url, std::string_view text, const char* what) {
  int n = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0 || n > 65535)
    throw makeError("{}: the {} '{}' is not a number", url, what, text);
  return n;
}

}  // namespace

std::string RedisAddress::display() const { return fmt::format("redis://{}:{}/{}", host, port, db); }

RedisAddress parseRedisAddress(const std::string& url) {
  constexpr std::string_view scheme = "redis://";
  if (!url.starts_with(scheme)) throw makeError("{}: a queue is redis://[:password@]host[:port][/db]", url);
  std::string_view rest = std::string_view(url).substr(scheme.size());
  RedisAddress a;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view credentials = rest.substr(0, at);
    if (credentials.starts_with(':')) credentials.remove_prefix(1);
    a.password = credentials;
    rest = rest.substr(at + 1);
  }
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    if (slash + 1 < rest.size()) a.db = number(url, rest.substr(slash + 1), "database");
    rest = rest.substr(0, slash);
  }
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    a.port = number(url, rest.substr(colon + 1), "port");
    rest = rest.substr(0, colon);
  }
  if (!rest.empty()) a.host = rest;
  return a;
}

void RedisConnection::ContextFree::operator()(redisContext* c) const { redisFree(c); }

RedisConnection::RedisConnection(RedisAddress address, std::chrono::milliseconds commandTimeout)
    : address_(std::move(address)), timeout_(commandTimeout) {}

RedisConnection::~RedisConnection() = default;

void RedisConnection::connect() {
  std::unique_ptr<redisContext, ContextFree> c(redisConnectWithTimeout(address_.host.c_str(), address_.port, toTimeval(std::chrono::seconds(2))));
  if (!c) throw RedisUnavailable(fmt::format("{}: cannot allocate a connection", address_.display()));
  if (c->err) throw RedisUnavailable(fmt::format("{}: {}", address_.display(), c->errstr));
  redisSetTimeout(c.get(), toTimeval(timeout_));
  context_ = std::move(c);
  if (!address_.password.empty()) command({"AUTH", address_.password});
  if (address_.db != 0) command({"SELECT", std::to_string(address_.db)});
}

RedisValue RedisConnection::commandAllowingError(const std::vector<std::string>& args) {
  if (!context_) connect();
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  std::unique_ptr<redisReply, ReplyFree> reply(
      static_cast<redisReply*>(redisCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
  if (!reply) {  // the context is unusable after an I/O error: the next command connects again
    const std::string why = context_->errstr;
    context_.reset();
    throw RedisUnavailable(fmt::format("{}: {} ({})", address_.display(), why, args.front()));
  }
  return copy(*reply);
}

RedisValue RedisConnection::command(const std::vector<std::string>& args) {
  RedisValue v = commandAllowingError(args);
  if (v.kind != RedisValue::Kind::error) return v;
  // Redis answers LOADING while it reads its append-only file after a restart: not there yet.
  if (v.text.starts_with("LOADING")) throw RedisUnavailable(fmt::format("{}: {}", address_.display(), v.text));
  throw makeError("{}: {} answered: {}", address_.display(), args.front(), v.text);
}

}  // namespace cuset::service
