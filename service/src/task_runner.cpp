#include "cuset/service/task_runner.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <regex>

#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/service/kernelgym_api.hpp"

namespace cuset::service {
namespace {

namespace fs = std::filesystem;

using Clock = std::chrono::steady_clock;

Unexpected fail(std::string message) { return Unexpected(std::move(message)); }

double millisecondsSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// Where a task's time went (the /v1 response's `stages`; the queue's wait is the server's to add): the
// reference's import or lookup, starting an engine, the candidate's own stages as its record gives them
// (translation into a launch plan, NVRTC and the simulator's host build, the trials with their checks),
// and the harness's share (process start, the reference check, the run folder).
nlohmann::json stageTimes(const nlohmann::json& record, double importMs, double engineStartMs, double totalMs) {
  const nlohmann::json t = record.value("timings_ms", nlohmann::json::object());
  const auto ms = [&](const char* name) { return t.contains(name) && t[name].is_number() ? t[name].get<double>() : 0.0; };
  const double translate = ms("manifest") + ms("translate"), compile = ms("compile") + ms("sim_compile"), run = ms("run");
  const auto rounded = [](double v) { return std::round(v * 10) / 10; };
  return {{"import_ms", rounded(importMs)},
          {"engine_start_ms", rounded(engineStartMs)},
          {"translate_ms", rounded(translate)},
          {"compile_ms", rounded(compile)},
          {"run_ms", rounded(run)},
          {"harness_ms", rounded(std::max(0.0, totalMs - importMs - engineStartMs - translate - compile - run))},
          {"total_ms", rounded(totalMs)}};
}

std::string tail(const std::string& s, std::size_t n = 2000) { return s.size() > n ? s.substr(s.size() - n) : s; }

// "level1/kb19_relu" -> (1, 19)
bool parseProblemId(const std::string& id, int& level, int& number) {
  static const std::regex kId(R"(level(\d+)/kb(\d+)_[a-z0-9_]+)");
  std::smatch m;
  if (!std::regex_match(id, m, kId)) return false;
  level = std::stoi(m[1].str());
  number = std::stoi(m[2].str());
  return true;
}

// The start of the message of an import the machine interrupted: a task answered with it is not the
// reference's failure (INTERNAL_ERROR, not VALIDATION_ERROR), and nothing about the reference is kept.
constexpr std::string_view kImportInterrupted =
    "the reference's import was interrupted (a fault of this machine, not of the reference; "
    "nothing was remembered, send the task again): ";

struct ImportOutcome {
  std::string why;
  bool transient = true;  // the machine's doing, not the reference's
};

// Why `cuset import` gave no problem: the tracer's verdict on the file when its report has one, else an
// interruption (killed, out of time, or ended before its report).
ImportOutcome importOutcome(const SubprocessResult& r, const fs::path& reportFile) {
  if (r.timedOut) return {"the import ran past its time limit", true};
  if (r.signal != 0) return {fmt::format("the import was killed by signal {}", r.signal), true};
  ImportOutcome outcome{tail(r.output, 1500), true};
  if (!fs::exists(reportFile)) return outcome;
  try {
    const auto report = nlohmann::json::parse(readFile(reportFile));
    for (const auto& problem : report.value("problems", nlohmann::json::array())) {
      outcome.why = problem.value("reason", outcome.why);
      outcome.transient = problem.value("transient", false);
    }
  } catch (const std::exception&) {
  }
  return outcome;
}

}  // namespace

TaskRunner::TaskRunner(RunnerOptions options) : options_(std::move(options)) {
  if (options_.referenceDir.empty()) options_.referenceDir = options_.stateDir / "references";
  fs::create_directories(options_.referenceDir);
  fs::create_directories(options_.stateDir / "work");
}

Expected<TaskRunner::Problem> TaskRunner::problemFor(const std::string& reference, const std::atomic<bool>& cancel) {
  Problem p;
  // A problem id of the server's suite ("level1/kb19_relu"): only a name of that exact shape, and only
  // one that is a problem folder there.
  if (!options_.problemsDir.empty() && reference.size() < 128 && parseProblemId(reference, p.level, p.number)) {
    if (!fs::exists(options_.problemsDir / reference / "problem.yaml")) return fail(fmt::format("no problem '{}' in the server's suite", reference));
    p.suite = options_.problemsDir;
    p.id = reference;
    return p;
  }
  return imported(reference, cancel);
}

Expected<TaskRunner::Problem> TaskRunner::imported(const std::string& reference, const std::atomic<bool>& cancel) {
  const std::string hash = ContentHasher().add("kernelbench-reference-v1").add(reference).digest().hex();
  const fs::path dir = options_.referenceDir / hash;
  const fs::path suite = dir / "suite";
  const fs::path failed = dir / "import-failed.txt";
  fs::create_directories(dir);
  // One import per reference among every thread and process sharing this reference folder (the workers
  // of one machine); the others wait and find the suite, or the recorded failure.
  const FileLock importing(dir / "import.lock");
  auto found = [&]() -> std::optional<Problem> {
    if (!fs::exists(suite / "level1")) return std::nullopt;
    for (const auto& e : fs::directory_iterator(suite / "level1")) {
      if (fs::exists(e.path() / "problem.yaml")) return Problem{suite, "level1/" + e.path().filename().string(), 1, 1};
    }
    return std::nullopt;
  };
  if (auto p = found()) return *p;
  if (fs::exists(failed)) return fail(readFile(failed));
  const fs::path source = dir / "src" / "KernelBench" / "level1" / "1_reference.py";
  fs::create_directories(source.parent_path());
  writeFileAtomic(source, reference);
  // An import the machine interrupted (the tracer killed, a process gone, time up) says nothing about the
  // reference: it is tried once more here, and never recorded as the reference's failure.
  std::string interrupted;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const SubprocessResult r = runSubprocess({options_.cuset.string(), "import", "kernelbench", (dir / "src").string(), "--out", suite.string(),
                                              "--levels", "1", "--jobs", "1", "--commit", "cuset-serve"},
                                             options_.importTimeout, 1 << 20, &cancel);
    if (r.cancelled) return fail("cancelled while its reference was imported");
    if (auto p = found()) return *p;
    const ImportOutcome outcome = importOutcome(r, suite / "import-report.json");
    if (!outcome.transient) {
      const std::string message = "reference_code does not import as a KernelBench problem: " + outcome.why;
      writeFileAtomic(failed, message);  // the same reference fails the same way: not imported again
      return fail(message);
    }
    interrupted = outcome.why;
  }
  return fail(std::string(kImportInterrupted) + interrupted);
}

