// TaskRunner (task_runner.hpp): an import the machine interrupts is tried again and never remembered as
// the reference's failure, one the reference itself fails is remembered; a warm engine judges task after
// task, is replaced after its runs, and one killed mid-task costs the task nothing but time.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../test_util.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/service/task_runner.hpp"

namespace cuset::service {
namespace {

namespace fs = std::filesystem;

// What every reference below ends with: KernelBench's input functions.
const std::string kInputs = R"(

def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
)";

// Its first import is killed by SIGKILL mid-trace, exactly as a worker's `kill -9` (or the OOM killer)
// kills the tracer; the marker beside the file makes the second one import.
const std::string kReferenceKilledOnce = R"(import os
import signal

import torch
import torch.nn as nn

try:  # only where the file lies in a folder it may write: the import's, not the judge's sandbox
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "interrupted-once"), "x").close()
except OSError:
    pass
else:
    os.kill(os.getpid(), signal.SIGKILL)


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)" + kInputs;

const std::string kReferenceWithoutModel = R"(import torch
)" + kInputs;

constexpr const char* kSolution = R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)";

// Counts its executions where it may write (the import's tracer; not the judge's sandbox).
const std::string kReferenceCountingImports = R"(import os

import torch
import torch.nn as nn

try:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "executions.log"), "a") as log:
        log.write("x\n")
except OSError:
    pass


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1
)" + kInputs;

RunnerOptions optionsIn(const fs::path& state) {
  RunnerOptions o;
  o.stateDir = state;
  o.cuset = CUSET_BINARY;
  o.backend = "sim";
  return o;
}

TaskRecord taskFor(const std::string& id, const std::string& reference) {
  TaskRecord t;
  t.id = id;
  t.request = {{"reference_code", reference}, {"kernel_code", kSolution}, {"backend", "sim"}, {"num_correct_trials", 1}, {"timeout", 300}};
  return t;
}

std::vector<fs::path> filesNamed(const fs::path& root, const std::string& name) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() == name) found.push_back(e.path());
  }
  return found;
}

TEST(TaskRunner, AnImportTheMachineInterruptsIsTriedAgainAndNeverRememberedAsTheReferencesFailure) {
  test::TempDir state;
  TaskRunner runner(optionsIn(state.path()));
  const std::atomic<bool> cancel{false};
  const auto [finished, body] = runner.run(taskFor("interrupted", kReferenceKilledOnce), cancel);
  ASSERT_EQ(filesNamed(state.path() / "references", "interrupted-once").size(), 1u) << "the first tracer was not killed: the test proves nothing";
  EXPECT_TRUE(filesNamed(state.path() / "references", "import-failed.txt").empty()) << body.dump();
  EXPECT_NE(body.value("error_code", nlohmann::json()).dump(), "\"VALIDATION_ERROR\"") << body.dump();
  EXPECT_EQ(body.value("correctness", false), true) << body.dump();
  EXPECT_EQ(finished, TaskState::completed) << body.dump();
}

TEST(TaskRunner, AReferenceThatDoesNotImportIsRememberedAsFailing) {
  test::TempDir state;
  TaskRunner runner(optionsIn(state.path()));
  const std::atomic<bool> cancel{false};
  const auto [finished, body] = runner.run(taskFor("no-model", kReferenceWithoutModel), cancel);
  EXPECT_EQ(finished, TaskState::failed);
  EXPECT_EQ(body.value("error_code", ""), "VALIDATION_ERROR") << body.dump();
  const auto remembered = filesNamed(state.path() / "references", "import-failed.txt");
  ASSERT_EQ(remembered.size(), 1u) << body.dump();
  EXPECT_EQ(readFile(remembered[0]), body.value("error_message", "")) << "the task's answer is the remembered one";
  const auto [again, second] = runner.run(taskFor("no-model-again", kReferenceWithoutModel), cancel);
  EXPECT_EQ(second.value("error_message", ""), body.value("error_message", ""));
}

