#pragma once
// KernelBench's own sizes with only the batch cut, for the simulator (issue #61, docs/kernelbench.md
// "Sizes"). An imported problem's `small` set scales every constant down until the simulator runs it in
// milliseconds; a kernel that caps its block at 1024 threads for a row of 4095 elements, or sizes a
// buffer for the small case only, is right there and wrong at KernelBench's sizes. `large` keeps every
// size of `full` but the batch, halved until the problem fits a budget the simulator runs in seconds,
// and the simulator runs one trial of a kernel that passed at `small` there too.
#include <cstdint>
#include <optional>
#include <string>

#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

struct LargeSizeBudget {
  std::int64_t maxBytes = std::int64_t{256} << 20;  // inputs, parameters and outputs
  std::int64_t maxFlops = 2'000'000'000;            // the reference's, scaled from `full`'s by the batch
};

inline constexpr std::string_view kLargeSizeSet = "large";

// The `large` size set of a KernelBench problem, or nullopt where there is none to make: not imported
// from KernelBench; no `small` and `full`; a traced reference or input transform (one archive per set);
// no size named like a batch; a size other than the batch's that the import scaled without naming it a
// constant (its value at `large` is unknown); `small` already has `full`'s sizes but the batch; or no
// halving of the batch (down to 1, which may be below `small`'s: `small` covers the batch, `large` the
// other sizes) within the budget.
std::optional<SizeSet> largeSizeSet(const Problem& problem, const LargeSizeBudget& budget);

// Adds `large` to `problem` (sizes, the archive it shares, the constants the recorder overrides, its
// cost); false where largeSizeSet gives none or the problem has a set of that name.
bool addLargeSizeSet(Problem& problem, const LargeSizeBudget& budget);

}  // namespace cuset
