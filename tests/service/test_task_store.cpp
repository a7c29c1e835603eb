// `cuset serve`'s queue and request checks (task_store.hpp, kernelgym_api.hpp, reward.hpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "../test_util.hpp"
#include "cuset/service/kernelgym_api.hpp"
#include "cuset/service/rate_limiter.hpp"
#include "cuset/service/reward.hpp"
#include "cuset/service/task_store.hpp"

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

std::string submit(TaskStore& store, const std::string& id, Priority p) {
  TaskRecord r;
  EXPECT_EQ(store.submit(id, p, {{"task_id", id}}, false, r), TaskStore::Submitted::accepted);
  return r.id;
}

TEST(TaskStore, HigherPriorityFirstAndLowPassedOverAtMostTheBound) {
  const test::TempDir temp;
  const fs::path dir = temp.path();
  TaskStore store(optionsIn(dir));
  submit(store, "low", Priority::low);
  for (int i = 0; i < 4; ++i) submit(store, "high" + std::to_string(i), Priority::high);
  std::vector<std::string> order;
  while (auto t = store.next(0ms)) order.push_back(t->id);
  // Passed over twice, low goes third, before the other high ones.
  EXPECT_EQ(order, (std::vector<std::string>{"high0", "high1", "low", "high2", "high3"}));
}

TEST(TaskStore, AcceptedMeansOnDiskAndARestartRunsWhatWasRunning) {
  const test::TempDir temp;
  const fs::path dir = temp.path();
  {
    TaskStore store(optionsIn(dir));
    submit(store, "a", Priority::normal);
    submit(store, "b", Priority::normal);
    ASSERT_EQ(store.next(0ms)->id, "a");  // processing when the server stops
    TaskRecord existing;
    EXPECT_EQ(store.submit("a", Priority::normal, {}, false, existing), TaskStore::Submitted::existing);
    EXPECT_EQ(existing.state, TaskState::processing);
  }
  TaskStore store(optionsIn(dir));
  EXPECT_EQ(store.counts().queued, 2u);
  EXPECT_EQ(store.next(0ms)->id, "a");  // in submission order, the interrupted one again
  store.finish("a", TaskState::completed, {{"correctness", true}});
  EXPECT_EQ(store.next(0ms)->id, "b");
  TaskStore reread(optionsIn(dir));
  EXPECT_EQ(reread.get("a")->state, TaskState::completed);
  EXPECT_EQ(reread.get("a")->result["correctness"], true);
}

TEST(TaskStore, CancelStopsQueuedAtOnceAndFlagsRunning) {
  const test::TempDir temp;
  const fs::path dir = temp.path();
  TaskStore store(optionsIn(dir));
  submit(store, "run", Priority::normal);
  submit(store, "wait", Priority::normal);
  const auto running = store.next(0ms);
  ASSERT_TRUE(running);
  const auto flag = store.cancelFlag("run");
  EXPECT_TRUE(store.cancel("wait"));
  EXPECT_EQ(store.get("wait")->state, TaskState::cancelled);
  EXPECT_FALSE(store.next(0ms));  // the cancelled one never runs
  EXPECT_FALSE(flag->load());
  EXPECT_TRUE(store.cancel("run"));
  EXPECT_TRUE(flag->load());
  EXPECT_FALSE(store.cancel("nobody"));
  EXPECT_FALSE(store.cancel("wait"));  // finished
}

TEST(TaskStore, TheQueueHasABoundAndABadFileIsNamed) {
  const test::TempDir temp;
  const fs::path dir = temp.path();
  TaskStoreOptions o = optionsIn(dir);
  o.maxQueued = 1;
  {
    TaskStore store(o);
    submit(store, "one", Priority::normal);
    TaskRecord r;
    EXPECT_EQ(store.submit("two", Priority::normal, {}, false, r), TaskStore::Submitted::queueFull);
  }
  test::writeText(dir / "junk.json", "{");
  CUSET_EXPECT_THROW_WITH(TaskStore{o}, "junk.json");
}

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
  const struct {
    nlohmann::json body;
    std::string needle;
  } bad[] = {
      {{{"kernel_code", "k"}, {"reference_code", "r"}}, "'task_id' is required"},
      {{{"task_id", "t"}, {"kernel_code", 3}, {"reference_code", "r"}}, "'kernel_code' must be a string"},
      {{{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"timeout", 0}}, "'timeout' must be in [1, 3600]"},
      {{{"task_id", "t"}, {"kernel_code", "k"}, {"reference_code", "r"}, {"backend", "triton"}}, "'backend'"},
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
