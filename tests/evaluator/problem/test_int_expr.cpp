#include <gtest/gtest.h>

#include "cuset/evaluator/problem/int_expr.hpp"
#include <cstdint>

namespace cuset {
namespace {

std::int64_t eval(std::string_view text, const SizeBindings& sizes = {}) {
  auto e = IntExpr::parse(text);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error());
  auto v = e->evaluate(sizes);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error());
  return v.ok() ? *v : -999;
}

std::string parseError(std::string_view text) {
  auto e = IntExpr::parse(text);
  return e.ok() ? "" : e.error();
}

std::string evalError(std::string_view text, const SizeBindings& sizes = {}) {
  auto e = IntExpr::parse(text);
  if (!e.ok()) return "parse: " + e.error();
  auto v = e->evaluate(sizes);
  return v.ok() ? "" : v.error();
}

TEST(IntExpr, PrecedenceAndAssociativity) {
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("20 - 5 - 3"), 12);
  EXPECT_EQ(eval("100 / 10 / 5"), 2);
  EXPECT_EQ(eval("17 % 5 * 2"), 4);
  EXPECT_EQ(eval("-3 + 5"), 2);
  EXPECT_EQ(eval("--4"), 4);
  EXPECT_EQ(eval("-7 / 2"), -3);  // C truncation
}

TEST(IntExpr, SizeNamesAndFunctions) {
  const SizeBindings sizes{{"M", 64}, {"N", 1000}};
  EXPECT_EQ(eval("5*M*N", sizes), 320000);
  EXPECT_EQ(eval("ceil_div(N, 256)", sizes), 4);
  EXPECT_EQ(eval("ceil_div(1024, 256)"), 4);
  EXPECT_EQ(eval("ceil_div(0, 256)"), 0);
  EXPECT_EQ(eval("min(M, N, 10)", sizes), 10);
  EXPECT_EQ(eval("max(M, N)", sizes), 1000);
  EXPECT_EQ(eval("min(ceil_div(M*N, 256), 65535)", sizes), 250);
  EXPECT_EQ(eval("min(ceil_div(M*N*N, 256), 65535)", sizes), 65535);
}

TEST(IntExpr, NamesListsDistinctSizes) {
  auto e = IntExpr::parse("M*N + ceil_div(N, K) - M");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->names(), (std::vector<std::string>{"K", "M", "N"}));
}

TEST(IntExpr, SyntaxErrorsPointAtTheProblem) {
  EXPECT_NE(parseError("2 +").find("end of input"), std::string::npos);
  EXPECT_NE(parseError("(2 + 3").find("expected ')'"), std::string::npos);
  EXPECT_NE(parseError("2 $ 3").find("column 3"), std::string::npos);
  EXPECT_NE(parseError("pow(2, 3)").find("unknown function 'pow'"), std::string::npos);
  EXPECT_NE(parseError("ceil_div(1)").find("exactly 2"), std::string::npos);
  EXPECT_NE(parseError("min(1)").find("at least 2"), std::string::npos);
  EXPECT_NE(parseError("1.5 * N").find("only integer"), std::string::npos);
  EXPECT_NE(parseError("99999999999999999999").find("out of int64"), std::string::npos);
  EXPECT_NE(parseError("").find("expected a number"), std::string::npos);
  EXPECT_NE(parseError(std::string(500, '(') + "1" + std::string(500, ')')).find("nested too deeply"), std::string::npos);
  EXPECT_NE(parseError(std::string(5000, '-') + "1").find("nested too deeply"), std::string::npos);
}

TEST(IntExpr, EvaluationErrors) {
  EXPECT_NE(evalError("N / 0", {{"N", 3}}).find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("N % (N - N)", {{"N", 3}}).find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("ceil_div(N, 0)", {{"N", 3}}).find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("N * N * N", {{"N", 3000000}}).find("overflow"), std::string::npos);
  EXPECT_NE(evalError("9223372036854775807 + 1").find("overflow"), std::string::npos);
  EXPECT_NE(evalError("K + 1", {{"N", 1}}).find("unknown size name 'K' (known: N)"), std::string::npos);
  EXPECT_NE(evalError("ceil_div(-4, 2)").find("non-negative"), std::string::npos);
}

}  // namespace
}  // namespace cuset
