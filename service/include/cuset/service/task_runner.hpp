#pragma once
// One task of `cuset serve`, judged exactly as `cuset eval` judges a KernelBench solution: the
// reference (a KernelBench `Model` file, imported once per content and cached, or a problem of the
// suite the server was started with) and the solution laid out as a KernelBench run folder, then
// `cuset eval` in a process of its own (its sandbox, its limits; a cancelled task's process group is
// killed). Nothing a request holds reaches a shell or names a path: files are named by the server.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/service/task_store.hpp"

namespace cuset::service {

struct RunnerOptions {
  std::filesystem::path stateDir;  // work/<task>/ (and references/ when referenceDir is empty)
  // Imported references, <hash>/ each: one folder every worker of a machine may share (a file lock per
  // reference makes one of them import it); empty: stateDir/references.
  std::filesystem::path referenceDir;
  std::filesystem::path cuset;        // the binary to run `eval` and `import` with (this one)
  std::string backend = "auto";       // what "cuda" (KernelGYM's default) means here: sim, cuda or auto
  std::filesystem::path problemsDir;  // a suite whose problem ids a request may name; empty: none
  std::size_t jobsPerTask = 1;        // `cuset eval --jobs`
  std::chrono::seconds importTimeout{900};
  std::vector<int> devices;  // GPU ordinals; worker i judges on devices[i % size] (`cuset eval --devices`); empty: every visible GPU
};

class TaskRunner {
 public:
  explicit TaskRunner(RunnerOptions options);
  // The response body (kernelgym_api.hpp) and the state the task ends in; `worker` picks the GPU.
  std::pair<TaskState, nlohmann::json> run(const TaskRecord& task, const std::atomic<bool>& cancel, std::size_t worker = 0);
  const RunnerOptions& options() const { return options_; }

 private:
  struct Problem {
    std::filesystem::path suite;
    std::string id;  // "level1/kb1_reference"
    int level = 1, number = 1;
  };
  Expected<Problem> problemFor(const std::string& reference, const std::atomic<bool>& cancel);
  Expected<Problem> imported(const std::string& reference, const std::atomic<bool>& cancel);

  RunnerOptions options_;
};

}  // namespace cuset::service
