#include "cuset/evaluator/pipeline/reference_check.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/worker_process.hpp"
#include "cuset/evaluator/sandbox/process_roles.hpp"

namespace cuset {

namespace {

// One request to the helper: the reference run once (`full` false) or checkProblem() (`full` true).
// Returns the failures (empty: passed); a full check's defects go to `check`.
std::vector<std::string> askHelper(WorkerProcess& helper, const std::filesystem::path& problemsDir, const std::string& id, const std::string& sizeSet,
                                   std::uint64_t seed, bool full, std::chrono::milliseconds timeout, ProblemCheckResult* check) {
  sandbox::Message request;
  request.header = {{"problems_dir", std::filesystem::absolute(problemsDir).string()},
                    {"id", id},
                    {"size_set", sizeSet},
                    {"seed", std::to_string(seed)},
                    {"full", full}};
  auto reply = helper.call(request, std::chrono::steady_clock::now() + timeout);
  if (!reply) {
    return {reply.error() == "worker stopped answering"
                ? fmt::format("the reference did not finish within {} s on size set '{}'", timeout.count() / 1000.0, sizeSet)
                : "the reference check's helper process failed: " + reply.error()};
  }
  if (check) {
    check->referenceMs = reply->header.value("reference_ms", 0.0);
    check->defects = reply->header.value("defects", std::vector<std::string>{});
    check->defectFlagged = reply->header.value("defect_flagged", false);
  }
  return reply->header.value("failures", std::vector<std::string>{});
}

}  // namespace

ReferenceChecker::ReferenceChecker() = default;
ReferenceChecker::~ReferenceChecker() = default;

std::map<std::string, std::string> ReferenceChecker::findBroken(const std::filesystem::path& problemsDir, const std::set<std::string>& ids,
                                                                const std::string& sizeSet, std::uint64_t seed, std::chrono::milliseconds timeout) {
  std::map<std::string, std::string> broken;
  if (ids.empty()) return broken;
  if (!helper_) helper_ = std::make_unique<WorkerProcess>(std::vector<std::string>{std::string(kReferenceWorkerRole.name)}, false);
  for (const auto& id : ids) {
    const auto failures = askHelper(*helper_, problemsDir, id, sizeSet, seed, false, timeout, nullptr);
    if (failures.empty()) continue;
    log::warn("{}: {}; its candidates are unsupported in this run", id, failures.front());
    broken[id] = failures.front();
  }
  return broken;
}

std::map<std::string, std::string> findBrokenReferences(const std::filesystem::path& problemsDir, const std::set<std::string>& ids,
                                                        const std::string& sizeSet, std::uint64_t seed, std::chrono::milliseconds timeout) {
  return ReferenceChecker().findBroken(problemsDir, ids, sizeSet, seed, timeout);
}

std::vector<ProblemCheckResult> checkProblemsIsolated(const std::filesystem::path& problemsDir, const std::vector<std::string>& ids,
                                                      std::uint64_t seed, std::chrono::milliseconds timeout, const std::function<void()>& afterEach) {
  std::vector<ProblemCheckResult> results;
  WorkerProcess helper({std::string(kReferenceWorkerRole.name)}, false);
  for (const auto& id : ids) {
    ProblemCheckResult r;
    r.id = id;
    r.failures = askHelper(helper, problemsDir, id, "", seed, true, timeout, &r);
    results.push_back(std::move(r));
    if (afterEach) afterEach();
  }
  return results;
}

int runReferenceWorker() {
  std::map<std::string, std::unique_ptr<ProblemSuite>> suites;  // by folder
  return sandbox::serveMessages([&](sandbox::Message& request) {
    sandbox::Message reply;
    try {
      const auto& h = request.header;
      const std::string dir = h.at("problems_dir").get<std::string>();
      // A helper kept between runs (ReferenceChecker) sees a suite rewritten since it loaded it anew.
      std::error_code ec;
      const auto written = std::filesystem::last_write_time(std::filesystem::path(dir) / h.at("id").get<std::string>() / "problem.yaml", ec);
      const std::string key = dir + '\n' + std::to_string(ec ? 0 : written.time_since_epoch().count());
      auto& suite = suites[key];
      if (!suite) suite = std::make_unique<ProblemSuite>(ProblemSuite::load(dir));
      const Problem* problem = suite->find(h.at("id").get<std::string>());
      if (problem == nullptr) throw Error("no such problem");
      const std::uint64_t seed = std::stoull(h.at("seed").get<std::string>());
      if (h.value("full", false)) {
        const ProblemCheckResult r = checkProblem(*problem, seed);
        reply.header = {{"failures", r.failures}, {"defects", r.defects}, {"defect_flagged", r.defectFlagged}, {"reference_ms", r.referenceMs}};
      } else {
        const std::string set = h.at("size_set").get<std::string>();
        const SizeBindings& sizes = set.empty() ? problem->checkSizeSet().sizes : problem->sizes(set);
        TorchReference::compile(*problem).run(drawInputs(*problem, sizes, seed, 0), sizes);
        reply.header = {{"failures", nlohmann::json::array()}};
      }
    } catch (const std::exception& e) {
      reply.header = {{"failures", {e.what()}}};
    }
    return reply;
  });
}

}  // namespace cuset
