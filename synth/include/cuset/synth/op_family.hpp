#pragma once
// An op family: a finite list of semantic variants (op x constants x dtype x layout), each realisable
// as many problem instances (sizes, tensor names) with one of several correct implementations.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/synth/synth_problem.hpp"
#include "cuset/synth/synth_rng.hpp"

namespace cuset::synth {

class OpFamily {
 public:
  virtual ~OpFamily() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  virtual std::size_t variantCount() const = 0;
  virtual std::string variantKey(std::size_t variant) const = 0;  // "unary/silu/bf16"
  // A random instance of `variant` named `problemName`, with a randomly chosen implementation.
  virtual SynthInstance realize(std::size_t variant, const std::string& problemName, SynthRng& rng) const = 0;
};

// Every family, in a fixed order.
const std::vector<std::unique_ptr<OpFamily>>& allFamilies();
const OpFamily* findFamily(std::string_view name);  // nullptr when unknown

// Factories, one per source file.
std::unique_ptr<OpFamily> makeUnaryFamily();
std::unique_ptr<OpFamily> makeBinaryFamily();
std::unique_ptr<OpFamily> makeReduceFamily();
std::unique_ptr<OpFamily> makeSoftmaxFamily();
std::unique_ptr<OpFamily> makeNormFamily();
std::unique_ptr<OpFamily> makeScanFamily();
std::unique_ptr<OpFamily> makeTransposeFamily();
std::unique_ptr<OpFamily> makeMatmulFamily();

}  // namespace cuset::synth
