#include "cuset/service/redis_queue.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cuset/service/kernelgym_api.hpp"
#include "redis_client.hpp"
#include "redis_scripts.hpp"

namespace cuset::service {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr const char* kGroup = "workers";
constexpr const char* kTotals = "cuset:totals";           // hash: finished tasks by state, ever
constexpr const char* kWorkers = "cuset:workers";         // sorted set: worker process -> last heartbeat
constexpr const char* kWorkerJobs = "cuset:worker-jobs";  // hash: worker process -> its workers
constexpr std::array<const char*, 3> kClasses = {"sim", "gpu", "any"};

std::string streamKey(const std::string& cls, Priority p) { return fmt::format("cuset:queue:{}:{}", cls, priorityName(p)); }
std::string taskKey(const std::string& id) { return "cuset:task:" + id; }
std::string seconds(double t) { return fmt::format("{:.3f}", t); }

std::vector<std::string> allStreams() {
  std::vector<std::string> out;
  for (const char* cls : kClasses) {
    for (Priority p : {Priority::high, Priority::normal, Priority::low}) out.push_back(streamKey(cls, p));
  }
  return out;
}

RedisValue eval(RedisConnection& redis, const char* script, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  std::vector<std::string> command = {"EVAL", std::string(redis_scripts::kFinished) + script, std::to_string(keys.size())};
  command.insert(command.end(), keys.begin(), keys.end());
  command.insert(command.end(), args.begin(), args.end());
  return redis.command(command);
}

// Stream entries of a reply: XREADGROUP's [[stream, [[id, [field, value...]]...]]...] or one stream's
// list of entries (XAUTOCLAIM's second element).
struct Entry {
  std::string stream, id, task;
  Priority priority = Priority::normal;
};

void appendEntries(const std::string& stream, const RedisValue& list, std::vector<Entry>& out) {
  const auto priority = parsePriority(stream.substr(stream.rfind(':') + 1)).value_or(Priority::normal);
  for (const auto& e : list.elements) {
    if (e.elements.size() < 2 || e.elements[1].elements.size() < 2) continue;  // deleted meanwhile
    out.push_back({stream, e.elements[0].text, e.elements[1].elements[1].text, priority});
  }
}

std::optional<TaskRecord> recordOf(const RedisValue& hash) {
  if (hash.elements.empty()) return std::nullopt;
  std::map<std::string, std::string> f;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) f[hash.elements[i].text] = hash.elements[i + 1].text;
  TaskRecord r;
  r.id = f["id"];
  r.state = parseTaskState(f["state"]).value_or(TaskState::queued);
  r.priority = parsePriority(f["priority"]).value_or(Priority::normal);
  r.request = json::parse(f["request"], nullptr, false);
  if (!f["result"].empty()) r.result = json::parse(f["result"], nullptr, false);
  const auto time = [&](const char* k) { return f[k].empty() ? 0.0 : std::stod(f[k]); };
  r.submittedAt = time("submitted_at");
  r.startedAt = time("started_at");
  r.finishedAt = time("finished_at");
  return r;
}

std::optional<TaskRecord> fetch(RedisConnection& redis, const std::string& id) { return recordOf(redis.command({"HGETALL", taskKey(id)})); }

void ensureGroups(RedisConnection& redis) {
  for (const auto& stream : allStreams()) {
    const auto v = redis.commandAllowingError({"XGROUP", "CREATE", stream, kGroup, "0", "MKSTREAM"});
    if (v.kind == RedisValue::Kind::error && !v.text.starts_with("BUSYGROUP"))
      throw makeError("{}: XGROUP CREATE {}: {}", redis.address().display(), stream, v.text);
  }
}

// A command on the streams; a group that is not there (a Redis that lost its data) is made again.
RedisValue onStreams(RedisConnection& redis, const std::vector<std::string>& command) {
  RedisValue v = redis.commandAllowingError(command);
  if (v.kind == RedisValue::Kind::error && v.text.starts_with("NOGROUP")) {
    ensureGroups(redis);
    v = redis.commandAllowingError(command);
  }
  if (v.kind == RedisValue::Kind::error) throw makeError("{}: {}: {}", redis.address().display(), command.front(), v.text);
  return v;
}

std::string processName() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return fmt::format("{}-{}", host, ::getpid());
}

}  // namespace

std::vector<std::string> workerClasses(const std::string& workerBackend) {
  if (workerBackend == "sim") return {"sim", "any"};
  if (workerBackend == "cuda") return {"gpu", "any", "sim"};
  return {"any", "sim"};
}

