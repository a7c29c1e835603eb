#include "cuset/evaluator/results/estimators.hpp"

#include <cmath>

namespace cuset {

std::optional<double> passAtK(std::int64_t n, std::int64_t c, std::int64_t k) {
  if (k <= 0 || n < k || c < 0 || c > n) return std::nullopt;
  if (n - c < k) return 1.0;  // every k-subset holds a correct sample
  double allWrong = 1.0;
  for (std::int64_t i = n - c + 1; i <= n; ++i) allWrong *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - allWrong;
}

std::optional<double> geometricMean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double logSum = 0.0;
  for (double v : values) logSum += std::log(v);
  return std::exp(logSum / static_cast<double>(values.size()));
}

}  // namespace cuset
