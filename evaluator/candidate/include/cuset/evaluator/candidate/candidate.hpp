#pragma once
// Reading candidates (DESIGN §3): JSONL batches of LLM outputs, or a folder of .cu files (and .py
// KernelBench solutions).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset {

struct Candidate {
  std::string problemId;  // "level1/softmax_rows"
  std::int64_t sample = 0;
  std::string model;
  std::string source;     // CUDA source (with its manifest) once extracted
  std::string origin;     // where it came from: "batch.jsonl:12" or a .cu path
  std::string readError;  // non-empty: the candidate is unusable and gets invalid_submission

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

// Extracts the candidate from a raw LLM response: the fenced block carrying a `/*@cuset` manifest
// (the last one if several), else the last block defining KernelBench's `class ModelNew`, else the
// last fenced block that defines a __global__ function, else the whole response if it is bare code
// (with a manifest, or defining ModelNew).
Expected<std::string> extractCodeFromResponse(std::string_view response);

}  // namespace cuset