std::string requestClass(const std::string& requestBackend, const std::string& serverBackend) {
  if (requestBackend == "sim" || requestBackend == "gpu") return requestBackend;
  if (serverBackend == "sim") return "sim";
  return serverBackend == "cuda" ? "gpu" : "any";
}

struct RedisTaskQueue::Impl {
  struct Consumer {  // one worker thread's own connection, name and choices
    Consumer(std::string n, const RedisAddress& a, int starvationBound) : name(std::move(n)), redis(a), picker(starvationBound) {}
    std::string name;
    RedisConnection redis;
    PriorityPicker picker;
    std::deque<Entry> delivered;  // read in one blocking call beyond the first: this consumer's to run
    Clock::time_point lastReclaim{};
  };
  struct Held {  // a lease this process holds
    Entry entry;
    std::string consumer;
    std::shared_ptr<std::atomic<bool>> cancel;
  };

  RedisQueueOptions options;
  RedisAddress address;
  std::string name = processName();
  std::vector<std::string> classes;
  std::atomic<bool> stopped{false};
  std::mutex poolMu;
  std::vector<std::unique_ptr<RedisConnection>> pool;  // the HTTP side's idle connections
  std::mutex consumersMu;
  std::map<std::thread::id, std::unique_ptr<Consumer>> consumers;
  std::mutex heldMu;
  std::condition_variable heldChanged;
  std::map<std::string, Held> held;  // by lease handle
  std::thread heartbeat;
  std::atomic<bool> reportedUnavailable{false};

  explicit Impl(RedisQueueOptions o) : options(std::move(o)), address(parseRedisAddress(options.url)) {
    if (!options.workerBackend.empty()) classes = workerClasses(options.workerBackend);
  }

  std::chrono::milliseconds heartbeatPeriod() const {
    return std::max<std::chrono::milliseconds>(std::chrono::seconds(1),
                                               std::chrono::duration_cast<std::chrono::milliseconds>(options.reclaimAfter) / 3);
  }

  // The last heartbeat time of a worker process counted as gone: silent for three heartbeats.
  double silentBefore() const { return unixNow() - 3.0 * std::chrono::duration<double>(heartbeatPeriod()).count(); }

  template <class F>
  auto withRedis(F&& f) {
    std::unique_ptr<RedisConnection> c;
    {
      std::lock_guard lock(poolMu);
      if (!pool.empty()) {
        c = std::move(pool.back());
        pool.pop_back();
      }
    }
    if (!c) c = std::make_unique<RedisConnection>(address);
    struct Return {
      Impl& impl;
      std::unique_ptr<RedisConnection>& c;
      ~Return() {
        std::lock_guard lock(impl.poolMu);
        impl.pool.push_back(std::move(c));
      }
    } back{*this, c};
    return f(*c);
  }

  Consumer& consumer() {
    std::lock_guard lock(consumersMu);
    auto& c = consumers[std::this_thread::get_id()];
    if (!c) c = std::make_unique<Consumer>(fmt::format("{}-{}", name, consumers.size()), address, options.starvationBound);
    return *c;
  }

  // After an outage every worker's heartbeats were lost with it: nothing is reclaimed until they have
  // had `reclaimAfter` to beat again, or live workers' tasks would be run twice.
  std::atomic<Clock::rep> lastOutage{0};
  bool mayReclaim() const { return Clock::now() - Clock::time_point(Clock::duration(lastOutage.load())) >= options.reclaimAfter; }

  void unavailable(const RedisUnavailable& e) {
    lastOutage = Clock::now().time_since_epoch().count();
    if (!reportedUnavailable.exchange(true)) std::cerr << "cuset: the queue is unavailable, trying again: " << e.what() << std::endl;
  }
  void available() {
    if (reportedUnavailable.exchange(false)) std::cerr << "cuset: the queue is back (" << address.display() << ")" << std::endl;
  }

  std::vector<std::string> streamsOf(Priority p) const {
    std::vector<std::string> out;
    for (const auto& cls : classes) out.push_back(streamKey(cls, p));
    return out;
  }

  std::vector<Entry> read(Consumer& c, const std::vector<std::string>& streams, std::optional<std::chrono::milliseconds> block) {
    std::vector<std::string> command = {"XREADGROUP", "GROUP", kGroup, c.name, "COUNT", "1"};
    if (block) command.insert(command.end(), {"BLOCK", std::to_string(std::max<long long>(1, block->count()))});
    command.push_back("STREAMS");
    command.insert(command.end(), streams.begin(), streams.end());
    command.insert(command.end(), streams.size(), ">");
    const RedisValue v = onStreams(c.redis, command);
    std::vector<Entry> out;
    for (const auto& s : v.elements) {
      if (s.elements.size() == 2) appendEntries(s.elements[0].text, s.elements[1], out);
    }
    return out;
  }

