#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/suite/problem_check.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

Problem makeProblem(const std::string& inputs, const std::string& outputs, const std::string& reference, const std::string& extra = "") {
  const std::string yaml =
      "name: t\nlevel: 1\nsizes:\n  small: {M: 4, N: 6}\ninputs:\n" + inputs + "outputs:\n" + outputs + "reference: |\n" + reference + extra;
  return parseProblem(yaml, "t/problem.yaml", "t");
}

TEST(TorchReference, RunsAndBindsInputsAndSizesByName) {
  const Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: [M, N]}\n",
                                "  def forward(N: int, x: Tensor) -> Tensor:\n      return x * N\n");
  const auto ref = TorchReference::compile(p);
  const auto inputs = generateInputs(p, p.sizes("small"), 1, 0);
  const auto outputs = ref.run(inputs, p.sizes("small"));
  ASSERT_EQ(outputs.size(), 1u);
  for (std::int64_t i = 0; i < 24; ++i) EXPECT_FLOAT_EQ(outputs[0].as<float>()[i], inputs[0].as<float>()[i] * 6);
}

TEST(TorchReference, Float16IsComputedInFloat32AndRounded) {
  const Problem p = makeProblem("  x: {dtype: float16, shape: [M, N]}\n", "  y: {dtype: float16, shape: [M, N]}\n",
                                "  def forward(x: Tensor) -> Tensor:\n      return torch.exp(x)\n");
  const auto inputs = generateInputs(p, p.sizes("small"), 2, 0);
  const auto outputs = TorchReference::compile(p).run(inputs, p.sizes("small"));
  for (std::int64_t i = 0; i < 24; ++i) {
    const float want = std::exp(inputs[0].valueAsDouble(i));
    EXPECT_EQ(outputs[0].as<std::uint16_t>()[i], floatToHalfBits(want));
  }
}

// As Python TorchScript allows: dtype names of the torch module (the C++ compiler had no `torch` module
// to resolve them against and refused them).
TEST(TorchReference, ReferencesMayNameDtypes) {
  const Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: int32, shape: [M, N]}\n",
                                "  def forward(x: Tensor) -> Tensor:\n      h = x.to(torch.float16).to(dtype=torch.float32)\n"
                                "      return (h * 100.0).to(torch.int32)\n");
  const auto inputs = generateInputs(p, p.sizes("small"), 3, 0);
  const auto outputs = TorchReference::compile(p).run(inputs, p.sizes("small"));
  ASSERT_EQ(outputs.size(), 1u);
  for (std::int64_t i = 0; i < 24; ++i) {
    EXPECT_EQ(outputs[0].as<std::int32_t>()[i], static_cast<std::int32_t>(halfBitsToFloat(floatToHalfBits(inputs[0].as<float>()[i])) * 100.0f));
  }
}

TEST(TorchReference, TuplesMapToOutputsInOrder) {
  const Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  mx: {dtype: float32, shape: [M]}\n  idx: {dtype: int64, shape: [M]}\n",
                                "  def forward(x: Tensor) -> Tuple[Tensor, Tensor]:\n      r = torch.max(x, dim=1)\n      return r[0], r[1]\n");
  const auto inputs = generateInputs(p, p.sizes("small"), 3, 0);
  const auto outputs = TorchReference::compile(p).run(inputs, p.sizes("small"));
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[1].dtype(), DType::int64);
  const float* x = inputs[0].as<float>();
  for (int m = 0; m < 4; ++m) EXPECT_EQ(x[m * 6 + outputs[1].as<std::int64_t>()[m]], outputs[0].as<float>()[m]);
}

TEST(TorchReference, ErrorsNameTheProblemAndTheMismatch) {
  const std::string x = "  x: {dtype: float32, shape: [M, N]}\n";
  const std::string y = "  y: {dtype: float32, shape: [M, N]}\n";
  CUSET_EXPECT_THROW_WITH(TorchReference::compile(makeProblem(x, y, "  def forward(x: Tensor) -> Tensor:\n      return x +\n")), "t/problem.yaml",
                          "does not compile");
  CUSET_EXPECT_THROW_WITH(TorchReference::compile(makeProblem(x, y, "  def forward(z: Tensor) -> Tensor:\n      return z\n")),
                          "'z' is neither an input nor a size");
  CUSET_EXPECT_THROW_WITH(TorchReference::compile(makeProblem(x, y, "  def forward(x: Tensor, M: float) -> Tensor:\n      return x\n")),
                          "must be annotated ': int'");
  auto run = [](const Problem& p) { return TorchReference::compile(p).run(generateInputs(p, p.sizes("small"), 1, 0), p.sizes("small")); };
  CUSET_EXPECT_THROW_WITH(run(makeProblem(x, y, "  def forward(x: Tensor) -> Tensor:\n      return x.sum(dim=1)\n")), "shape [4]", "declares [4, 6]");
  CUSET_EXPECT_THROW_WITH(run(makeProblem(x, "  y: {dtype: int32, shape: [M, N]}\n", "  def forward(x: Tensor) -> Tensor:\n      return x\n")),
                          "dtype", "int32");
  CUSET_EXPECT_THROW_WITH(run(makeProblem(x, y + "  z: {dtype: float32, shape: [M, N]}\n", "  def forward(x: Tensor) -> Tensor:\n      return x\n")),
                          "returned 1 tensor(s) but outputs declares 2");
}

