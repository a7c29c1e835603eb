// The one validator every producer of a launch plan hands its plan to (plan_validator.hpp).
#include <gtest/gtest.h>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/candidate/plan_validator.hpp"

namespace cuset {
namespace {

using Kind = PlanViolation::Kind;

PlanBuffers twoBuffers() { return {{"x", {DType::float32, 32}}, {"y", {DType::float32, 32}}}; }

LaunchPlan oneLaunch(std::vector<PlanArg> args) {
  LaunchPlan plan;
  PlanStep step;
  step.kernel.kernel = "k";
  step.kernel.grid = {4, 1, 1};
  step.kernel.block = {256, 1, 1};
  step.kernel.args = std::move(args);
  plan.steps.push_back(std::move(step));
  return plan;
}

TEST(PlanValidator, EveryGeometryLimitIsTheDriversInvalidConfiguration) {
  EXPECT_FALSE(checkLaunchConfiguration("l", {2147483647, 65535, 65535}, {1024, 1, 1}, LaunchLimits::maxSharedBytes));
  const struct {
    std::array<std::int64_t, 3> grid, block;
    std::int64_t shared;
    std::string needle;
  } cases[] = {
      {{0, 1, 1}, {32, 1, 1}, 0, "grid.x = 0 is outside [1, 2147483647]"},
      {{1, 65536, 1}, {32, 1, 1}, 0, "grid.y = 65536"},
      {{1, 1, 1}, {32, 1, 65}, 0, "block.z = 65 is outside [1, 64]"},
      {{1, 1, 1}, {64, 64, 1}, 0, "4096 threads per block"},
      {{1, 1, 1}, {32, 1, 1}, -1, "shared_bytes = -1"},
      {{1, 1, 1}, {32, 1, 1}, LaunchLimits::maxSharedBytes + 1, "shared_bytes = 232449"},
  };
  for (const auto& c : cases) {
    const auto v = checkLaunchConfiguration("launch 0 (k)", c.grid, c.block, c.shared);
    ASSERT_TRUE(v) << c.needle;
    EXPECT_EQ(v->kind, Kind::launchConfiguration);
    EXPECT_NE(v->message.find(c.needle), std::string::npos) << v->message;
    EXPECT_EQ(v->message.rfind("launch 0 (k): ", 0), 0u) << v->message;
  }
}

TEST(PlanValidator, PointersMayStartAnywhereInTheirBufferUpToItsEnd) {
  EXPECT_FALSE(validatePlan(oneLaunch({PlanArg::pointer("x"), PlanArg::pointer("y", 128), PlanArg::int32(3)}), twoBuffers()));
  const auto past = validatePlan(oneLaunch({PlanArg::pointer("x", 129)}), twoBuffers());
  ASSERT_TRUE(past);
  EXPECT_EQ(past->kind, Kind::pointerOutOfBounds);
  EXPECT_NE(past->message.find("a pointer 129 bytes into 'x', which has 128"), std::string::npos) << past->message;
  const auto before = validatePlan(oneLaunch({PlanArg::pointer("x", -4)}), twoBuffers());
  ASSERT_TRUE(before);
  EXPECT_EQ(before->kind, Kind::pointerOutOfBounds);
  const auto unknown = validatePlan(oneLaunch({PlanArg::pointer("z")}), twoBuffers());
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->kind, Kind::malformed);
  EXPECT_NE(unknown->message.find("unknown buffer 'z'"), std::string::npos);
}

// A Triton launch autotuned on a GPU: every configuration the worker may choose is held to the same
// rules as the step itself, and there are not so many that timing them could outlast a run.
LaunchPlan autotunedLaunch(std::vector<KernelStep> alternatives) {
  LaunchPlan plan = oneLaunch({PlanArg::pointer("x"), PlanArg::pointer("y")});
  auto tuning = std::make_shared<AutotunedLaunch>();
  tuning->key = "k(32, torch.float32)";
  for (std::size_t i = 0; i < alternatives.size(); ++i) tuning->configs.push_back("BLOCK: " + std::to_string(64 << i));
  tuning->alternatives = std::move(alternatives);
  plan.steps[0].kernel.autotune = std::move(tuning);
  return plan;
}

TEST(PlanValidator, EveryAutotunedConfigurationIsCheckedAsTheLaunchItself) {
  KernelStep a = oneLaunch({PlanArg::pointer("x"), PlanArg::pointer("y")}).steps[0].kernel;
  KernelStep b = a;
  b.kernel = "k2";
  b.block = {128, 1, 1};
  EXPECT_FALSE(validatePlan(autotunedLaunch({a, b}), twoBuffers()));

  KernelStep past = b;
  past.args[1] = PlanArg::pointer("y", 129);
  const auto pointer = validatePlan(autotunedLaunch({a, past}), twoBuffers());
  ASSERT_TRUE(pointer);
  EXPECT_EQ(pointer->kind, Kind::pointerOutOfBounds);
  EXPECT_NE(pointer->message.find("configuration 2 (k2): a pointer 129 bytes into 'y'"), std::string::npos) << pointer->message;

  KernelStep wide = b;
  wide.block = {2048, 1, 1};
  const auto geometry = validatePlan(autotunedLaunch({a, wide}), twoBuffers());
  ASSERT_TRUE(geometry);
  EXPECT_EQ(geometry->kind, Kind::launchConfiguration);

  const auto none = validatePlan(autotunedLaunch({}), twoBuffers());
  ASSERT_TRUE(none);
  EXPECT_EQ(none->kind, Kind::malformed);
  const auto many = validatePlan(autotunedLaunch(std::vector<KernelStep>(AutotunedLaunch::maxConfigurations + 1, a)), twoBuffers());
  ASSERT_TRUE(many);
  EXPECT_NE(many->message.find("at most 64"), std::string::npos) << many->message;
  LaunchPlan unnamed = autotunedLaunch({a, b});
  std::const_pointer_cast<AutotunedLaunch>(unnamed.steps[0].kernel.autotune)->configs.pop_back();
  EXPECT_TRUE(validatePlan(unnamed, twoBuffers()));
}

TEST(LaunchPlan, AnAutotunedLaunchBecomesTheConfigurationChosenForItsKey) {
  KernelStep a = oneLaunch({PlanArg::pointer("x"), PlanArg::pointer("y")}).steps[0].kernel;
  KernelStep b = a;
  b.kernel = "k2";
  b.grid = {1, 1, 1};
  const LaunchPlan plan = autotunedLaunch({a, b});
  EXPECT_TRUE(plan.autotuned());
  EXPECT_EQ(plan.kernelNames(), (std::vector<std::string>{"k", "k2"}));  // the module must hold every configuration
  const LaunchPlan second = plan.tuned({{"k(32, torch.float32)", 1}});
  EXPECT_FALSE(second.autotuned());
  EXPECT_EQ(second.steps[0].kernel.kernel, "k2");
  EXPECT_EQ(second.steps[0].kernel.grid, (std::array<std::uint32_t, 3>{1, 1, 1}));
  const LaunchPlan unchosen = plan.tuned({{"another(1)", 1}});
  EXPECT_EQ(unchosen.steps[0].kernel.kernel, "k");
  EXPECT_FALSE(unchosen.autotuned());
  EXPECT_EQ(plan.toJson()["steps"][0]["autotune"]["kernels"], (nlohmann::json{"k", "k2"}));
}

TEST(PlanValidator, ScratchBuffersAreNamedAndSized) {
  LaunchPlan plan = oneLaunch({PlanArg::pointer("w", 64)});
  EXPECT_TRUE(validatePlan(plan, twoBuffers()));  // w is nobody's buffer yet
  plan.scratch.push_back({"w", DType::float16, {8, 4}, true});
  EXPECT_FALSE(validatePlan(plan, twoBuffers()));  // 32 halves: 64 bytes, a pointer to its end is allowed
  plan.scratch[0].shape = {std::int64_t{1} << 40, std::int64_t{1} << 30};
  const auto huge = validatePlan(plan, twoBuffers());
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->message.find("absurdly large"), std::string::npos) << huge->message;
  plan.scratch[0].shape = {0};
  EXPECT_TRUE(validatePlan(plan, twoBuffers()));
}

