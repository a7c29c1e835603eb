#pragma once
// One task of `cuset serve`, judged exactly as `cuset eval` judges a KernelBench solution: the
// reference (a KernelBench `Model` file, imported once per content and cached, or a problem of the
// suite the server was started with) and the solution laid out as a KernelBench run folder, then
// `cuset eval`'s run of it in a warm `cuset engine` process kept per worker (docs/serve.md "Warm
// engines"), or in a `cuset eval` process of its own per task. Either way every trial runs in the
// sandbox with its limits; a cancelled or timed-out task's process group is killed. Nothing a request
// holds reaches a shell or names a path: files are named by the server.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/common/line_process.hpp"
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
  // A warm `cuset engine` per worker and backend; false: a `cuset eval` process per task (the old path,
  // kept for measuring and as the fallback for a machine where engines misbehave).
  bool warmEngines = true;
  // An engine is replaced (after its task, which it finishes) once it has run this many tasks, or grown
  // past this many MiB resident: what it keeps (compiled references, caches) only grows.
  std::size_t engineMaxRuns = 500;
  std::size_t engineMaxMiB = 4096;
  std::chrono::seconds engineStartTimeout{180};
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

  // How one `cuset eval` run of a task went, by either path.
  struct EvalOutcome {
    bool cancelled = false, timedOut = false;
    std::string failure;       // the run wrote no result: why
    double engineStartMs = 0;  // a warm engine had to be started first
  };
  EvalOutcome evalInProcess(const std::vector<std::string>& args, std::chrono::seconds timeout, const std::atomic<bool>& cancel);
  EvalOutcome evalInEngine(const std::vector<std::string>& args, std::chrono::seconds timeout, const std::atomic<bool>& cancel, std::size_t worker,
                           const std::string& backend);

  struct Engine {
    std::unique_ptr<LineProcess> process;
    std::size_t runs = 0;
  };
  // Started on first use and after one ends; (worker, backend) -> its engine, used by that worker's
  // thread alone (the lock guards the map, not the engines).
  Engine& engineSlot(std::size_t worker, const std::string& backend);

  RunnerOptions options_;
  std::mutex enginesMutex_;
  std::map<std::pair<std::size_t, std::string>, Engine> engines_;
};

}  // namespace cuset::service