TEST(Degeneracy, FlagsConstantsAndNearZeroOutputs) {
  HostTensor zeros(DType::float32, {100});
  EXPECT_TRUE(degenerateOutputReason(zeros, {1e-5, 1e-5}).has_value());
  HostTensor tiny(DType::float32, {100});
  for (int i = 0; i < 100; ++i) tiny.as<float>()[i] = 1e-7f * static_cast<float>(i % 7);
  EXPECT_TRUE(degenerateOutputReason(tiny, {1e-5, 1e-5}).has_value());
  HostTensor constant(DType::float32, {100});
  for (int i = 0; i < 100; ++i) constant.as<float>()[i] = 3.0f;
  ASSERT_TRUE(degenerateOutputReason(constant, {0, 0}).has_value());
  HostTensor varied(DType::float32, {100});
  for (int i = 0; i < 100; ++i) varied.as<float>()[i] = static_cast<float>(i);
  EXPECT_FALSE(degenerateOutputReason(varied, {1e-5, 1e-5}).has_value());
}

TEST(ProblemCheck, FlagsAProblemWhoseOutputIgnoresItsInputs) {
  const Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: [M, N]}\n",
                                "  def forward(x: Tensor) -> Tensor:\n      return torch.ones_like(x) * 2 + torch.arange(24.0).reshape(4, 6)\n");
  const ProblemCheckResult r = checkProblem(p, 11);
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.defects.empty());
  EXPECT_NE(r.defects.back().find("identical for two different input draws"), std::string::npos) << r.defects.back();
}

TEST(ProblemCheck, AScalarOutputIsJudgedAcrossDraws) {
  // A loss over many elements barely moves between draws: a kernel returning its expected value passes.
  const Problem flat = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: []}\n",
                                   "  def forward(x: Tensor) -> Tensor:\n      return 1.0 + torch.mean(x) * 1e-5\n");
  const ProblemCheckResult r = checkProblem(flat, 11);
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.defects.empty());
  EXPECT_NE(r.defects.back().find("moves by less than the tolerance"), std::string::npos) << r.defects.back();
  const Problem loss = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: []}\n",
                                   "  def forward(x: Tensor) -> Tensor:\n      return torch.sum(x * x)\n");
  const ProblemCheckResult ok = checkProblem(loss, 11);
  EXPECT_TRUE(ok.ok()) << ok.problems().front();
}

TEST(ProblemCheck, FlagsAnAllZeroReference) {
  const Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: [M, N]}\n",
                                "  def forward(x: Tensor) -> Tensor:\n      return x * 0.0\n");
  const ProblemCheckResult r = checkProblem(p, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.failures.empty()) << "it runs: a defect, not a broken reference";
  ASSERT_FALSE(r.defects.empty());
  EXPECT_NE(r.defects.front().find("degenerate"), std::string::npos);
}

TEST(ProblemCheck, DegeneracyIsOneRuleWhateverTheSeed) {
  // Degenerate on some draws only (all zero when x[0][0] <= 0): the importer's check and `cuset problems
  // check --seed S` must agree, so the verdict may not depend on the seed.
  const Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: [M, N]}\n",
                                "  def forward(x: Tensor) -> Tensor:\n      return x * (x[0:1, 0:1] > 0).float()\n");
  const ProblemCheckResult first = checkProblem(p, 1);
  for (std::uint64_t seed : {2u, 3u, 5u, 8u, 13u, 21u, 34u, 55u}) {
    EXPECT_EQ(checkProblem(p, seed).defects, first.defects) << "seed " << seed;
  }
}

TEST(ProblemCheck, AProblemFlaggedAsDefectiveKeepsItsDefectsAsNotes) {
  Problem p = makeProblem("  x: {dtype: float32, shape: [M, N]}\n", "  y: {dtype: float32, shape: [M, N]}\n",
                          "  def forward(x: Tensor) -> Tensor:\n      return x * 0.0\n");
  p.defect = ProblemDefect{"degenerate", "clamped to one value"};
  const ProblemCheckResult r = checkProblem(p, 11);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.defectFlagged);
  ASSERT_FALSE(r.defects.empty());
  EXPECT_NE(r.defects.front().find("degenerate"), std::string::npos);
  EXPECT_TRUE(r.problems().empty());
}

