#pragma once
// Reading candidates (DESIGN §3): JSONL batches of LLM outputs, or a folder of .cu files (and .py
// KernelBench solutions).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset {

class ProblemSuite;

// A file of a KernelBench run folder (`level_1_problem_19_sample_0_kernel.py`, as KernelBench's
// generate_samples.py writes them): the problem is KernelBench's level and number, not a CuSeT id.
struct KernelBenchRunFile {
  int level = 0;
  int number = 0;  // KernelBench's problem id within its level (the number before its file name's first '_')
};

struct Candidate {
  std::string problemId;  // "level1/softmax_rows"
  std::int64_t sample = 0;
  std::string model;
  std::string source;     // CUDA source (with its manifest) once extracted
  std::string origin;     // where it came from: "batch.jsonl:12" or a .cu path
  std::string readError;  // non-empty: the candidate is unusable and gets invalid_submission
  // Set for a KernelBench run folder's file until resolveKernelBenchRunFiles maps it to a problem id.
  std::optional<KernelBenchRunFile> kernelbench;

  // Identity of a candidate within a run: results and --resume are keyed by it.
  std::string key() const;
};

// The identity of a candidate within a run (model, problem, sample); results and --resume use it.
std::string candidateKey(std::string_view model, std::string_view problemId, std::int64_t sample);

inline constexpr std::size_t kMaxCandidateSourceBytes = 1u << 20;

// Reads a .jsonl file or a directory of .cu files (any depth). A malformed JSONL line becomes a
// candidate with readError naming the line; the batch goes on. Throws cuset::Error only when the path
// itself cannot be read. `defaultModel` is used where a record or a folder names no model.
std::vector<Candidate> readCandidates(const std::filesystem::path& path, const std::string& defaultModel);

// Maps every KernelBench run-folder file to the suite's problem imported from that level and number
// (its `origin:`); a file whose problem is not in the suite gets a readError naming level and number.
void resolveKernelBenchRunFiles(std::vector<Candidate>& candidates, const ProblemSuite& suite);

// (level, number) of every problem a KernelBench run folder's files name. Throws cuset::Error when
// `folder` is not a folder or names none.
std::set<std::pair<int, int>> kernelBenchRunFileProblems(const std::filesystem::path& folder);

// Whether `fileName` is a KernelBench run folder's sample ("level_1_problem_19_sample_0_kernel.py").
std::optional<std::pair<KernelBenchRunFile, std::int64_t>> parseKernelBenchRunFileName(std::string_view fileName);

// Extracts the candidate from a raw LLM response: the fenced block carrying a `/*@cuset` manifest
// (the last one if several), else the last block defining KernelBench's `class ModelNew`, else the
// last fenced block that defines a __global__ function, else the whole response if it is bare code
// (with a manifest, or defining ModelNew).
Expected<std::string> extractCodeFromResponse(std::string_view response);

}  // namespace cuset
