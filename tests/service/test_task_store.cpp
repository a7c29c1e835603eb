// `cuset serve`'s queues (task_store.hpp, redis_queue.hpp) and request checks (kernelgym_api.hpp, reward.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "../test_util.hpp"
#include "cuset/service/kernelgym_api.hpp"
#include "cuset/service/rate_limiter.hpp"
#include "cuset/service/reward.hpp"
#include "cuset/service/redis_queue.hpp"
#include "cuset/service/task_store.hpp"
#include "redis_server.hpp"

namespace cuset::service {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TaskStoreOptions optionsIn(const fs::path& dir) {
  TaskStoreOptions o;
  o.dir = dir;
  o.starvationBound = 2;
  o.maxQueued = 10;
  return o;
}

std::string submit(TaskQueue& queue, const std::string& id, Priority p) {
  TaskRecord r;
  EXPECT_EQ(queue.submit(id, p, {{"task_id", id}, {"backend", "sim"}}, false, r), TaskQueue::Submitted::accepted);
  return r.id;
}

// The behaviour both queues share, run on each: the embedded one and Redis Streams (a redis-server of the
// test's own; skipped, saying so, where there is none).
class QueueContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "redis") {
      redis_ = std::make_unique<test::RedisServer>(temp_.path());
      if (!redis_->running()) GTEST_SKIP() << "no redis-server on this machine (scripts/install-deps.sh installs it)";
    }
  }
  std::unique_ptr<TaskQueue> open(std::size_t maxQueued = 10) {
    if (GetParam() == "embedded") {
      auto o = optionsIn(temp_ / "tasks");
      o.maxQueued = maxQueued;
      return std::make_unique<TaskStore>(o);
    }
    return std::make_unique<RedisTaskQueue>(redisOptions(maxQueued));
  }
  RedisQueueOptions redisOptions(std::size_t maxQueued = 10) const {
    RedisQueueOptions o;
    o.url = redis_->url();
    o.workerBackend = "sim";
    o.workers = 1;
    o.maxQueued = maxQueued;
    o.starvationBound = 2;
    o.reclaimAfter = std::chrono::seconds(1);
    return o;
  }
  test::TempDir temp_;
  std::unique_ptr<test::RedisServer> redis_;
};

TEST_P(QueueContract, HigherPriorityFirstAndLowPassedOverAtMostTheBound) {
  auto queue = open();
  submit(*queue, "low", Priority::low);
  for (int i = 0; i < 4; ++i) submit(*queue, "high" + std::to_string(i), Priority::high);
  std::vector<std::string> order;
  while (auto t = queue->take(0ms)) order.push_back(t->task.id);
  // Passed over twice, low goes third, before the other high ones.
  EXPECT_EQ(order, (std::vector<std::string>{"high0", "high1", "low", "high2", "high3"}));
}

TEST_P(QueueContract, CancelStopsQueuedAtOnceAndFlagsRunning) {
  auto queue = open();
  submit(*queue, "run", Priority::normal);
  submit(*queue, "wait", Priority::normal);
  const auto running = queue->take(0ms);
  ASSERT_TRUE(running);
  EXPECT_TRUE(queue->cancel("wait"));
  EXPECT_EQ(queue->get("wait")->state, TaskState::cancelled);
  EXPECT_EQ(queue->get("wait")->result["error_code"], "CANCELLED");
  EXPECT_FALSE(queue->take(0ms));  // the cancelled one never runs
  EXPECT_FALSE(running->cancel->load());
  EXPECT_TRUE(queue->cancel("run"));
  // The embedded queue raises the flag at once; a fleet's worker hears of it at its next heartbeat.
  for (int i = 0; i < 50 && !running->cancel->load(); ++i) std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(running->cancel->load());
  EXPECT_FALSE(queue->cancel("nobody"));
  EXPECT_FALSE(queue->cancel("wait"));  // finished
}