TEST(ProblemCheck, EveryBundledProblemPasses) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  for (const auto& p : suite.problems()) {
    const ProblemCheckResult r = checkProblem(p, 2026);
    EXPECT_TRUE(r.ok()) << p.id << ": " << (r.ok() ? "" : r.problems().front());
  }
}

}  // namespace
}  // namespace cuset

namespace cuset {
namespace {

TEST(Float32Numerics, RoundsToTf32AsTheTensorCoresRead) {
  EXPECT_EQ(roundToTf32(1.0f), 1.0f);
  const float ulp = std::ldexp(1.0f, -10);  // TF32's spacing at 1: a 10-bit mantissa
  EXPECT_EQ(roundToTf32(1.0f + ulp * 0.49f), 1.0f);
  EXPECT_EQ(roundToTf32(1.0f + ulp * 0.5f), 1.0f + ulp);  // ties away from zero
  EXPECT_EQ(roundToTf32(-1.0f - ulp * 0.75f), -1.0f - ulp);
  EXPECT_TRUE(std::isnan(roundToTf32(std::nanf(""))));
  EXPECT_EQ(roundToTf32(INFINITY), INFINITY);
  EXPECT_EQ(gpuClassOfArch("sm_90"), GpuClass::hopper);
  EXPECT_EQ(gpuClassOfArch("compute_86"), GpuClass::ampere);
  EXPECT_EQ(gpuClassOfArch("8.9"), GpuClass::ada);
  EXPECT_EQ(gpuClassOfArch("sm_75"), GpuClass::turing);
  EXPECT_EQ(float32NumericsOn(GpuClass::ampere), Float32Numerics::tf32Convolutions);
  EXPECT_EQ(float32NumericsOn(GpuClass::volta), Float32Numerics::exact);
  EXPECT_EQ(parseGpuClass("hopper"), GpuClass::hopper);
  EXPECT_FALSE(parseGpuClass("h100"));
}

// A TF32 reference is the exact one computed from TF32-rounded convolution operands (and only those:
// the bias and what follows the convolution stay float32), also inside a function forward calls.
TEST(TorchReference, Tf32ConvolutionsReadRoundedInputAndWeight) {
  const std::string yaml =
      "name: t\nlevel: 1\nsizes:\n  small: {B: 2, C: 16, H: 9}\n"
      "inputs:\n  x: {dtype: float32, shape: [B, C, H, H]}\n  w: {dtype: float32, shape: [C, C, 3, 3]}\n  b: {dtype: float32, shape: [C]}\n"
      "outputs:\n  y: {dtype: float32, shape: [B, C, H, H]}\n"
      "reference: |\n  def conv(x: Tensor, w: Tensor, b: Tensor) -> Tensor:\n      return torch.conv2d(x, w, b, 1, 1)\n"
      "  def forward(x: Tensor, w: Tensor, b: Tensor) -> Tensor:\n      return torch.relu(conv(x, w, b)) + x * 0.001\n";
  const Problem p = parseProblem(yaml, "t/problem.yaml", "t");
  const SizeBindings& sizes = p.sizes("small");
  const auto inputs = generateInputs(p, sizes, 5, 0);
  const auto tf32 = TorchReference::compile(p, Float32Numerics::tf32Convolutions).run(inputs, sizes);
  const auto exact = TorchReference::compile(p).run(inputs, sizes);
  // The exact reference on rounded x and w differs from the TF32 one only in the `x * 0.001` term,
  // which reads the unrounded x: recompute that term to compare.
  auto rounded = generateInputs(p, sizes, 5, 0);  // the same draw, to round in place
  for (int i = 0; i < 2; ++i) {
    float* v = rounded[i].as<float>();
    for (std::int64_t k = 0; k < rounded[i].numel(); ++k) v[k] = roundToTf32(v[k]);
  }
  const auto fromRounded = TorchReference::compile(p).run(rounded, sizes);
  std::int64_t differFromExact = 0;
  for (std::int64_t i = 0; i < tf32[0].numel(); ++i) {
    const float xTerm = inputs[0].as<float>()[i] * 0.001f, roundedTerm = rounded[0].as<float>()[i] * 0.001f;
    EXPECT_NEAR(tf32[0].as<float>()[i] - xTerm, fromRounded[0].as<float>()[i] - roundedTerm, 1e-6) << i;
    differFromExact += tf32[0].as<float>()[i] != exact[0].as<float>()[i];
  }
  EXPECT_GT(differFromExact, tf32[0].numel() / 4);
}

}  // namespace
}  // namespace cuset
