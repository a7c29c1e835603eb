#include <gtest/gtest.h>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_import.hpp"

namespace cuset {
namespace {

TEST(KernelBenchImport, ProblemNamesAreIdentifiersKeepingTheNumber) {
  EXPECT_EQ(kernelBenchProblemName("19_ReLU.py"), "kb19_relu");
  EXPECT_EQ(kernelBenchProblemName("1_Square_matrix_multiplication_.py"), "kb1_square_matrix_multiplication");
  EXPECT_EQ(kernelBenchProblemName("12_Matmul_with_diagonal_matrices_.py"), "kb12_matmul_with_diagonal_matrices");
  EXPECT_EQ(kernelBenchProblemName("36_RMSNorm_.py"), "kb36_rmsnorm");
}

TEST(KernelBenchImport, ReportRoundTripsAndCountsImports) {
  KernelBenchImportReport r;
  r.commit = "423217d";
  r.problems.push_back({"level1/19_ReLU.py", "imported", "", "level1/kb19_relu", 1.5, nlohmann::json{{"scripted", true}}});
  r.problems.push_back({"level1/97_ScaledDotProductAttention.py", "skipped", "no F.scaled_dot_product_attention", "", 0.5, {}});
  r.problems.push_back({"level2/83_Conv3d_Min_Clamp.py", "imported", "", "level2/kb83_conv3d_min_clamp", 2.0,
                        nlohmann::json{{"size_sets", {"small", "full"}}, {"defect", {{"kind", "degenerate"}, {"reason", "a constant passes"}}}}});
  r.problems.push_back({"level3/11_VGG16.py", "imported", "", "level3/kb11_vgg16", 9.0, nlohmann::json{{"size_sets", {"medium", "full"}}}});
  const auto back = importReportFromJson(importReportJson(r), "mem");
  ASSERT_EQ(back.problems.size(), 4u);
  EXPECT_EQ(back.imported(), 3u);
  EXPECT_EQ(back.problems[1].reason, "no F.scaled_dot_product_attention");
  EXPECT_EQ(back.problems[2].defect(), "degenerate");
  EXPECT_TRUE(back.problems[2].simulable());
  EXPECT_FALSE(back.problems[3].simulable());
  EXPECT_TRUE(back.problems[0].simulable()) << "a report from before size_sets: small and full";
  EXPECT_FALSE(back.problems[1].transient) << "the file's own failure: remembered";
  KernelBenchImportReport interrupted;
  interrupted.problems.push_back({"level1/98_KLDivLoss.py", "skipped", "the tracer failed (exit -1, signal 9): ", "", 0.5, {}, true});
  EXPECT_TRUE(importReportFromJson(importReportJson(interrupted), "mem").problems.at(0).transient) << "an interrupted tracer: tried again";
  const auto counts = importCountsPerLevel(back);
  EXPECT_EQ(counts.at("all").flagged, 1u);
  EXPECT_EQ(counts.at("all").gpuOnly, 1u);
  EXPECT_EQ(counts.at("level1").skipped, 1u);
  EXPECT_EQ(importReportJson(r)["levels"]["level3"]["gpu_only"], 1);
  const std::string md = importReportMarkdown(r);
  // level | files | imported | share | flagged | GPU-only | skipped
  EXPECT_NE(md.find("| level1 | 2 | 1 | 50.0% | 0 | 0 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| level2 | 1 | 1 | 100.0% | 1 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| level3 | 1 | 1 | 100.0% | 0 | 1 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| all | 4 | 3 | 75.0% | 1 | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("`level1/97_ScaledDotProductAttention.py`: no F.scaled_dot_product_attention"), std::string::npos) << md;
  EXPECT_NE(md.find("`level2/83_Conv3d_Min_Clamp.py`: degenerate: a constant passes"), std::string::npos) << md;
  EXPECT_NE(md.find("`level3/11_VGG16.py`: size sets [\"medium\",\"full\"]"), std::string::npos) << md;
  EXPECT_THROW(importReportFromJson(nlohmann::json{{"problems", 3}}, "bad.json"), Error);
}

TEST(KernelBenchImport, ARootWithoutLevelsIsOneClearError) {
  KernelBenchImportOptions o;
  o.root = "/nonexistent-kernelbench";
  o.outDir = "/tmp/unused";
  try {
    importKernelBench(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-kernelbench: no KernelBench/level"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cuset
