#pragma once
// The estimators a run's metrics are made of, shared by the reports (summary.json) and KernelBench's
// result files (pipeline/kernelbench_files.hpp), so both compute pass@k, fast_p thresholds and speedup
// means one way.
#include <cstdint>
#include <optional>
#include <vector>

namespace cuset {

// fast_p's thresholds, as KernelBench's analysis uses them.
inline constexpr double kFastP[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};

// Unbiased pass@k for n samples of which c are correct (Chen et al. 2021): 1 - C(n-c, k) / C(n, k),
// computed as 1 - prod_{i=n-c+1..n} (1 - k/i), which never forms a binomial. nullopt when n < k.
std::optional<double> passAtK(std::int64_t n, std::int64_t c, std::int64_t k);

// exp(mean(log x)); nullopt for no values. Values must be > 0.
std::optional<double> geometricMean(const std::vector<double>& values);

}  // namespace cuset
