#include <gtest/gtest.h>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/importer/kernelbench_import.hpp"

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
  const auto back = importReportFromJson(importReportJson(r), "mem");
  ASSERT_EQ(back.problems.size(), 2u);
  EXPECT_EQ(back.imported(), 1u);
  EXPECT_EQ(back.problems[1].reason, "no F.scaled_dot_product_attention");
  const std::string md = importReportMarkdown(r);
  EXPECT_NE(md.find("| level1 | 1 | 2 | 50.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("`level1/97_ScaledDotProductAttention.py`: no F.scaled_dot_product_attention"), std::string::npos) << md;
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
