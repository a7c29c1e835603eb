// References and input transforms given as TorchScript archives (`reference_archive:`,
// `input_transform:`), the form `cuset import kernelbench` writes. The archives are built here with
// LibTorch's C++ API, so no Python is involved.
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "test_util.hpp"
#include <cstdint>

namespace cuset {
namespace {
using test::TempDir;
using test::writeText;

// forward(x, s) = x * w * s + inner.b, with w and inner.b module attributes (lifted parameters).
void saveScaleModule(const std::filesystem::path& file) {
  torch::jit::Module inner("__torch__.Inner");
  inner.register_parameter("b", torch::zeros({6}), false);
  torch::jit::Module m("__torch__.Scale");
  m.register_parameter("w", torch::zeros({6}), false);
  m.register_module("inner", inner);
  m.define("def forward(self, x: Tensor, s: float) -> Tensor:\n  return x * self.w * s + self.inner.b\n");
  m.save(file.string());
}

void saveTrilModule(const std::filesystem::path& file) {
  torch::jit::Module m("__torch__.Tril");
  m.define("def forward(self, d: Tensor) -> Tuple[Tensor]:\n  return (torch.tril(d),)\n");
  m.save(file.string());
}

constexpr const char* kArchiveProblem = R"(name: t
level: 1
sizes:
  small: {M: 4, N: 6}
inputs:
  x: {dtype: float32, shape: [M, N]}
  w: {dtype: float32, shape: [N], init: {dist: uniform, low: 0.5, high: 1.5}}
  inner.b: {dtype: float32, shape: [N]}
outputs:
  out: {dtype: float32, shape: [M, N]}
reference_archive:
  archives: {small: ref.pt}
  args: [x, {float: 2.0}]
  attributes: [w, inner.b]
cost:
  small: {flops: 48, bytes: 240}
origin: {suite: kernelbench, commit: abc1234, level: 1, number: 7, file: level1/7_Scale.py, source: source.py}
)";

TEST(ArchiveReference, SetsLiftedParametersAsAttributesAndPassesNumbers) {
  TempDir dir;
  saveScaleModule(dir.path() / "ref.pt");
  writeText(dir.path() / "source.py", "class Model: pass\n");
  const Problem p = parseProblem(kArchiveProblem, (dir.path() / "problem.yaml").string(), dir.path());
  ASSERT_TRUE(p.referenceArchive);
  EXPECT_EQ(p.origin->number, 7);
  EXPECT_EQ(p.origin->source, "class Model: pass\n");
  EXPECT_EQ(p.flopsAt("small"), 48);
  EXPECT_EQ(p.bytesAt("small"), 240);
  const auto ref = TorchReference::compile(p);
  for (std::uint64_t trial = 0; trial < 2; ++trial) {  // fresh weights each trial reach the module
    const auto inputs = drawInputs(p, p.sizes("small"), 3, trial);
    const auto out = ref.run(inputs, p.sizes("small"));
    for (std::int64_t i = 0; i < 24; ++i) {
      const float want = inputs[0].as<float>()[i] * inputs[1].as<float>()[i % 6] * 2.0f + inputs[2].as<float>()[i % 6];
      EXPECT_FLOAT_EQ(out[0].as<float>()[i], want) << "trial " << trial << " element " << i;
    }
  }
}

TEST(ArchiveReference, ErrorsNameTheFileAndTheField) {
  TempDir dir;
  const std::string file = (dir.path() / "problem.yaml").string();
  std::string yaml = kArchiveProblem;
  yaml = yaml.substr(0, yaml.find("origin:"));
  try {
    parseProblem(yaml, file, dir.path());
    FAIL() << "a missing archive must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("archive '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("problem.yaml"), std::string::npos) << e.what();
  }
  saveScaleModule(dir.path() / "ref.pt");
  std::string badAttribute = yaml;
  badAttribute.replace(badAttribute.find("[w, inner.b]"), 12, "[w, inner.c]");
  EXPECT_THROW(parseProblem(badAttribute, file, dir.path()), Error);
  std::string both = yaml + "reference: |\n  def forward(x: Tensor) -> Tensor:\n      return x\n";
  EXPECT_THROW(parseProblem(both, file, dir.path()), Error);
}

TEST(InputTransform, DrawsAreTransformedIntoTheInputs) {
  TempDir dir;
  saveTrilModule(dir.path() / "tril.pt");
  const std::string yaml = R"(name: t
level: 1
sizes:
  small: {N: 5}
input_transform:
  draws: {draw0: {dtype: float32, shape: [N, N], init: {dist: uniform, low: 1, high: 2}}}
  archives: {small: tril.pt}
  produces: [A]
inputs:
  A: {dtype: float32, shape: [N, N]}
outputs:
  y: {dtype: float32, shape: [N, N]}
reference: |
  def forward(A: Tensor) -> Tensor:
      return A * 2
)";
  const Problem p = parseProblem(yaml, (dir.path() / "problem.yaml").string(), dir.path());
  const auto a = drawInputs(p, p.sizes("small"), 9, 0);
  const auto b = drawInputs(p, p.sizes("small"), 9, 1);
  ASSERT_EQ(a.size(), 1u);
  bool differ = false;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      const float v = a[0].as<float>()[i * 5 + j];
      if (j > i)
        EXPECT_EQ(v, 0.0f) << i << "," << j;
      else
        EXPECT_TRUE(v >= 1.0f && v < 2.0f) << v;
      differ = differ || v != b[0].as<float>()[i * 5 + j];
    }
  }
  EXPECT_TRUE(differ) << "each trial draws afresh";
  std::string clash = yaml;
  clash.replace(clash.find("{draw0:"), 7, "{A:");
  EXPECT_THROW(parseProblem(clash, (dir.path() / "problem.yaml").string(), dir.path()), Error);
}

TEST(ProblemFormat, DottedTensorNamesAreAccepted) {
  const std::string yaml = R"(name: t
level: 1
sizes:
  small: {N: 4}
inputs:
  layers.0.weight: {dtype: float32, shape: [N]}
outputs:
  y: {dtype: float32, shape: [N]}
reference: |
  def forward(x: Tensor) -> Tensor:
      return x
)";
  EXPECT_EQ(parseProblem(yaml, "t/problem.yaml", "t").inputs[0].name, "layers.0.weight");
  std::string bad = yaml;
  bad.replace(bad.find("layers.0.weight"), 15, "layers..weight");
  EXPECT_THROW(parseProblem(bad, "t/problem.yaml", "t"), Error);
}

}  // namespace
}  // namespace cuset