TaskRunner::Engine& TaskRunner::engineSlot(std::size_t worker, const std::string& backend) {
  const std::lock_guard lock(enginesMutex_);
  return engines_[{worker, backend}];
}

TaskRunner::EvalOutcome TaskRunner::evalInProcess(const std::vector<std::string>& args, std::chrono::seconds timeout,
                                                  const std::atomic<bool>& cancel) {
  std::vector<std::string> command = {options_.cuset.string(), "eval"};
  command.insert(command.end(), args.begin(), args.end());
  const SubprocessResult r = runSubprocess(command, timeout, 1 << 20, &cancel);
  return {.cancelled = r.cancelled, .timedOut = r.timedOut, .failure = tail(r.output)};
}

// The engine runs the task's trials in sandboxed children, as `cuset eval` does: an engine that ends
// mid-task was ended by something else (the OOM killer, a harness defect), so the task is run once more
// on a fresh engine, and if that fails too it is the machine's failure, never the kernel's.
TaskRunner::EvalOutcome TaskRunner::evalInEngine(const std::vector<std::string>& args, std::chrono::seconds timeout, const std::atomic<bool>& cancel,
                                                 std::size_t worker, const std::string& backend) {
  Engine& engine = engineSlot(worker, backend);
  EvalOutcome out;
  std::string lost;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!engine.process || !engine.process->alive()) {
      const auto start = Clock::now();
      const fs::path log = options_.stateDir / "work" / fmt::format("engine-{}-{}.log", worker, backend);
      engine = Engine{std::make_unique<LineProcess>(std::vector<std::string>{options_.cuset.string(), "engine"}, log), 0};
      const LineProcess::Reply ready = engine.process->exchange("", options_.engineStartTimeout, &cancel);
      out.engineStartMs += millisecondsSince(start);
      if (ready.cancelled) return {.cancelled = true};
      if (!ready.line) {
        lost = fmt::format("the evaluation engine did not start ({}): {}", engine.process->ending(), tail(engine.process->stderrTail()));
        engine.process.reset();
        continue;
      }
    }
    const LineProcess::Reply reply = engine.process->exchange(nlohmann::json{{"args", args}}.dump(), timeout, &cancel);
    if (reply.cancelled || reply.timedOut) {
      engine.process.reset();
      out.cancelled = reply.cancelled;
      out.timedOut = reply.timedOut;
      return out;
    }
    if (!reply.line) {
      lost = fmt::format("the evaluation engine ended mid-task ({}): {}", engine.process->ending(), tail(engine.process->stderrTail()));
      std::cerr << "cuset: " << lost << "; running the task again on a new engine" << std::endl;
      engine.process.reset();
      continue;
    }
    ++engine.runs;
    const nlohmann::json answer = nlohmann::json::parse(*reply.line, nullptr, false);
    if (answer.is_discarded() || !answer.value("ok", false)) out.failure = answer.is_discarded() ? *reply.line : answer.value("error", std::string());
    // What an engine keeps only grows: past its bounds it is replaced before the next task.
    const std::size_t mib = answer.is_discarded() ? 0 : answer.value("rss_bytes", std::size_t{0}) >> 20;
    if (engine.runs >= options_.engineMaxRuns || mib >= options_.engineMaxMiB) engine.process.reset();
    return out;
  }
  out.failure = lost;
  return out;
}

