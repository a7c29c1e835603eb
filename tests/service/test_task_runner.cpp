// TaskRunner's imported references (task_runner.hpp): an import the machine interrupts is tried again and
// never remembered as the reference's failure; one the reference itself fails is remembered.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "../test_util.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/service/task_runner.hpp"

namespace cuset::service {
namespace {

namespace fs = std::filesystem;

// Its first import is killed by SIGKILL mid-trace, exactly as a worker's `kill -9` (or the OOM killer)
// kills the tracer; the marker beside the file makes the second one import.
constexpr const char* kReferenceKilledOnce = R"(import os
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


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
)";

constexpr const char* kReferenceWithoutModel = R"(import torch


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
)";

constexpr const char* kSolution = R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)";

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

}  // namespace
}  // namespace cuset::service