std::size_t executionsUnder(const fs::path& references) {
  std::size_t n = 0;
  for (const auto& log : filesNamed(references, "executions.log")) {
    const std::string text = readFile(log);
    n += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  return n;
}

TEST(TaskRunner, WorkersSharingAReferenceCacheImportEachReferenceOnce) {
  // How often one import executes the file (the tracer may run it more than once)...
  test::TempDir alone;
  const std::atomic<bool> cancel{false};
  TaskRunner(optionsIn(alone.path())).run(taskFor("alone", kReferenceCountingImports), cancel);
  const std::size_t oneImport = executionsUnder(alone.path() / "references");
  ASSERT_GT(oneImport, 0u);
  // ...and two workers of one machine (their own state folders, one reference cache) sent it at once.
  test::TempDir machine;
  auto workerOptions = [&](const std::string& name) {
    RunnerOptions o = optionsIn(machine.path() / name);
    o.referenceDir = machine.path() / "references";
    return o;
  };
  TaskRunner a(workerOptions("a")), b(workerOptions("b"));
  nlohmann::json answerA, answerB;
  std::thread other([&] { answerA = a.run(taskFor("on-a", kReferenceCountingImports), cancel).second; });
  answerB = b.run(taskFor("on-b", kReferenceCountingImports), cancel).second;
  other.join();
  EXPECT_EQ(answerA.value("correctness", false), false) << "relu + 1 is not relu: " << answerA.dump();
  EXPECT_EQ(answerA.value("error_code", ""), "CORRECTNESS_ERROR") << answerA.dump();
  EXPECT_EQ(answerB.value("error_code", ""), "CORRECTNESS_ERROR") << answerB.dump();
  EXPECT_EQ(executionsUnder(machine.path() / "references"), oneImport) << "the reference was imported more than once";
}

const std::string kReference = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)" + kInputs;

double engineStartMs(const nlohmann::json& body) { return body.at("stages").at("engine_start_ms").get<double>(); }

TEST(TaskRunner, AWarmEngineJudgesTaskAfterTaskAndIsReplacedAfterItsRuns) {
  test::TempDir state;
  RunnerOptions o = optionsIn(state.path());
  o.engineMaxRuns = 2;
  TaskRunner runner(o);
  const std::atomic<bool> cancel{false};
  std::vector<nlohmann::json> answers;
  for (int i = 0; i < 3; ++i) answers.push_back(runner.run(taskFor("warm-" + std::to_string(i), kReference), cancel).second);
  for (const auto& a : answers) {
    EXPECT_EQ(a.value("correctness", false), true) << a.dump();
    for (const char* stage : {"import_ms", "engine_start_ms", "translate_ms", "compile_ms", "run_ms", "harness_ms", "total_ms"}) {
      EXPECT_TRUE(a.at("stages").contains(stage)) << stage << ": " << a.dump();
    }
  }
  EXPECT_GT(engineStartMs(answers[0]), 0.0) << "the first task starts the engine";
  EXPECT_EQ(engineStartMs(answers[1]), 0.0) << "the second finds it warm";
  EXPECT_GT(engineStartMs(answers[2]), 0.0) << "after --engine-max-runs 2 the engine is replaced";
  // The per-task path says the same.
  o.warmEngines = false;
  o.stateDir = state.path() / "per-task";
  const auto [finished, body] = TaskRunner(o).run(taskFor("per-task", kReference), cancel);
  EXPECT_EQ(body.value("correctness", false), true) << body.dump();
  EXPECT_EQ(engineStartMs(body), 0.0);
}

// This process's child `cuset engine`, or -1.
pid_t engineChild() {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    std::istringstream(line.substr(close + 2)) >> state >> ppid;
    if (ppid != ::getpid()) continue;
    const std::string cmdline = readFile(e.path() / "cmdline");
    if (cmdline.find(std::string("\0engine", 7)) != std::string::npos) return std::stoi(name);
  }
  return -1;
}

TEST(TaskRunner, AnEngineKilledMidTaskCostsTheTaskNothingButTime) {
  test::TempDir state;
  TaskRunner runner(optionsIn(state.path()));
  const std::atomic<bool> cancel{false};
  // Killed once its run has begun (run.json is written before any candidate is judged).
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (fs::exists(state.path() / "work" / "killed" / "run" / "run.json")) {
        if (const pid_t pid = engineChild(); pid > 0 && ::kill(pid, SIGKILL) == 0) killed = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const auto [finished, body] = runner.run(taskFor("killed", kReference), cancel);
  killer.join();
  ASSERT_TRUE(killed) << "the engine was not killed mid-task: the test proves nothing";
  EXPECT_EQ(finished, TaskState::completed) << body.dump();
  EXPECT_EQ(body.value("correctness", false), true) << body.dump();
  // A second task finds the replacement warm.
  const auto [next, second] = runner.run(taskFor("after", kReference), cancel);
  EXPECT_EQ(second.value("correctness", false), true) << second.dump();
  EXPECT_EQ(engineStartMs(second), 0.0) << second.dump();
}

}  // namespace
}  // namespace cuset::service
