#include "cuset/evaluator/correctness/compare_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cuset/common/error.hpp"

namespace cuset {

OutputComparison compareOutput(const std::string& name, const HostTensor& got, const HostTensor& want, const Tolerance& tolerance) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    throw makeError("comparing '{}': got {} {} but want {} {}", name, dtypeName(got.dtype()), got.shapeString(), dtypeName(want.dtype()),
                    want.shapeString());
  }
  OutputComparison c;
  c.output = name;
  c.elements = got.numel();
  const bool exact = !isFloating(want.dtype());
  for (std::int64_t i = 0; i < c.elements; ++i) {
    const double g = got.valueAsDouble(i), w = want.valueAsDouble(i);
    bool ok;
    if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      const double err = std::abs(g - w);
      c.maxAbsError = std::max(c.maxAbsError, err);
      if (w != 0.0) c.maxRelError = std::max(c.maxRelError, err / std::abs(w));
      const double allowed = tolerance.atol + tolerance.rtol * std::abs(w);
      ok = exact ? g == w : err <= allowed;
      if (!exact && allowed > 0.0) c.toleranceUse = std::max(c.toleranceUse, err / allowed);
    }
    if (!ok) {
      if (!std::isfinite(g) || !std::isfinite(w)) ++c.nonFiniteMismatches;
      if (c.mismatches == 0) {
        c.firstMismatch = i;
        c.firstGot = g;
        c.firstWant = w;
      }
      ++c.mismatches;
    }
  }
  if (c.firstMismatch >= 0) {
    std::int64_t rest = c.firstMismatch;
    c.firstMismatchIndex.assign(want.shape().size(), 0);
    for (std::size_t d = want.shape().size(); d-- > 0;) {
      c.firstMismatchIndex[d] = rest % want.shape()[d];
      rest /= want.shape()[d];
    }
  }
  return c;
}

}  // namespace cuset