  // Entries of workers that went silent, taken over by this consumer.
  std::vector<Entry> reclaim(Consumer& c) {
    std::vector<Entry> out;
    const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(options.reclaimAfter).count();
    for (Priority p : {Priority::high, Priority::normal, Priority::low}) {
      for (const auto& stream : streamsOf(p)) {
        const RedisValue v = onStreams(c.redis, {"XAUTOCLAIM", stream, kGroup, c.name, std::to_string(idle), "0-0", "COUNT", "1"});
        if (v.elements.size() >= 2) appendEntries(stream, v.elements[1], out);
      }
    }
    return out;
  }

  void finishWith(RedisConnection& redis, const Entry& e, TaskState state, const json& result) {
    eval(redis, redis_scripts::kFinish, {taskKey(e.task), e.stream, kTotals},
         {e.id, std::string(taskStateName(state)), result.dump(), seconds(unixNow()), std::to_string(options.resultTtl.count())});
  }

  // The task of an entry, if this consumer is to run it now.
  std::optional<Lease> start(Consumer& c, const Entry& e, bool reclaimed) {
    const RedisValue v = eval(c.redis, redis_scripts::kStart, {taskKey(e.task), e.stream}, {e.id, seconds(unixNow()), c.name, reclaimed ? "1" : "0"});
    if (v.elements.size() < 3 || v.elements[0].text != "run") return std::nullopt;
    const int deliveries = std::stoi(v.elements[1].text);
    if (reclaimed) std::cerr << fmt::format("cuset: task '{}' taken over from a silent worker (run {})", e.task, deliveries) << std::endl;
    if (deliveries > options.maxDeliveries) {
      finishWith(c.redis, e, TaskState::failed,
                 failureResponse(e.task, "INTERNAL_ERROR",
                                 fmt::format("the workers that took this task stopped without a result {} times (killed, or their machine lost); "
                                             "it is not run again",
                                             deliveries - 1)));
      return std::nullopt;
    }
    if (v.elements[2].text == "1") {
      finishWith(c.redis, e, TaskState::cancelled, failureResponse(e.task, "CANCELLED", "cancelled while it ran"));
      return std::nullopt;
    }
    auto record = fetch(c.redis, e.task);
    if (!record) return std::nullopt;
    Lease lease;
    lease.task = std::move(*record);
    lease.handle = e.stream + "\n" + e.id;
    std::lock_guard lock(heldMu);
    held[lease.handle] = Held{e, c.name, lease.cancel};
    return lease;
  }

  // One look: reclaimed tasks first, then what was delivered, then the streams by priority; at the
  // end a blocking read of them all (its entries are run by the next call).
  std::optional<Lease> takeOne(Consumer& c, Clock::time_point deadline) {
    if (Clock::now() - c.lastReclaim >= options.reclaimAfter / 2 && mayReclaim()) {
      c.lastReclaim = Clock::now();
      for (const auto& e : reclaim(c)) {
        if (auto lease = start(c, e, true)) return lease;
      }
    }
    std::stable_sort(c.delivered.begin(), c.delivered.end(), [](const Entry& a, const Entry& b) { return a.priority > b.priority; });
    while (!c.delivered.empty()) {
      const Entry e = c.delivered.front();
      c.delivered.pop_front();
      if (auto lease = start(c, e, false)) return lease;
    }
    std::array<bool, 3> waiting = {true, true, true};  // not looked at: counted as waiting (task_queue.hpp)
    for (const Priority p : c.picker.order()) {
      for (const auto& stream : streamsOf(p)) {
        for (auto entries = read(c, {stream}, std::nullopt); !entries.empty(); entries = read(c, {stream}, std::nullopt)) {
          if (auto lease = start(c, entries.front(), false)) {
            c.picker.taken(p, waiting);
            return lease;
          }
        }
      }
      waiting[static_cast<int>(p)] = false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || stopped) return std::nullopt;
    std::vector<std::string> streams;
    for (Priority p : {Priority::high, Priority::normal, Priority::low}) {
      for (auto& s : streamsOf(p)) streams.push_back(std::move(s));
    }
    for (auto& e : read(c, streams, std::min<std::chrono::milliseconds>(left, std::chrono::seconds(1)))) c.delivered.push_back(std::move(e));
    return std::nullopt;
  }

