#include "cuset/evaluator/results/output_comparison.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"

namespace cuset {

std::string OutputComparison::describe() const {
  if (passed())
    return fmt::format("{}: all {} elements match (max abs err {:.3g}, {:.0f}% of the tolerance)", output, elements, maxAbsError,
                       100.0 * toleranceUse);
  std::string text = fmt::format(
      "{}: {} of {} elements differ ({:.3g}%); first at [{}]: got {:.7g}, want {:.7g}; max abs err {:.3g}, max rel err {:.3g}", output, mismatches,
      elements, 100.0 * mismatchFraction(), fmt::join(firstMismatchIndex, ", "), firstGot, firstWant, maxAbsError, maxRelError);
  if (nonFiniteMismatches > 0) {
    text += fmt::format(" over the finite elements; {} mismatch(es) with NaN or Inf on one side", nonFiniteMismatches);
  }
  return text;
}

nlohmann::json toJson(const OutputComparison& c) {
  auto number = [](double v) { return jsonDouble(v); };
  return {{"output", c.output},
          {"elements", c.elements},
          {"mismatches", c.mismatches},
          {"non_finite_mismatches", c.nonFiniteMismatches},
          {"max_abs_error", number(c.maxAbsError)},
          {"max_rel_error", number(c.maxRelError)},
          {"first_mismatch", c.firstMismatch},
          {"first_mismatch_index", c.firstMismatchIndex},
          {"first_got", number(c.firstGot)},
          {"first_want", number(c.firstWant)},
          {"tolerance_use", number(c.toleranceUse)}};
}

OutputComparison outputComparisonFromJson(const nlohmann::json& j) {
  auto number = [](const nlohmann::json& v) { return doubleFromJson(v, "comparison"); };
  OutputComparison c;
  c.output = j.at("output").get<std::string>();
  c.elements = jsonInteger(j.at("elements"), "elements");
  c.mismatches = jsonInteger(j.at("mismatches"), "mismatches");
  if (auto it = j.find("non_finite_mismatches"); it != j.end())
    c.nonFiniteMismatches = jsonInteger(*it, "non_finite_mismatches");  // absent in older results
  c.maxAbsError = number(j.at("max_abs_error"));
  c.maxRelError = number(j.at("max_rel_error"));
  c.firstMismatch = jsonInteger(j.at("first_mismatch"), "first_mismatch");
  for (const auto& i : j.at("first_mismatch_index")) c.firstMismatchIndex.push_back(jsonInteger(i, "first_mismatch_index"));
  c.firstGot = number(j.at("first_got"));
  if (auto it = j.find("tolerance_use"); it != j.end()) c.toleranceUse = number(*it);  // absent in older results
  c.firstWant = number(j.at("first_want"));
  return c;
}

}  // namespace cuset
