#pragma once
// A problem of the suite (DESIGN §2): what a kernel must compute, on which sizes, with which inputs,
// judged against which TorchScript reference and tolerance.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuset/evaluator/problem/dtype.hpp"
#include "cuset/evaluator/problem/int_expr.hpp"

namespace cuset {

struct MixComponent;

// How input values are drawn. `mix` draws each element from one component, chosen by weight.
struct Distribution {
  enum class Kind { normal, uniform, randint, mix };
  Kind kind = Kind::normal;
  double mean = 0.0, stddev = 1.0;       // normal
  double low = 0.0, high = 1.0;          // uniform [low, high); randint [low, high); normal: clamp bounds if `clamped`
  bool clamped = false;                  // normal draws clamped to [low, high] (alternate of a uniform)
  std::vector<MixComponent> components;  // mix
  // randint bounds given as size expressions (`high: V` for token ids below a vocabulary size);
  // resolved per size set by resolvedFor().
  std::optional<IntExpr> lowSize, highSize;
  std::string describe() const;
  // This distribution with size-expression bounds evaluated for `sizes`.
  Expected<Distribution> resolvedFor(const SizeBindings& sizes) const;
};

// A vector of a struct, not of a pair, keeps the recursion legal for every standard library (a pair
// of an incomplete type is not).
struct MixComponent {
  double weight = 0.0;
  Distribution distribution;
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::float32;
  std::vector<IntExpr> shape;  // expressions over size names; empty = scalar tensor
  Distribution init;           // inputs only
};

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

// Defaults per dtype when problem.yaml gives none: a few ulps of the type at unit scale.
Tolerance defaultTolerance(DType dtype);

struct SizeSet {
  std::string name;  // "small", "full", ...
  SizeBindings sizes;
};

// A reference given as TorchScript archives (`reference_archive:`), as imported suites arrive: one file
// per size set (a trace bakes its sizes in; a scripted module may serve every set).
struct ArchiveReference {
  struct Arg {          // one positional argument of forward
    std::string input;  // an input's name, or empty for a number
    double number = 0.0;
    bool isInteger = false;
  };
  std::map<std::string, std::filesystem::path> archives;  // size set -> file, relative to the problem folder
  // forward's positional arguments; empty = every input that is not an attribute, in problem order.
  std::vector<Arg> args;
  // Inputs set as attributes of the module (dotted paths, `conv.weight`) before every call: the
  // lifted parameters and buffers of a scripted module.
  std::vector<std::string> attributes;
};

// Inputs computed from raw draws by a TorchScript archive (KernelBench's triu, symmetrised or softmaxed
// inputs): the draws are generated like inputs, then the archive maps them to the `produces` inputs.
struct InputTransform {
  std::vector<TensorSpec> draws;
  std::map<std::string, std::filesystem::path> archives;  // size set -> file
  std::vector<std::string> produces;                      // input names, in the order the archive returns them
  bool producesInput(std::string_view name) const;
};

// Where an imported problem came from (`origin:`): shown in reports, used by prompts.
struct ProblemOrigin {
  std::string suite;  // "kernelbench"
  std::string commit;
  int level = 0;
  int number = 0;          // KernelBench's problem id within its level
  std::string file;        // "level1/19_ReLU.py"
  std::string sourceFile;  // the original source, relative to the problem folder
  std::string source;      // its text (read when the problem loads)
  // Per size set, the module-level constants the importer changed to scale the file down
  // ("small": {batch_size: 16}); a KernelBench solution's ModelNew is built from the same ones.
  std::map<std::string, std::map<std::string, std::int64_t>> sizeOverrides;
};

// A problem whose reference no kernel can honestly be judged against (`defect:`), as KernelBench ships
// a few: a degenerate output (a constant passes the tolerance, or the output ignores its inputs) or a
// stochastic forward. Such a problem stays in the suite, flagged; headline metrics leave it out unless
// asked (docs/problem-format.md).
struct ProblemDefect {
  std::string kind;    // "degenerate" | "stochastic"
  std::string reason;  // the numbers that make it so
};

struct CostLiteral {
  std::optional<std::int64_t> flops, bytes;
};

struct Problem {
  std::string id;  // "level1/softmax_rows"
  std::string name;
  int level = 1;
  std::vector<std::string> tags;
  std::string description;
  std::vector<SizeSet> sizeSets;  // in file order; at least one. Without "small" the simulator cannot judge it
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string reference;  // TorchScript source defining forward(...); empty with an archive
  std::optional<ArchiveReference> referenceArchive;
  std::optional<InputTransform> inputTransform;
  std::optional<ProblemOrigin> origin;
  std::optional<ProblemDefect> defect;
  // Floating inputs are upcast to float32 for the reference (DESIGN §4), or float64 when
  // problem.yaml says `reference_precision: float64`.
  bool referenceInFloat64 = false;
  Tolerance tolerance;
  bool toleranceGiven = false;
  std::optional<IntExpr> costFlops;
  std::optional<IntExpr> costBytes;
  std::map<std::string, CostLiteral> costPerSet;  // `cost: {small: {flops: N, bytes: N}, ...}`
  std::filesystem::path directory;                // folder holding problem.yaml and solutions/

  const SizeSet* findSizeSet(std::string_view setName) const;
  // The set the CPU checks the reference on: `small`, else the one with the fewest flops (a problem
  // imported without a simulator-sized set has `medium` or only `full`).
  const SizeSet& checkSizeSet() const;
  // "small, full": the set names, for messages.
  std::string sizeSetNames() const;
  // Throws cuset::Error naming the problem if the set does not exist.
  const SizeBindings& sizes(std::string_view setName) const;
  const TensorSpec* findTensor(std::string_view tensorName) const;          // input or output
  std::optional<std::size_t> inputIndex(std::string_view inputName) const;  // position in `inputs`
  bool isSizeName(std::string_view sizeName) const;
  // The cost at a size set: the per-set literal, else the expression, else nothing.
  std::optional<std::int64_t> flopsAt(std::string_view setName) const;
  std::optional<std::int64_t> bytesAt(std::string_view setName) const;
  // The set whose sizes are exactly `sizes`, or nullptr.
  const SizeSet* sizeSetOf(const SizeBindings& sizes) const;
};

// Evaluates a tensor's shape for concrete sizes; errors for negative dimensions, overflow, or a tensor
// above `kMaxTensorBytes`.
inline constexpr std::int64_t kMaxTensorBytes = std::int64_t{64} << 30;
Expected<std::vector<std::int64_t>> evaluateShape(const TensorSpec& spec, const SizeBindings& sizes);
Expected<std::int64_t> elementCount(const std::vector<std::int64_t>& shape);

}  // namespace cuset