  // Keeps the tasks this process runs from being reclaimed, tells their workers to stop when they
  // should, and says this process is alive.
  void beat() {
    RedisConnection redis(address);
    std::unique_lock lock(heldMu);
    while (!stopped) {
      std::vector<Held> now;
      for (const auto& [handle, h] : held) now.push_back(h);
      lock.unlock();
      try {
        redis.command({"ZADD", kWorkers, seconds(unixNow()), name});
        redis.command({"HSET", kWorkerJobs, name, std::to_string(options.workers)});
        // Each live worker tidies away the processes silent for three heartbeats; reading counts changes nothing.
        const std::string silent = seconds(silentBefore());
        for (const auto& gone : redis.command({"ZRANGEBYSCORE", kWorkers, "-inf", silent}).elements) {
          redis.command({"HDEL", kWorkerJobs, gone.text});
        }
        redis.command({"ZREMRANGEBYSCORE", kWorkers, "-inf", silent});
        for (const auto& h : now) {
          const RedisValue mine = redis.command({"XPENDING", h.entry.stream, kGroup, h.entry.id, h.entry.id, "1", h.consumer});
          if (!mine.elements.empty()) redis.command({"XCLAIM", h.entry.stream, kGroup, h.consumer, "0", h.entry.id, "JUSTID"});
          if (eval(redis, redis_scripts::kShouldStop, {taskKey(h.entry.task)}, {h.entry.id}).integer == 1) h.cancel->store(true);
        }
        available();
      } catch (const RedisUnavailable& e) {
        unavailable(e);
      } catch (const std::exception& e) {
        std::cerr << "cuset: heartbeat: " << e.what() << std::endl;
      }
      lock.lock();
      heldChanged.wait_for(lock, heartbeatPeriod(), [&] { return stopped.load(); });
    }
    lock.unlock();
    try {  // gone: not counted in /health any more
      redis.command({"ZREM", kWorkers, name});
      redis.command({"HDEL", kWorkerJobs, name});
    } catch (const std::exception&) {
    }
  }
};

RedisTaskQueue::RedisTaskQueue(RedisQueueOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  try {
    impl_->withRedis([](RedisConnection& redis) {
      ensureGroups(redis);
      // Accepted means kept: a Redis that does not log every write loses queued tasks when it restarts.
      const RedisValue aof = redis.commandAllowingError({"CONFIG", "GET", "appendonly"});
      if (aof.elements.size() == 2 && aof.elements[1].text != "yes") {
        std::cerr << fmt::format("cuset: warning: {} runs with appendonly {}: a restart of Redis loses the tasks it holds (docs/serve.md)",
                                 redis.address().display(), aof.elements[1].text)
                  << std::endl;
      }
      return 0;
    });
  } catch (const RedisUnavailable& e) {
    impl_->unavailable(e);  // it may come later: every call tries again
  }
  if (!impl_->classes.empty() && impl_->options.heartbeat) impl_->heartbeat = std::thread([this] { impl_->beat(); });
}

RedisTaskQueue::~RedisTaskQueue() {
  stop();
  if (impl_->heartbeat.joinable()) impl_->heartbeat.join();
}

std::string RedisTaskQueue::describe() const { return impl_->address.display(); }

TaskQueue::Submitted RedisTaskQueue::submit(const std::string& id, Priority priority, json request, bool forceRefresh, TaskRecord& out) {
  const std::string stream = streamKey(requestClass(request.value("backend", "cuda"), impl_->options.serverBackend), priority);
  return impl_->withRedis([&](RedisConnection& redis) {
    std::vector<std::string> keys = {taskKey(id), stream};
    for (auto& s : allStreams()) keys.push_back(std::move(s));
    const RedisValue v = eval(redis, redis_scripts::kSubmit, keys,
                              {id, std::string(priorityName(priority)), stream.substr(std::string("cuset:queue:").size()), request.dump(),
                               seconds(unixNow()), forceRefresh ? "1" : "0", std::to_string(impl_->options.maxQueued)});
    const std::string outcome = v.elements.empty() ? "" : v.elements[0].text;
    if (outcome == "full") return Submitted::queueFull;
    auto record = fetch(redis, id);
    if (!record) throw makeError("{}: task '{}' vanished as it was submitted", redis.address().display(), id);
    out = std::move(*record);
    return outcome == "accepted" ? Submitted::accepted : Submitted::existing;
  });
}

