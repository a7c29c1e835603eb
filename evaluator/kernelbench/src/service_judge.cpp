#include "cuset/evaluator/kernelbench/service_judge.hpp"

#include <fmt/format.h>

#include <optional>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"
#include "cuset/service/service_client.hpp"
#include "cuset/service/token_file.hpp"

namespace cuset {
namespace {

// A task that ended before it was judged: its reference did not import (unsupported, as a local run
// says of a reference it cannot run), it ran past its time limit (timeout). Anything else is the
// server's failure, not the candidate's, and stops the run as a local harness failure does.
std::optional<Verdict> verdictOfFailure(const std::string& errorCode) {
  if (errorCode == "TIMEOUT_ERROR") return Verdict::timeout;
  if (errorCode == "VALIDATION_ERROR" || errorCode == "UNSUPPORTED_ERROR") return Verdict::unsupported;
  return std::nullopt;
}

class ServiceJudge final : public RemoteJudge {
 public:
  ServiceJudge(const ServiceJudgeOptions& o, service::ServiceClient client, std::string serverBackend)
      : options_(o), client_(std::move(client)), serverBackend_(std::move(serverBackend)) {}

  std::string describe() const override { return fmt::format("cuset serve at {} (its backend {})", client_.url(), serverBackend_); }

  EvalResult judge(const Candidate& candidate, const Problem& problem, EvalResult shell) const override {
    shell.backend = "remote";
    const std::filesystem::path reference = problem.directory / "kernelbench_source.py";
    if (!std::filesystem::exists(reference)) {
      return refused(std::move(shell), Verdict::unsupported,
                     fmt::format("{} is not a KernelBench problem (no kernelbench_source.py): cuset serve judges KernelBench solutions against "
                                 "KernelBench Model files (import the suite with cuset import kernelbench)",
                                 problem.id));
    }
    if (!isKernelBenchSolution(candidate.source)) {
      return refused(std::move(shell), Verdict::unsupported,
                     "not a KernelBench solution (ModelNew): cuset serve takes KernelBench's solution format; judge /*@cuset candidates locally");
    }
    const std::string id = "eval-" + ContentHasher().add(options_.runIdentity).add(candidate.key()).add(candidate.source).digest().hex();
    const nlohmann::json task = client_.run({{"task_id", id},
                                             {"kernel_code", candidate.source},
                                             {"reference_code", readFile(reference)},
                                             {"backend", options_.backend},
                                             {"num_correct_trials", options_.trials},
                                             {"timeout", options_.timeoutSeconds}});
    if (!task.contains("record")) {
      const nlohmann::json result = task.value("result", nlohmann::json::object());
      const std::string message = fmt::format("{} (cuset serve, task {})", result.value("error_message", "the server judged nothing"), id);
      const auto verdict = verdictOfFailure(result.value("error_code", ""));
      if (!verdict) throw makeError("{}: {} could not judge it: {}", candidate.key(), client_.url(), message);
      return refused(std::move(shell), *verdict, message);
    }
    EvalResult r = evalResultFromJson(task["record"]);
    // The server judged a copy under names of its own: the identity is this run's.
    r.problem = shell.problem;
    r.sample = shell.sample;
    r.model = shell.model;
    r.origin = shell.origin;
    r.source = shell.source;
    r.sourceHash = shell.sourceHash;
    return r;
  }

 private:
  static EvalResult refused(EvalResult shell, Verdict verdict, std::string reason) {
    shell.verdict = verdict;
    shell.reason = std::move(reason);
    return shell;
  }

  ServiceJudgeOptions options_;
  service::ServiceClient client_;
  std::string serverBackend_;
};

}  // namespace

std::shared_ptr<const RemoteJudge> makeServiceJudge(const ServiceJudgeOptions& options) {
  service::ServiceClientOptions c;
  c.url = options.url;
  if (!options.tokenFile.empty()) c.token = service::readBearerTokens(options.tokenFile).front();
  service::ServiceClient client(c);
  const nlohmann::json health = client.health();
  return std::make_shared<ServiceJudge>(options, std::move(client), health.value("backend", "?"));
}

}  // namespace cuset
