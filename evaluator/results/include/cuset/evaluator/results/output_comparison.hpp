#pragma once
// What a comparison of one output with the reference found, as results.jsonl records it. The rule
// itself (compareOutput) is the correctness stage's: correctness/compare_output.hpp.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace cuset {

struct OutputComparison {
  std::string output;
  std::int64_t elements = 0;
  std::int64_t mismatches = 0;
  // Mismatches where got or want is NaN or Inf: the error maxima below are over finite pairs only, so
  // without this count an output of infinities would read "max abs err 0".
  std::int64_t nonFiniteMismatches = 0;
  double maxAbsError = 0.0;
  double maxRelError = 0.0;  // over elements with want != 0
  std::int64_t firstMismatch = -1;
  std::vector<std::int64_t> firstMismatchIndex;  // multi-dimensional
  double firstGot = 0.0, firstWant = 0.0;
  // max over finite elements of |got - want| / (atol + rtol*|want|): how close a passing output came to
  // failing (1.0 is the edge), for reviewing tolerances. 0 for exact dtypes.
  double toleranceUse = 0.0;
  bool passed() const { return mismatches == 0; }
  double mismatchFraction() const { return elements ? static_cast<double>(mismatches) / static_cast<double>(elements) : 0.0; }
  std::string describe() const;  // "y: 12 of 64000 elements (0.019%) differ; first at [3, 17]: got nan, want 0.25; max abs err ..."
};

nlohmann::json toJson(const OutputComparison& c);
OutputComparison outputComparisonFromJson(const nlohmann::json& j);

}  // namespace cuset