TEST_P(QueueContract, OneResultPerTaskAndTheSameIdAgainIsTheStoredOne) {
  auto queue = open();
  submit(*queue, "t", Priority::normal);
  const auto lease = queue->take(0ms);
  ASSERT_TRUE(lease);
  queue->finish(*lease, TaskState::completed, {{"by", "first"}});
  queue->finish(*lease, TaskState::failed, {{"by", "second"}});  // a worker thought dead that was only slow
  EXPECT_EQ(queue->waitFinished("t", 1s)->result["by"], "first");
  TaskRecord again;
  EXPECT_EQ(queue->submit("t", Priority::normal, {{"task_id", "t"}}, false, again), TaskQueue::Submitted::existing);
  EXPECT_EQ(again.result["by"], "first");
  EXPECT_EQ(queue->submit("t", Priority::normal, {{"task_id", "t"}, {"backend", "sim"}}, true, again), TaskQueue::Submitted::accepted);
  EXPECT_EQ(again.state, TaskState::queued);
  const auto refreshed = queue->take(0ms);
  ASSERT_TRUE(refreshed);
  queue->finish(*refreshed, TaskState::completed, {{"by", "refresh"}});
  EXPECT_EQ(queue->get("t")->result["by"], "refresh");
  EXPECT_EQ(queue->counts().completed, 2u - (GetParam() == "embedded"));  // the store keeps tasks, Redis counts finishes
}

TEST_P(QueueContract, TheQueueHasABound) {
  auto queue = open(1);
  submit(*queue, "one", Priority::normal);
  TaskRecord r;
  EXPECT_EQ(queue->submit("two", Priority::normal, {{"task_id", "two"}}, false, r), TaskQueue::Submitted::queueFull);
  EXPECT_EQ(queue->counts().queued, 1u);
}

INSTANTIATE_TEST_SUITE_P(Queues, QueueContract, ::testing::Values("embedded", "redis"));

TEST(TaskStore, AcceptedMeansOnDiskAndARestartRunsWhatWasRunning) {
  const test::TempDir temp;
  const fs::path dir = temp.path();
  {
    TaskStore store(optionsIn(dir));
    submit(store, "a", Priority::normal);
    submit(store, "b", Priority::normal);
    ASSERT_EQ(store.take(0ms)->task.id, "a");  // processing when the server stops
    TaskRecord existing;
    EXPECT_EQ(store.submit("a", Priority::normal, {}, false, existing), TaskStore::Submitted::existing);
    EXPECT_EQ(existing.state, TaskState::processing);
  }
  TaskStore store(optionsIn(dir));
  EXPECT_EQ(store.counts().queued, 2u);
  const auto a = store.take(0ms);  // in submission order, the interrupted one again
  ASSERT_EQ(a->task.id, "a");
  store.finish(*a, TaskState::completed, {{"correctness", true}});
  EXPECT_EQ(store.take(0ms)->task.id, "b");
  TaskStore reread(optionsIn(dir));
  EXPECT_EQ(reread.get("a")->state, TaskState::completed);
  EXPECT_EQ(reread.get("a")->result["correctness"], true);
}

TEST(TaskStore, ABadFileIsNamed) {
  const test::TempDir temp;
  test::writeText(temp / "junk.json", "{");
  CUSET_EXPECT_THROW_WITH(TaskStore{optionsIn(temp.path())}, "junk.json");
}

class RedisFleet : public QueueContract {};

TEST_P(RedisFleet, ASilentWorkersTaskIsTakenOverAndHasExactlyOneResult) {
  auto silentOptions = redisOptions();
  silentOptions.heartbeat = false;  // killed: it never says it is alive again
  RedisTaskQueue silent(silentOptions);
  RedisTaskQueue other(redisOptions());
  submit(silent, "t", Priority::normal);
  const auto first = silent.take(0ms);
  ASSERT_TRUE(first);
  EXPECT_FALSE(other.take(200ms));  // not yet: the first worker may still be alive
  const auto second = other.take(5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->task.id, "t");
  EXPECT_EQ(second->task.state, TaskState::processing);
  other.finish(*second, TaskState::completed, {{"by", "other"}});
  silent.finish(*first, TaskState::completed, {{"by", "silent"}});  // it was only slow: changes nothing
  EXPECT_EQ(other.get("t")->result["by"], "other");
  EXPECT_EQ(other.counts().completed, 1u);
}

