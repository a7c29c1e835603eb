#pragma once
// Comparing a kernel's outputs with the reference (DESIGN §4): NaN/Inf positions must match, floating
// values must satisfy |got - want| <= atol + rtol*|want| elementwise, integers and bools exactly.
#include <string>

#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/results/output_comparison.hpp"

namespace cuset {

// Throws cuset::Error when `got` and `want` differ in dtype or shape (a harness bug, not a verdict).
OutputComparison compareOutput(const std::string& name, const HostTensor& got, const HostTensor& want, const Tolerance& tolerance);

}  // namespace cuset