std::pair<TaskState, nlohmann::json> TaskRunner::run(const TaskRecord& task, const std::atomic<bool>& cancel, std::size_t worker) {
  const auto started = Clock::now();
  const nlohmann::json& q = task.request;
  auto problem = problemFor(q.at("reference_code").get<std::string>(), cancel);
  const double importMs = millisecondsSince(started);
  if (cancel) return {TaskState::cancelled, failureResponse(task.id, "CANCELLED", "cancelled")};
  if (!problem) {
    const bool interrupted = problem.error().starts_with(kImportInterrupted);
    return {TaskState::failed, failureResponse(task.id, interrupted ? "INTERNAL_ERROR" : "VALIDATION_ERROR", problem.error())};
  }

  const fs::path work = options_.stateDir / "work" / task.id;
  std::error_code ec;
  fs::remove_all(work, ec);
  const fs::path candidates = work / "candidates";
  fs::create_directories(candidates);
  writeFileAtomic(candidates / fmt::format("level_{}_problem_{}_sample_0_kernel.py", problem->level, problem->number),
                  q.at("kernel_code").get<std::string>());
  const std::string asked = q.value("backend", "cuda");
  const std::string backend = asked == "sim" ? "sim" : asked == "gpu" ? "cuda" : options_.backend;
  const fs::path out = work / "run";
  const auto timeout = std::chrono::seconds(q.value("timeout", 300));
  std::vector<std::string> args = {"--candidates",
                                   candidates.string(),
                                   "--problems",
                                   problem->suite.string(),
                                   "--backend",
                                   backend,
                                   "--trials",
                                   std::to_string(q.value("num_correct_trials", 5)),
                                   "--min-timing-samples",
                                   std::to_string(q.value("num_perf_trials", 100)),
                                   "--jobs",
                                   std::to_string(options_.jobsPerTask),
                                   "--out",
                                   out.string(),
                                   "--quiet"};
  // KernelGYM's "triton": the kernel is Triton, judged on the server's backend.
  if (asked == "triton") args.insert(args.end(), {"--backend-lang", "triton"});
  if (!options_.devices.empty()) args.insert(args.end(), {"--devices", std::to_string(options_.devices[worker % options_.devices.size()])});
  const EvalOutcome r = options_.warmEngines ? evalInEngine(args, timeout, cancel, worker, backend) : evalInProcess(args, timeout, cancel);
  std::pair<TaskState, nlohmann::json> outcome;
  if (r.cancelled) {
    outcome = {TaskState::cancelled, failureResponse(task.id, "CANCELLED", "cancelled while it ran")};
  } else if (r.timedOut) {
    outcome = {TaskState::failed,
               failureResponse(task.id, "TIMEOUT_ERROR", fmt::format("the evaluation ran past the task's timeout of {} s", timeout.count()))};
  } else {
    std::ifstream results(out / "results.jsonl");
    std::string line;
    if (std::getline(results, line) && !line.empty()) {
      nlohmann::json record = nlohmann::json::parse(line);
      nlohmann::json response = responseFromResult(task.id, record);
      response["stages"] = stageTimes(record, importMs, r.engineStartMs, millisecondsSince(started));
      response["record"] = std::move(record);  // the /v1 API's (a local run's results.jsonl line); KernelGYM's does not show it
      outcome = {response["status"] == "completed" ? TaskState::completed : TaskState::failed, std::move(response)};
    } else {
      outcome = {TaskState::failed, failureResponse(task.id, "INTERNAL_ERROR", "the evaluation wrote no result: " + tail(r.failure))};
    }
  }
  fs::remove_all(work, ec);
  return outcome;
}

}  // namespace cuset::service
