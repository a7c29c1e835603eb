#pragma once
// Comparing a run with a base run, per (model, problem), for nightly regression jobs. Correctness:
// an identical source (same hash) correct before and failing now is a regression; a problem solved
// before and not now (or the reverse) is a clear change; other pass-rate changes must
// pass a two-proportion z-test (|z| >= 1.96), else they are "ambiguous". Timing (GPU runs, fastest
// correct candidate): the relative change of the median is judged against the larger of the two
// runs' measured relative noise, as nvbench's compare does; unknown noise makes a change ambiguous.
#include <nlohmann/json.hpp>
#include <string>

namespace cuset {

// Status of one (model, problem): better, worse, same, ambiguous, new (only in the current run) or
// missing (only in the base run).
nlohmann::json compareSummaries(const nlohmann::json& base, const nlohmann::json& current, const std::string& baseLabel);

// Whether a comparison (as returned above) holds a regression: any "worse" row.
bool hasRegression(const nlohmann::json& comparison);

}  // namespace cuset
