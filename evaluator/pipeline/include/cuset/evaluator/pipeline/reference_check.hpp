#pragma once
// Before any candidate is judged, each problem's reference is run once in a helper process
// (`cuset __reference-worker`) under a time limit: a reference that raises, returns the wrong shape or
// never returns is found here, and its problem's candidates become `unsupported` with the reason,
// while the rest of the run goes on (DESIGN §4: `unsupported` is never the candidate's fault).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cuset/evaluator/suite/problem_check.hpp"

namespace cuset {

class WorkerProcess;

// The helper kept between checks, so that an EvaluationEngine's runs pay its start (LibTorch's load)
// once. Its process starts on the first check, and again after one that killed it.
class ReferenceChecker {
 public:
  ReferenceChecker();
  ~ReferenceChecker();
  ReferenceChecker(const ReferenceChecker&) = delete;
  ReferenceChecker& operator=(const ReferenceChecker&) = delete;
  // Problem id -> why its reference cannot be used; problems not in the map passed.
  std::map<std::string, std::string> findBroken(const std::filesystem::path& problemsDir, const std::set<std::string>& ids,
                                                const std::string& sizeSet, std::uint64_t seed, std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<WorkerProcess> helper_;
};

// The same, with a helper of its own.
std::map<std::string, std::string> findBrokenReferences(const std::filesystem::path& problemsDir, const std::set<std::string>& ids,
                                                        const std::string& sizeSet, std::uint64_t seed, std::chrono::milliseconds timeout);

// `cuset problems check` with the same bound: checkProblem() of every id in the helper, in order;
// a problem past `timeout` gets that as its failure. `afterEach` runs after each problem (progress).
std::vector<ProblemCheckResult> checkProblemsIsolated(const std::filesystem::path& problemsDir, const std::vector<std::string>& ids,
                                                      std::uint64_t seed, std::chrono::milliseconds timeout,
                                                      const std::function<void()>& afterEach = {});

// The body of `cuset __reference-worker`: one request per problem on stdin, one reply each on stdout.
int runReferenceWorker();

}  // namespace cuset
