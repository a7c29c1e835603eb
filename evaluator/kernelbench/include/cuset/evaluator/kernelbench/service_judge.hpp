#pragma once
// `cuset eval --server URL`: the RemoteJudge that sends each candidate to a running `cuset serve`
// (docs/serve.md "cuset eval --server"). KernelBench's: the service speaks KernelGYM's API, which takes
// KernelBench solutions and Model files.
#include <filesystem>
#include <memory>
#include <string>

#include "cuset/evaluator/pipeline/remote_judge.hpp"

namespace cuset {

struct ServiceJudgeOptions {
  std::string url;
  std::filesystem::path tokenFile;  // empty: no token
  std::string backend = "cuda";     // what to ask for: "cuda" (the server's backend), "sim" or "gpu"
  int trials = 5;
  int timeoutSeconds = 300;  // per task, on the server
  // Task ids are drawn from this (the run folder) and each candidate: a resumed run asks for the same
  // tasks (the server answers what it already judged); another run folder's are new.
  std::string runIdentity;
};

// Checks the server answers (/health) before the run starts; throws cuset::Error naming it otherwise.
std::shared_ptr<const RemoteJudge> makeServiceJudge(const ServiceJudgeOptions& options);

}  // namespace cuset
