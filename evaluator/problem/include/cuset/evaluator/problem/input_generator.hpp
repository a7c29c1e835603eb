#pragma once
// Draws problem inputs. Every (run seed, trial, tensor name) triple gives its own independent stream,
// so trials are reproducible from the run's secret seed and no two tensors share values.
#include <cstdint>
#include <string_view>
#include <vector>

#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

// xoshiro256** seeded through splitmix64: fast, well-distributed, and identical on every platform
// (std::normal_distribution is not), which keeps inputs stable across compilers.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  double uniform01();  // [0, 1)
  double normal();     // standard normal (Box-Muller, cached pair)

 private:
  std::uint64_t s_[4];
  bool hasSpare_ = false;
  double spare_ = 0.0;
};

std::uint64_t streamSeed(std::uint64_t runSeed, std::uint64_t trial, std::string_view tensorName);

HostTensor generateTensor(const TensorSpec& spec, const std::vector<std::int64_t>& shape, std::uint64_t seed);

// A second distribution with the same mean and variance and the same support, so correctness is tested
// on two input distributions without changing what a problem's inputs mean: normal(m, s) <->
// uniform(m - sqrt(3)s, m + sqrt(3)s); randint and mixes are kept (integers are often indices).
Distribution alternateDistribution(const Distribution& d);

// All inputs of `problem` for the given size set and trial, in problem order. `alternate` draws from
// alternateDistribution of each input's distribution. Inputs an input transform produces come back
// zero-filled: drawInputs (torch_reference.hpp) fills them.
std::vector<HostTensor> generateInputs(const Problem& problem, const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial,
                                       bool alternate = false);

// The raw draws of the problem's input transform (empty without one), in `draws` order.
std::vector<HostTensor> generateDraws(const Problem& problem, const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial,
                                      bool alternate = false);

}  // namespace cuset