TEST_P(RedisFleet, ATaskThatKillsItsWorkersFailsAfterTheBound) {
  auto silentOptions = redisOptions();
  silentOptions.heartbeat = false;
  silentOptions.maxDeliveries = 2;
  RedisTaskQueue a(silentOptions), b(silentOptions), c(silentOptions);
  submit(a, "poison", Priority::normal);
  ASSERT_TRUE(a.take(0ms));
  ASSERT_TRUE(b.take(5s));   // run 2
  EXPECT_FALSE(c.take(3s));  // run 3 is refused: the task fails instead
  const auto r = c.get("poison");
  EXPECT_EQ(r->state, TaskState::failed);
  EXPECT_EQ(r->result["error_code"], "INTERNAL_ERROR");
  EXPECT_NE(r->result["error_message"].get<std::string>().find("stopped without a result 2 times"), std::string::npos) << r->result.dump();
}

TEST_P(RedisFleet, AStoppingWorkerHandsItsTaskBackAtOnce) {
  RedisTaskQueue stopping(redisOptions());
  RedisTaskQueue other(redisOptions());
  submit(stopping, "t", Priority::normal);
  const auto lease = stopping.take(0ms);
  ASSERT_TRUE(lease);
  stopping.stop();
  EXPECT_TRUE(lease->cancel->load());
  EXPECT_EQ(other.get("t")->state, TaskState::queued);
  const auto again = other.take(0ms);  // no wait for the reclaim
  ASSERT_TRUE(again);
  EXPECT_EQ(again->task.id, "t");
}

TEST_P(RedisFleet, RequestsGoToTheWorkersOfTheirBackend) {
  auto server = redisOptions();
  server.workerBackend.clear();
  server.serverBackend = "cuda";  // "cuda" requests want a GPU worker's timings
  RedisTaskQueue front(server);
  auto cpu = redisOptions();
  RedisTaskQueue simWorker(cpu);
  cpu.workerBackend = "cuda";
  RedisTaskQueue gpuWorker(cpu);
  TaskRecord r;
  front.submit("timed", Priority::normal, {{"backend", "cuda"}}, false, r);
  front.submit("verdict", Priority::normal, {{"backend", "sim"}}, false, r);
  const auto onCpu = simWorker.take(0ms);
  ASSERT_TRUE(onCpu);
  EXPECT_EQ(onCpu->task.id, "verdict");
  EXPECT_FALSE(simWorker.take(0ms));  // a CPU worker never takes a GPU task
  EXPECT_EQ(gpuWorker.take(0ms)->task.id, "timed");
  EXPECT_THROW(front.take(0ms), Error);  // a server with no workers of its own has nothing to take
}

TEST(RedisQueue, AnAddressIsCheckedAndRedisAwayIsOneClearError) {
  for (const auto& [url, needle] : {std::pair{"http://127.0.0.1:6379", "redis://"}, std::pair{"redis://host:port", "port"}}) {
    RedisQueueOptions o;
    o.url = url;
    CUSET_EXPECT_THROW_WITH(RedisTaskQueue{o}, needle);
  }
  RedisQueueOptions away;
  away.url = "redis://127.0.0.1:" + std::to_string(test::RedisServer::freePort());
  RedisTaskQueue queue(away);  // Redis may come later
  TaskRecord r;
  CUSET_EXPECT_THROW_WITH(queue.submit("t", Priority::normal, {{"task_id", "t"}}, false, r), away.url.substr(8));
}

INSTANTIATE_TEST_SUITE_P(Redis, RedisFleet, ::testing::Values("redis"));

TEST(TaskStore, TaskIdsNameNoPath) {
  for (const char* ok : {"a", "task-1_2.x", "ABC"}) EXPECT_TRUE(validTaskId(ok)) << ok;
  for (const char* bad : {"", ".hidden", "../x", "a/b", "a b", "a\\b"}) EXPECT_FALSE(validTaskId(bad)) << bad;
  EXPECT_FALSE(validTaskId(std::string(129, 'a')));
}