TEST(PlanValidator, ScalarsHaveASize) {
  PlanArg empty;
  EXPECT_TRUE(validatePlan(oneLaunch({empty}), twoBuffers()));
  PlanArg big;
  big.bytes.assign(LaunchLimits::maxScalarBytes + 1, 0);
  EXPECT_TRUE(validatePlan(oneLaunch({big}), twoBuffers()));
}

TEST(PlanValidator, LibraryViewsStayInsideTheirBuffers) {
  const auto view = [](std::int64_t offset, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides) {
    return nlohmann::json{{"buffer", "x"}, {"offset", offset}, {"sizes", sizes}, {"strides", strides}, {"dtype", "float32"}};
  };
  const PlanBuffers buffers = twoBuffers();
  EXPECT_FALSE(checkView(view(0, {4, 8}, {8, 1}), buffers));
  EXPECT_FALSE(checkView(view(31, {0, 8}, {8, 1}), buffers));  // empty: touches nothing
  EXPECT_TRUE(checkView(view(1, {4, 8}, {8, 1}), buffers));
  // Strides a hostile recording chose to overflow the arithmetic still reach past the end.
  EXPECT_TRUE(checkView(view(0, {3, 2}, {std::int64_t{1} << 62, 1}), buffers));
  EXPECT_TRUE(checkView(view(0, {4}, {-1}), buffers));
  nlohmann::json wrongType = view(0, {4}, {1});
  wrongType["dtype"] = "float16";
  EXPECT_TRUE(checkView(wrongType, buffers));

  LaunchPlan plan;
  PlanStep step;
  step.kind = PlanStep::Kind::library;
  step.library = *libraryStepFromJson({{"op", "aten::relu"}, {"args", {{{"tensor", view(0, {32}, {1})}}}}, {"outputs", {view(8, {32}, {1})}}});
  plan.steps.push_back(step);
  const auto v = validatePlan(plan, buffers);
  ASSERT_TRUE(v);
  EXPECT_NE(v->message.find("step 0 (aten::relu): a view reaches past the end of buffer 'x'"), std::string::npos) << v->message;
}

}  // namespace
}  // namespace cuset
