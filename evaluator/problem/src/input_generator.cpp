#include "cuset/evaluator/problem/input_generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "cuset/common/error.hpp"
#include "cuset/common/hash.hpp"

namespace cuset {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double draw(const Distribution& d, Rng& rng) {
  switch (d.kind) {
    case Distribution::Kind::normal: {
      const double v = d.mean + d.stddev * rng.normal();
      return d.clamped ? std::clamp(v, d.low, d.high) : v;
    }
    case Distribution::Kind::uniform:
      return d.low + (d.high - d.low) * rng.uniform01();
    case Distribution::Kind::randint: {
      const auto span = static_cast<std::uint64_t>(d.high - d.low);
      return d.low + static_cast<double>(rng.next() % span);
    }
    case Distribution::Kind::mix: {
      double u = rng.uniform01();
      for (const auto& [w, c] : d.components) {
        if (u < w) return draw(c, rng);
        u -= w;
      }
      return draw(d.components.back().distribution, rng);
    }
  }
  return 0.0;
}

template <class T, class Convert>
void fill(HostTensor& t, const Distribution& d, Rng& rng, Convert convert) {
  T* out = t.as<T>();
  for (std::int64_t i = 0; i < t.numel(); ++i) out[i] = convert(draw(d, rng));
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (hasSpare_) {
    hasSpare_ = false;
    return spare_;
  }
  double u1 = uniform01();
  while (u1 <= 0.0) u1 = uniform01();
  const double u2 = uniform01();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
  hasSpare_ = true;
  return r * std::cos(2.0 * std::numbers::pi * u2);
}

std::uint64_t streamSeed(std::uint64_t runSeed, std::uint64_t trial, std::string_view tensorName) {
  ContentHasher h;
  h.add(&runSeed, sizeof(runSeed)).add(&trial, sizeof(trial)).add(tensorName);
  return h.digest().low;
}

HostTensor generateTensor(const TensorSpec& spec, const std::vector<std::int64_t>& shape, std::uint64_t seed) {
  HostTensor t(spec.dtype, shape);
  Rng rng(seed);
  switch (spec.dtype) {
    case DType::float32:
      fill<float>(t, spec.init, rng, [](double v) { return static_cast<float>(v); });
      break;
    case DType::float16:
      fill<std::uint16_t>(t, spec.init, rng, [](double v) { return floatToHalfBits(static_cast<float>(v)); });
      break;
    case DType::bfloat16:
      fill<std::uint16_t>(t, spec.init, rng, [](double v) { return floatToBfloat16Bits(static_cast<float>(v)); });
      break;
    case DType::int32:
      fill<std::int32_t>(t, spec.init, rng, [](double v) { return static_cast<std::int32_t>(std::floor(v)); });
      break;
    case DType::int64:
      fill<std::int64_t>(t, spec.init, rng, [](double v) { return static_cast<std::int64_t>(std::floor(v)); });
      break;
    case DType::boolean:
      fill<std::uint8_t>(t, spec.init, rng, [](double v) { return static_cast<std::uint8_t>(v >= 1.0 ? 1 : 0); });
      break;
  }
  return t;
}

Distribution alternateDistribution(const Distribution& d) {
  Distribution a = d;
  const double sqrt3 = std::sqrt(3.0);
  if (d.kind == Distribution::Kind::normal) {
    a.kind = Distribution::Kind::uniform;
    a.low = d.mean - sqrt3 * d.stddev;
    a.high = d.mean + sqrt3 * d.stddev;
    if (!(a.low < a.high)) a = d;  // std 0: a constant stays a constant
  } else if (d.kind == Distribution::Kind::uniform) {
    a.kind = Distribution::Kind::normal;
    a.mean = (d.low + d.high) / 2;
    a.stddev = (d.high - d.low) / (2 * sqrt3);
    a.clamped = true;  // keep the support: inputs of log() stay positive
  }
  return a;
}

namespace {

// `specs` drawn in order; those `producedBy` makes come back zero-filled. `streamPrefix` keeps the
// draws' random streams apart from the inputs' when names coincide.
std::vector<HostTensor> generateAll(const Problem& problem, const std::vector<TensorSpec>& specs, const InputTransform* producedBy,
                                    const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial, bool alternate,
                                    std::string_view streamPrefix) {
  std::vector<HostTensor> inputs;
  for (const auto& declared : specs) {
    auto shape = evaluateShape(declared, sizes);
    if (!shape) throw makeError("problem {}: {}", problem.id, shape.error());
    if (producedBy && producedBy->producesInput(declared.name)) {
      inputs.emplace_back(declared.dtype, *shape);  // filled by the transform (drawInputs)
      continue;
    }
    TensorSpec spec = declared;
    auto init = declared.init.resolvedFor(sizes);
    if (!init) throw makeError("problem {}: input '{}': {}", problem.id, declared.name, init.error());
    spec.init = std::move(init).value();
    if (alternate) spec.init = alternateDistribution(spec.init);
    inputs.push_back(generateTensor(spec, *shape, streamSeed(runSeed, trial, std::string(streamPrefix) + spec.name)));
  }
  return inputs;
}

}  // namespace

std::vector<HostTensor> generateInputs(const Problem& problem, const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial,
                                       bool alternate) {
  const InputTransform* transform = problem.inputTransform ? &*problem.inputTransform : nullptr;
  return generateAll(problem, problem.inputs, transform, sizes, runSeed, trial, alternate, "");
}

std::vector<HostTensor> generateDraws(const Problem& problem, const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial, bool alternate) {
  if (!problem.inputTransform) return {};
  return generateAll(problem, problem.inputTransform->draws, nullptr, sizes, runSeed, trial, alternate, "draw:");
}

}  // namespace cuset
