#include "cuset/evaluator/problem/large_sizes.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <vector>

#include "cuset/evaluator/problem/dtype.hpp"

namespace cuset {
namespace {

std::string lowered(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool namesBatch(std::string_view name) { return lowered(name).find("batch") != std::string::npos; }

// A group or head count (num_groups, groups, num_heads, n_head): a constant of the scripted reference,
// so a problem whose `small` cut one (suites imported before #61) has one archive that is right at
// `small` only, and `large` would run it at the full count's sizes with the cut count.
bool namesGroupCount(std::string_view name) {
  static const std::regex kCount(R"((^|_)(groups?|heads?)$)");
  return std::regex_search(lowered(name), kCount);
}

// Bytes of every input and output at `sizes`; nullopt when a shape does not evaluate there.
std::optional<std::int64_t> tensorBytes(const Problem& p, const SizeBindings& sizes) {
  std::int64_t total = 0;
  for (const auto* specs : {&p.inputs, &p.outputs}) {
    for (const auto& spec : *specs) {
      const auto shape = evaluateShape(spec, sizes);
      if (!shape) return std::nullopt;
      const auto n = elementCount(*shape);
      if (!n) return std::nullopt;
      total += *n * static_cast<std::int64_t>(dtypeSize(spec.dtype));
    }
  }
  return total;
}

// The one archive every set shares (a scripted module), or empty (a trace per set).
std::filesystem::path sharedArchive(const std::map<std::string, std::filesystem::path>& archives) {
  if (archives.empty()) return {};
  const std::filesystem::path& first = archives.begin()->second;
  for (const auto& [set, path] : archives) {
    if (path != first) return {};
  }
  return first;
}

// The share of `full`'s work left at `sizes`, which differ from it only in the batch: its cut fraction.
double workKept(const SizeBindings& full, const SizeBindings& sizes) {
  double kept = 1.0;
  for (const auto& [name, value] : sizes) kept *= static_cast<double>(value) / static_cast<double>(full.at(name));
  return kept;
}

}  // namespace

std::optional<SizeSet> largeSizeSet(const Problem& p, const LargeSizeBudget& budget) {
  const SizeSet* small = p.findSizeSet("small");
  const SizeSet* full = p.findSizeSet("full");
  if (!p.origin || p.origin->suite != "kernelbench" || small == nullptr || full == nullptr || p.findSizeSet(kLargeSizeSet) != nullptr) {
    return std::nullopt;
  }
  if (!p.referenceArchive || sharedArchive(p.referenceArchive->archives).empty()) return std::nullopt;
  if (p.inputTransform && sharedArchive(p.inputTransform->archives).empty()) return std::nullopt;
  const auto scaled = p.origin->sizeOverrides.find("small");
  if (scaled == p.origin->sizeOverrides.end()) return std::nullopt;  // imported before the constants were recorded
  for (const auto& [name, value] : scaled->second) {
    if (namesGroupCount(name)) return std::nullopt;
  }

  std::vector<std::string> batch;
  bool structureDiffers = false;
  for (const auto& [name, value] : full->sizes) {
    const auto it = small->sizes.find(name);
    if (it == small->sizes.end()) return std::nullopt;
    if (namesBatch(name) && value > 1 && scaled->second.contains(name)) {
      batch.push_back(name);
      continue;
    }
    if (it->second == value) continue;
    // A size the import changed that is no constant it scaled (a dimension derived from several): its
    // value with the full constants and a cut batch is not known here.
    if (!scaled->second.contains(name)) return std::nullopt;
    structureDiffers = true;
  }
  if (batch.empty() || !structureDiffers) return std::nullopt;

  const auto fullFlops = p.flopsAt("full");
  if (!fullFlops) return std::nullopt;
  for (std::int64_t divisor = 2;; divisor *= 2) {
    SizeSet large{std::string(kLargeSizeSet), full->sizes};
    for (const auto& name : batch) {
      const std::int64_t value = full->sizes.at(name) / divisor;
      if (value < 1) return std::nullopt;  // (below `small`'s batch is fine: `small` covers the batch, this the rest)
      large.sizes[name] = value;
    }
    const auto bytes = tensorBytes(p, large.sizes);
    if (!bytes) return std::nullopt;
    const double flops = static_cast<double>(*fullFlops) * workKept(full->sizes, large.sizes);
    if (*bytes <= budget.maxBytes && flops <= static_cast<double>(budget.maxFlops)) return large;
  }
}

bool addLargeSizeSet(Problem& p, const LargeSizeBudget& budget) {
  std::optional<SizeSet> large = largeSizeSet(p, budget);
  if (!large) return false;
  const SizeSet& full = *p.findSizeSet("full");
  auto& overrides = p.origin->sizeOverrides[large->name];
  for (const auto& [name, value] : large->sizes) {
    if (value != full.sizes.at(name)) overrides[name] = value;
  }
  p.referenceArchive->archives[large->name] = sharedArchive(p.referenceArchive->archives);
  if (p.inputTransform) p.inputTransform->archives[large->name] = sharedArchive(p.inputTransform->archives);
  p.costPerSet[large->name] =
      CostLiteral{.flops = static_cast<std::int64_t>(static_cast<double>(*p.flopsAt("full")) * workKept(full.sizes, large->sizes)),
                  .bytes = tensorBytes(p, large->sizes)};
  p.sizeSets.push_back(std::move(*large));
  return true;
}

}  // namespace cuset
