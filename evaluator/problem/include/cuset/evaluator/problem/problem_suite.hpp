#pragma once
// Loading problem.yaml files into Problems, with every error naming the file, field and line.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

struct LargeSizeBudget;

// Parses and validates one problem folder (containing problem.yaml). Throws cuset::Error.
Problem loadProblem(const std::filesystem::path& problemDir);
// Same, from YAML text; `source` names it in messages and `directory` is recorded in the problem.
Problem parseProblem(std::string_view yamlText, const std::string& source, const std::filesystem::path& directory);

class ProblemSuite {
 public:
  // Finds every `*/problem.yaml` below `root` (any depth) and loads it. Problems that fail to load are
  // kept as errors, so one broken problem does not hide the rest; duplicate ids are errors too.
  static ProblemSuite load(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }
  const std::vector<Problem>& problems() const { return problems_; }  // sorted by id
  const std::vector<std::string>& loadErrors() const { return loadErrors_; }
  const Problem* find(std::string_view id) const;
  // Throws one cuset::Error listing every load error, if any.
  void requireNoErrors() const;
  // KernelBench's precision option (`cuset eval --precision fp16`): every float32 input, parameter and
  // output of every problem becomes `to`, judged at `tolerance`; the reference still computes in
  // float32 from the cast inputs (DESIGN §4) and its outputs are cast to `to`.
  void castFloat32To(DType to, const Tolerance& tolerance);
  // The simulator's `large` set (large_sizes.hpp) on every problem that can have one; how many got it.
  std::size_t addLargeSizeSets(const LargeSizeBudget& budget);

 private:
  std::filesystem::path root_;
  std::vector<Problem> problems_;
  std::vector<std::string> loadErrors_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

}  // namespace cuset