std::optional<Lease> RedisTaskQueue::take(std::chrono::milliseconds wait) {
  if (impl_->classes.empty()) throw Error("this queue was opened without workers: it has no task to give");
  auto& c = impl_->consumer();
  const auto deadline = Clock::now() + wait;
  while (!impl_->stopped) {
    try {
      auto lease = impl_->takeOne(c, deadline);
      impl_->available();
      if (lease) return lease;
    } catch (const RedisUnavailable& e) {
      impl_->unavailable(e);
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::seconds(1), std::max<Clock::duration>(deadline - Clock::now(), {})));
    }
    if (Clock::now() >= deadline) break;
  }
  return std::nullopt;
}

void RedisTaskQueue::finish(const Lease& lease, TaskState state, json result) {
  Entry e;
  {
    std::lock_guard lock(impl_->heldMu);
    const auto it = impl_->held.find(lease.handle);
    if (it == impl_->held.end()) return;  // handed back by stop(): another worker runs it
    e = it->second.entry;
    impl_->held.erase(it);
  }
  auto& c = impl_->consumer();
  // A result is not dropped for an outage: it is written once Redis is back (or, if this worker stops
  // first, the task is reclaimed and run again).
  while (!impl_->stopped) {
    try {
      impl_->finishWith(c.redis, e, state, result);
      impl_->available();
      return;
    } catch (const RedisUnavailable& ex) {
      impl_->unavailable(ex);
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

bool RedisTaskQueue::cancel(const std::string& id) {
  return impl_->withRedis([&](RedisConnection& redis) {
    return eval(redis, redis_scripts::kCancel, {taskKey(id), kTotals},
                {seconds(unixNow()), failureResponse(id, "CANCELLED", "cancelled before it ran").dump(),
                 std::to_string(impl_->options.resultTtl.count())})
               .integer == 1;
  });
}

std::optional<TaskRecord> RedisTaskQueue::get(const std::string& id) {
  return impl_->withRedis([&](RedisConnection& redis) { return fetch(redis, id); });
}

std::optional<TaskRecord> RedisTaskQueue::waitFinished(const std::string& id, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::optional<TaskRecord> r;
    try {
      r = get(id);
      if (!r || r->finished() || impl_->stopped) return r;
    } catch (const RedisUnavailable&) {
      if (Clock::now() >= deadline) throw;  // still away at the end: the caller answers 503
    }
    if (Clock::now() >= deadline) return r;
    std::this_thread::sleep_for(impl_->options.pollInterval);
  }
}

QueueCounts RedisTaskQueue::counts() const {
  return impl_->withRedis([&](RedisConnection& redis) {
    QueueCounts c;
    for (const auto& stream : allStreams()) {
      const auto length = static_cast<std::size_t>(redis.command({"XLEN", stream}).integer);
      const RedisValue pending = redis.commandAllowingError({"XPENDING", stream, kGroup});
      const auto taken = pending.elements.empty() ? 0u : static_cast<std::size_t>(pending.elements[0].integer);
      c.processing += taken;
      c.queued += length > taken ? length - taken : 0;
    }
    const RedisValue totals = redis.command({"HGETALL", kTotals});
    for (std::size_t i = 0; i + 1 < totals.elements.size(); i += 2) {
      const auto n = static_cast<std::size_t>(std::stoull(totals.elements[i + 1].text));
      const auto& state = totals.elements[i].text;
      (state == "completed" ? c.completed : state == "failed" ? c.failed : c.cancelled) += n;
    }
    // A worker process silent for three heartbeats is gone (the live ones remove it: beat()).
    for (const auto& member : redis.command({"ZRANGEBYSCORE", kWorkers, "(" + seconds(impl_->silentBefore()), "+inf"}).elements) {
      const RedisValue jobs = redis.command({"HGET", kWorkerJobs, member.text});
      if (!jobs.isNil()) c.workers += static_cast<std::size_t>(std::stoull(jobs.text));
    }
    return c;
  });
}

void RedisTaskQueue::stop() {
  if (impl_->stopped.exchange(true)) return;
  std::map<std::string, Impl::Held> held;
  {
    std::lock_guard lock(impl_->heldMu);
    held.swap(impl_->held);
  }
  impl_->heldChanged.notify_all();
  for (const auto& [handle, h] : held) {
    h.cancel->store(true);
    try {
      impl_->withRedis([&](RedisConnection& redis) {
        return eval(redis, redis_scripts::kRequeue, {taskKey(h.entry.task), h.entry.stream}, {h.entry.id, h.consumer});
      });
    } catch (const std::exception&) {
      // Redis away: the entry stays pending and another worker reclaims it after reclaimAfter.
    }
  }
}

bool RedisTaskQueue::stopped() const { return impl_->stopped; }

}  // namespace cuset::service
