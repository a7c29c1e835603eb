// kill -9 anywhere: `cuset eval`, `cuset train` and `cuset loop` are killed at random moments and
// resumed until they finish. Nothing finished may be lost or duplicated, and the end state must equal
// an uninterrupted run's. The kill times come from a seeded generator (printed on failure).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "test_util.hpp"

namespace cuset {
namespace {

namespace fs = std::filesystem;

// Starts `cuset args...` with output to `log`; returns its pid.
pid_t start(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::setpgid(0, 0);  // its own group: the kill takes its helper processes too, as a crash of the node would
    std::vector<char*> argv = {const_cast<char*>(CUSET_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(CUSET_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

int finish(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The uninterrupted run, timed: the kill times are drawn as fractions of it, so that a fast machine
// (or a slow one) still sees the run killed in the middle, not after it ended.
double timedFinish(const std::vector<std::string>& args, const fs::path& log) {
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(finish(start(args, log)), 0) << test::readText(log);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
}

// Runs until it exits by itself, killing it (and its helpers) after a random 5-60% of the
// uninterrupted run's time each time, and restarting it with `resumeArgs`. Returns how many times it
// was killed.
int runWithKills(const std::vector<std::string>& firstArgs, const std::vector<std::string>& resumeArgs, const fs::path& log, std::mt19937& rng,
                 double straightMs, int maxKills) {
  std::uniform_int_distribution<int> delay(std::max(20, static_cast<int>(0.05 * straightMs)), std::max(40, static_cast<int>(0.6 * straightMs)));
  int kills = 0;
  for (bool first = true;; first = false) {
    const pid_t pid = start(first ? firstArgs : resumeArgs, log);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay(rng));
    int status = 0;
    pid_t done = 0;
    while (std::chrono::steady_clock::now() < deadline && (done = ::waitpid(pid, &status, WNOHANG)) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (done == pid || kills >= maxKills) {
      const int rc = done == pid ? (WIFEXITED(status) ? WEXITSTATUS(status) : -1) : finish(pid);
      EXPECT_EQ(rc, 0) << "the run failed after " << kills << " kill(s); see " << log << ":\n" << test::readText(log);
      return kills;
    }
    ::kill(-pid, SIGKILL);
    finish(pid);
    ++kills;
  }
}

std::map<std::string, std::string> verdicts(const fs::path& results) {
  std::map<std::string, std::string> out;
  std::set<std::string> keys;
  const std::string text = test::readText(results);
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto r = nlohmann::json::parse(text.substr(start, end - start));
    const std::string key = r["model"].get<std::string>() + "/" + r["problem"].get<std::string>() + "/" + std::to_string(r["sample"].get<int>());
    EXPECT_TRUE(keys.insert(key).second) << key << " was recorded twice";
    out[key] = r["verdict"];
  }
  return out;
}

// CUSET_CRASH_SEED=N replays the kill times of a failed run.
std::uint64_t seedOfThisRun() {
  const char* given = std::getenv("CUSET_CRASH_SEED");
  const std::uint64_t seed = given != nullptr ? std::strtoull(given, nullptr, 10) : std::random_device{}();
  std::printf("kill-time seed: %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

TEST(CrashResume, EvalKilledAnywhereEndsAsAnUninterruptedRun) {
  test::TempDir dir;
  fs::create_directories(dir / "problems" / "level1");
  for (const char* p : {"relu", "leaky_relu", "softmax_rows", "add_bias_broadcast", "row_sum", "sigmoid", "silu", "elu", "row_max", "argmax_rows"}) {
    fs::copy(fs::path(CUSET_PROBLEMS_DIR) / "level1" / p, dir / "problems" / "level1" / p, fs::copy_options::recursive);
  }
  const std::vector<std::string> common = {"eval",         "-q",
                                           "--backend",    "sim",
                                           "--trials",     "2",
                                           "--seed",       "9",
                                           "--jobs",       "2",
                                           "--problems",   (dir / "problems").string(),
                                           "--candidates", (dir / "problems").string()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  // Separate compile caches: the crashed run does the straight run's work, so its timing applies.
  const double straightMs =
      timedFinish(with({"--out", (dir / "straight").string(), "--cache-dir", (dir / "cache-straight").string()}), dir / "straight.log");
  ASSERT_FALSE(::testing::Test::HasFailure());
  const auto want = verdicts(dir / "straight" / "results.jsonl");
  ASSERT_GE(want.size(), 8u);

  std::mt19937 rng(static_cast<std::uint32_t>(seedOfThisRun()));
  const int kills = runWithKills(with({"--out", (dir / "crashed").string(), "--cache-dir", (dir / "cache").string()}),
                                 with({"--out", (dir / "crashed").string(), "--cache-dir", (dir / "cache").string(), "--resume"}),
                                 dir / "crashed.log", rng, straightMs, 12);
  EXPECT_GE(kills, 1);
  EXPECT_EQ(verdicts(dir / "crashed" / "results.jsonl"), want);
  EXPECT_EQ(nlohmann::json::parse(test::readText(dir / "crashed" / "run.json"))["status"], "finished");
}

TEST(CrashResume, TrainingKilledAnywhereEndsWithTheSameWeights) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", test::tinyTrainConfig(24));
  const std::vector<std::string> train = {"train", "--config", (dir / "c.yaml").string()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = train;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const double straightMs = timedFinish(with({"--out", (dir / "straight").string()}), dir / "straight.log");
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::mt19937 rng(static_cast<std::uint32_t>(seedOfThisRun()));
  const int kills = runWithKills(with({"--out", (dir / "crashed").string()}), with({"--out", (dir / "crashed").string(), "--resume"}),
                                 dir / "crashed.log", rng, straightMs, 12);
  EXPECT_GE(kills, 1);
  std::string checkpoints;
  for (const auto& e : fs::directory_iterator(dir / "crashed/checkpoints")) checkpoints += " " + e.path().filename().string();
  EXPECT_EQ(test::readText(dir / "crashed/final/model.safetensors"), test::readText(dir / "straight/final/model.safetensors"))
      << "the final weights differ from the uninterrupted run's after " << kills << " kill(s); checkpoints:" << checkpoints << "\nlog:\n"
      << test::readText(dir / "crashed.log");
  std::vector<int> steps;
  const std::string metrics = test::readText(dir / "crashed/metrics.jsonl");
  for (std::size_t start = 0, end; (end = metrics.find('\n', start)) != std::string::npos; start = end + 1) {
    steps.push_back(nlohmann::json::parse(metrics.substr(start, end - start))["step"].get<int>());
  }
  EXPECT_EQ(steps, (std::vector<int>{3, 6, 9, 12, 15, 18, 21, 24}));
}

TEST(CrashResume, TheLoopKilledAnywhereEndsWithTheSameComparison) {
  test::TempDir dir;
  test::writeText(dir / "loop.yaml", R"(name: crash
seeds: [1]
data:
  synth: {per_family: 3, seed: 1, families: [unary, reduce], heldout_families: [scan], heldout_instances: 1, heldout_variants: 1, heldout_per_family: 1, trials: 1}
train:
  threads: 1
  model:
    config: {model_type: qwen2, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1,
             max_position_embeddings: 1024, rope_theta: 10000.0, rms_norm_eps: 1.0e-6, tie_word_embeddings: true}
  tokenizer: {train_vocab_size: 300}
  data: {max_tokens: 256}
  batch: {size: 2}
  steps: {max: 6, log_every: 2, save_every: 2}
objectives: [sft]
generate: {samples: 2, max_new_tokens: 16, device: cpu, threads: 1}
eval: {backend: sim, trials: 1, seed: 5}
)");
  // Separate caches (the loop's compiles, simulator builds and translations go to $XDG_CACHE_HOME/cuset):
  // the crashed run does the straight run's work, so the straight run's time places the kills. With one
  // cache the crashed run could finish before the first kill.
  const char* callerCache = std::getenv("XDG_CACHE_HOME");
  const std::string restoreCache = callerCache ? callerCache : "";
  ::setenv("XDG_CACHE_HOME", (dir / "cache-straight").c_str(), 1);
  const double straightMs =
      timedFinish({"loop", "--config", (dir / "loop.yaml").string(), "--out", (dir / "straight").string()}, dir / "straight.log");
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::mt19937 rng(static_cast<std::uint32_t>(seedOfThisRun()));
  const std::vector<std::string> args = {"loop", "--config", (dir / "loop.yaml").string(), "--out", (dir / "crashed").string()};
  ::setenv("XDG_CACHE_HOME", (dir / "cache-crashed").c_str(), 1);
  const int kills = runWithKills(args, args, dir / "crashed.log", rng, straightMs, 12);
  if (callerCache) {
    ::setenv("XDG_CACHE_HOME", restoreCache.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
  EXPECT_GE(kills, 1);
  // The comparison itself: pass@k per objective and set, and every run's numbers (not its timings).
  const nlohmann::json a = nlohmann::json::parse(test::readText(dir / "straight/comparison.json"));
  const nlohmann::json b = nlohmann::json::parse(test::readText(dir / "crashed/comparison.json"));
  EXPECT_EQ(a["objectives"].dump(), b["objectives"].dump());
  EXPECT_EQ(a["sets"].dump(), b["sets"].dump());
  ASSERT_EQ(a["runs"].size(), b["runs"].size());
  for (std::size_t i = 0; i < a["runs"].size(); ++i) {
    nlohmann::json x = a["runs"][i], y = b["runs"][i];
    x.erase("dir");
    y.erase("dir");
    EXPECT_EQ(x.dump(), y.dump()) << "run " << i;
  }
}

}  // namespace
}  // namespace cuset
