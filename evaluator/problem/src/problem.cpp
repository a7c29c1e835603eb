#include "cuset/evaluator/problem/problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "cuset/common/error.hpp"

namespace cuset {

std::string Distribution::describe() const {
  switch (kind) {
    case Kind::normal:
      return fmt::format("normal(mean={}, std={})", mean, stddev);
    case Kind::uniform:
      return fmt::format("uniform[{}, {})", low, high);
    case Kind::randint:
      return fmt::format("randint[{}, {})", lowSize ? lowSize->text() : fmt::format("{}", low),
                         highSize ? highSize->text() : fmt::format("{}", high));
    case Kind::mix: {
      std::string parts;
      for (const auto& [w, d] : components) parts += fmt::format("{}{}*{}", parts.empty() ? "" : " + ", w, d.describe());
      return fmt::format("mix({})", parts);
    }
  }
  return "?";
}

Expected<Distribution> Distribution::resolvedFor(const SizeBindings& sizes) const {
  Distribution d = *this;
  // Bounds stay within +-9e15 so that every integer in them is exact in a double.
  constexpr std::int64_t kMaxBound = 9'000'000'000'000'000;
  for (auto [expr, out] : {std::pair{&lowSize, &d.low}, std::pair{&highSize, &d.high}}) {
    if (!*expr) continue;
    auto v = (*expr)->evaluate(sizes);
    if (!v) return Unexpected(fmt::format("randint bound '{}': {}", (*expr)->text(), v.error()));
    if (*v > kMaxBound || *v < -kMaxBound) return Unexpected(fmt::format("randint bound '{}' = {} is outside +-9e15", (*expr)->text(), *v));
    *out = static_cast<double>(*v);
  }
  d.lowSize.reset();
  d.highSize.reset();
  if (d.kind == Kind::randint && !(d.low < d.high)) return Unexpected(fmt::format("randint needs low < high (got [{}, {}))", d.low, d.high));
  for (auto& [w, c] : d.components) {
    auto r = c.resolvedFor(sizes);
    if (!r) return r;
    c = std::move(r).value();
  }
  return d;
}

Tolerance defaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return {1e-4, 1e-4};
    case DType::float16:
      return {1e-2, 1e-2};
    case DType::bfloat16:
      return {2e-2, 2e-2};
    default:
      return {0.0, 0.0};
  }
}

bool InputTransform::producesInput(std::string_view name) const { return std::ranges::find(produces, name) != produces.end(); }

namespace {
std::optional<std::int64_t> costOf(const Problem& p, std::string_view set, const std::optional<IntExpr>& expr,
                                   std::optional<std::int64_t> CostLiteral::*field) {
  if (auto it = p.costPerSet.find(std::string(set)); it != p.costPerSet.end() && it->second.*field) return it->second.*field;
  const SizeSet* sizes = p.findSizeSet(set);
  if (!expr || !sizes) return std::nullopt;
  auto v = expr->evaluate(sizes->sizes);
  return v ? std::optional<std::int64_t>(*v) : std::nullopt;
}
}  // namespace

std::optional<std::int64_t> Problem::flopsAt(std::string_view setName) const { return costOf(*this, setName, costFlops, &CostLiteral::flops); }
std::optional<std::int64_t> Problem::bytesAt(std::string_view setName) const { return costOf(*this, setName, costBytes, &CostLiteral::bytes); }

const SizeSet* Problem::sizeSetOf(const SizeBindings& bindings) const {
  for (const auto& s : sizeSets) {
    if (s.sizes == bindings) return &s;
  }
  return nullptr;
}

const SizeSet* Problem::findSizeSet(std::string_view setName) const {
  for (const auto& s : sizeSets) {
    if (s.name == setName) return &s;
  }
  return nullptr;
}

const SizeSet& Problem::checkSizeSet() const {
  if (const SizeSet* small = findSizeSet("small")) return *small;
  if (sizeSets.empty()) throw makeError("problem {} has no size set", id);
  const SizeSet* best = &sizeSets.front();
  for (const auto& s : sizeSets) {
    const auto flops = flopsAt(s.name), bestFlops = flopsAt(best->name);
    if (flops && (!bestFlops || *flops < *bestFlops)) best = &s;
  }
  return *best;
}

std::string Problem::sizeSetNames() const {
  std::string known;
  for (const auto& s : sizeSets) known += fmt::format("{}{}", known.empty() ? "" : ", ", s.name);
  return known;
}

const SizeBindings& Problem::sizes(std::string_view setName) const {
  if (const SizeSet* s = findSizeSet(setName)) return s->sizes;
  throw makeError("problem {} has no size set '{}' (it has: {})", id, setName, sizeSetNames());
}

const TensorSpec* Problem::findTensor(std::string_view tensorName) const {
  for (const auto* list : {&inputs, &outputs}) {
    for (const auto& t : *list) {
      if (t.name == tensorName) return &t;
    }
  }
  return nullptr;
}

std::optional<std::size_t> Problem::inputIndex(std::string_view inputName) const {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name == inputName) return i;
  }
  return std::nullopt;
}

bool Problem::isSizeName(std::string_view sizeName) const { return !sizeSets.empty() && sizeSets.front().sizes.contains(sizeName); }

Expected<std::int64_t> elementCount(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(count, d, &count)) return Unexpected{"element count overflows int64"};
  }
  return count;
}

Expected<std::vector<std::int64_t>> evaluateShape(const TensorSpec& spec, const SizeBindings& sizes) {
  std::vector<std::int64_t> shape;
  for (const auto& dim : spec.shape) {
    auto v = dim.evaluate(sizes);
    if (!v) return Unexpected{fmt::format("tensor '{}': {}", spec.name, v.error())};
    if (*v < 1) return Unexpected{fmt::format("tensor '{}': dimension '{}' = {} (must be >= 1)", spec.name, dim.text(), *v)};
    shape.push_back(*v);
  }
  auto count = elementCount(shape);
  std::int64_t bytes = 0;
  if (!count || __builtin_mul_overflow(*count, static_cast<std::int64_t>(dtypeSize(spec.dtype)), &bytes) || bytes > kMaxTensorBytes) {
    return Unexpected{fmt::format("tensor '{}' is absurdly large (over {} GiB)", spec.name, kMaxTensorBytes >> 30)};
  }
  return shape;
}

}  // namespace cuset
