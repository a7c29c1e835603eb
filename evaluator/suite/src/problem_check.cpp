#include "cuset/evaluator/suite/problem_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"

namespace cuset {
namespace {

bool withinTolerance(double got, double want, const Tolerance& t) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= t.atol + t.rtol * std::abs(want);
}

bool sameBytes(const HostTensor& a, const HostTensor& b) {
  return a.byteSize() == b.byteSize() && std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

}  // namespace

std::optional<std::string> degenerateOutputReason(const HostTensor& reference, const Tolerance& tolerance) {
  const std::int64_t n = reference.numel();
  if (n == 0) return "output is empty";
  // A single value always equals its own mean: for scalars (losses) the test is across draws instead
  // (checkProblem).
  if (n == 1) return std::nullopt;
  std::vector<double> values(static_cast<std::size_t>(n));
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    values[static_cast<std::size_t>(i)] = reference.valueAsDouble(i);
    sum += values[static_cast<std::size_t>(i)];
  }
  const double mean = sum / static_cast<double>(n);
  std::vector<double> sorted = values;
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.end());
  const double median = sorted[static_cast<std::size_t>(n / 2)];
  for (const auto& [label, c] : {std::pair{"0", 0.0}, std::pair{"its mean", mean}, std::pair{"its median", median}}) {
    if (!std::isfinite(c)) continue;
    const bool allPass = std::all_of(values.begin(), values.end(), [&](double want) { return withinTolerance(c, want, tolerance); });
    if (allPass) {
      return fmt::format("a constant output equal to {} ({:.6g}) passes the tolerance (atol={}, rtol={}) everywhere", label, c, tolerance.atol,
                         tolerance.rtol);
    }
  }
  return std::nullopt;
}

std::vector<std::string> ProblemCheckResult::problems() const {
  std::vector<std::string> all = failures;
  if (!defectFlagged) all.insert(all.end(), defects.begin(), defects.end());
  return all;
}

ProblemCheckResult checkProblem(const Problem& problem, std::uint64_t seed) {
  ProblemCheckResult result;
  result.id = problem.id;
  result.defectFlagged = problem.defect.has_value();
  try {
    const TorchReference reference = TorchReference::compile(problem);
    const SizeBindings& sizes = problem.checkSizeSet().sizes;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<HostTensor> outputs = reference.run(drawInputs(problem, sizes, seed, 0), sizes);
    result.referenceMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    // Whether a trivial kernel passes is a property of the problem, not of one draw: it is decided on
    // the same fixed draws wherever it is asked (the importer and `cuset problems check` agree), and a
    // problem is degenerate when a constant passes on any of them.
    std::vector<std::vector<HostTensor>> draws;
    for (std::uint64_t d = 0; d < kDegeneracyDraws; ++d) draws.push_back(reference.run(drawInputs(problem, sizes, kDegeneracySeed, d), sizes));
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string& name = problem.outputs[i].name;
      for (std::size_t d = 0; d < draws.size(); ++d) {
        if (auto why = degenerateOutputReason(draws[d][i], problem.tolerance)) {
          result.defects.push_back(fmt::format("output '{}' is degenerate: {} (check draw {} of {})", name, *why, d + 1, draws.size()));
          break;
        }
      }
      for (std::int64_t e = 0; e < outputs[i].numel(); ++e) {
        if (std::isnan(outputs[i].valueAsDouble(e))) {
          result.failures.push_back(fmt::format("output '{}' has NaN at flat index {} on generated inputs", name, e));
          break;
        }
      }
    }
    if (!problem.inputs.empty()) {
      const std::vector<HostTensor>& first = draws[0];
      const std::vector<HostTensor>& second = draws[1];
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (sameBytes(first[i], second[i])) {
          result.defects.push_back(fmt::format("output '{}' is identical for two different input draws: a kernel ignoring its inputs would pass",
                                               problem.outputs[i].name));
        } else if (first[i].numel() == 1 && withinTolerance(second[i].valueAsDouble(0), first[i].valueAsDouble(0), problem.tolerance)) {
          result.defects.push_back(
              fmt::format("scalar output '{}' moves by less than the tolerance between two input draws ({:.6g} vs {:.6g}): a kernel returning a "
                          "constant would pass",
                          problem.outputs[i].name, first[i].valueAsDouble(0), second[i].valueAsDouble(0)));
        }
      }
    }
  } catch (const Error& e) {
    result.failures.emplace_back(e.what());
  }
  return result;
}

}  // namespace cuset