TEST(KernelGymRequest, DefaultsAndOneMessageNamingTheField) {
  const ServeLimits limits;
  const auto ok = validateTaskRequest({{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}}, limits);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ((*ok)["num_correct_trials"], 5);
  EXPECT_EQ((*ok)["backend"], "cuda");
  EXPECT_EQ((*ok)["priority"], "normal");
  EXPECT_EQ((*ok)["force_refresh"], false);
  const auto triton = validateTaskRequest({{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"backend", "triton"}}, limits);
  ASSERT_TRUE(triton) << triton.error();
  EXPECT_EQ((*triton)["backend"], "triton");
  const struct {
    nlohmann::json body;
    std::string needle;
  } bad[] = {
      {{{"kernel_code", "k"}, {"reference_code", "r"}}, "'task_id' is required"},
      {{{"task_id", "t"}, {"kernel_code", 3}, {"reference_code", "r"}}, "'kernel_code' must be a string"},
      {{{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"timeout", 0}}, "'timeout' must be in [1, 3600]"},
      {{{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"backend", "cute"}}, "'backend'"},
      {{{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"entry_point", "Other"}}, "'entry_point'"},
      {{{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"force_refresh", 1}}, "'force_refresh' must be a boolean"},
  };
  for (const auto& b : bad) {
    const auto v = validateTaskRequest(b.body, limits);
    ASSERT_FALSE(v) << b.body.dump();
    EXPECT_NE(v.error().find(b.needle), std::string::npos) << v.error();
  }
}

TEST(KernelGymResponse, VerdictsBecomeKernelGymFieldsAndRewards) {
  const auto correct =
      responseFromResult("t", {{"verdict", "correct"},
                               {"backend", "cuda"},
                               {"timing", {{"kind", "cuda_cupti"}, {"median_ms", 2.0}, {"reference_median_ms", 5.0}, {"speedup", 2.5}}}});
  EXPECT_EQ(correct["status"], "completed");
  EXPECT_EQ(correct["kernel_runtime"], 2.0);
  EXPECT_EQ(correct["speedup"], 2.5);
  EXPECT_TRUE(correct["error_code"].is_null());
  EXPECT_DOUBLE_EQ(rewardFor("kevin", correct), 0.5 + 0.5 * 2.5);
  EXPECT_DOUBLE_EQ(rewardFor("threshold", correct), 2.0);
  EXPECT_DOUBLE_EQ(rewardFor("ladder", correct), 1.0);
  const auto failed = responseFromResult("t", {{"verdict", "compile_error"}, {"reason", "nvrtc: error"}});
  EXPECT_EQ(failed["compiled"], false);
  EXPECT_EQ(failed["error_code"], "COMPILATION_ERROR");
  EXPECT_DOUBLE_EQ(rewardFor("kevin", failed), 0.0);
  EXPECT_DOUBLE_EQ(rewardFor("ladder", failed), 0.0);
  const auto library = responseFromResult("t", {{"verdict", "correct"}, {"library_ops", {"aten::mm"}}});
  EXPECT_EQ(library["decoy_kernel"], true);
  EXPECT_TRUE(library["speedup"].is_null());
  EXPECT_EQ(responseFromResult("t", {{"verdict", "harness_error"}})["status"], "failed");
}

TEST(RateLimiter, BurstsOfTwiceTheRateThenWaitsPerClient) {
  RateLimiter limiter(2.0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(limiter.take("a"), 0.0) << i;
  const double wait = limiter.take("a");
  EXPECT_GT(wait, 0.0);
  EXPECT_LE(wait, 0.5);
  EXPECT_EQ(limiter.take("b"), 0.0);         // another client has its own bucket
  EXPECT_EQ(RateLimiter(0).take("a"), 0.0);  // 0: no limit
}

}  // namespace
}  // namespace cuset::service
