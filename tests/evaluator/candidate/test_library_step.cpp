// A library step's typed form (library_step.hpp): read once from the recording's JSON, every field
// checked, and written back the same for the GPU worker.
#include <gtest/gtest.h>

#include <cmath>

#include "cuset/evaluator/candidate/library_step.hpp"

namespace cuset {
namespace {

nlohmann::json view(const std::string& buffer, std::int64_t offset = 0) {
  return {{"buffer", buffer}, {"offset", offset}, {"sizes", {2, 3}}, {"strides", {3, 1}}, {"dtype", "float32"}};
}

nlohmann::json convolution() {
  return {{"op", "aten::convolution"},
          {"overload", ""},
          {"args", {{{"tensor", view("x")}}, {{"tensor", view("conv.weight")}}, nullptr, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1}},
          {"kwargs", {{"memory_format", {{"memory_format", "channels_last"}}}, {"dtype", {{"dtype", "float16"}}}}},
          {"outputs", {view("t3", 12)}}};
}

TEST(LibraryStep, ReadsEveryArgumentAsItsTypeAndWritesTheSameJsonBack) {
  const auto step = libraryStepFromJson(convolution());
  ASSERT_TRUE(step) << step.error();
  EXPECT_EQ(step->op(), "aten::convolution");
  ASSERT_EQ(step->args.size(), 9u);
  EXPECT_EQ(std::get<TensorView>(step->args[1].value).buffer, "conv.weight");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(step->args[2].value));
  EXPECT_EQ(std::get<LibraryArg::List>(step->args[3].value).size(), 2u);
  EXPECT_EQ(std::get<bool>(step->args[6].value), false);
  EXPECT_EQ(std::get<std::int64_t>(step->args[8].value), 1);
  EXPECT_EQ(std::get<ScalarTypeArg>(step->kwargs.at(0).second.value).name, "float16");  // by name
  EXPECT_EQ(std::get<MemoryFormatArg>(step->kwargs.at(1).second.value), MemoryFormatArg::channels_last);
  EXPECT_EQ(step->outputs.at(0).offset, 12);
  EXPECT_FALSE(step->harness());
  EXPECT_EQ(toJson(*step), convolution());
  EXPECT_EQ(step->describe(),
            "aten::convolution(x, conv.weight, null, [1, 1], [0, 0], [1, 1], false, [0, 0], 1, "
            "dtype={\"dtype\":\"float16\"}, memory_format={\"memory_format\":\"channels_last\"}) -> t3+12");
}

TEST(LibraryStep, InfinityAndNanTravelAsStringsAndComeBackAsDoubles) {
  const auto step = libraryStepFromJson({{"op", "aten::clamp"}, {"args", {{{"tensor", view("x")}}, {{"float", "-inf"}}, {{"float", "nan"}}}}});
  ASSERT_TRUE(step) << step.error();
  EXPECT_EQ(std::get<double>(step->args[1].value), -INFINITY);
  EXPECT_TRUE(std::isnan(std::get<double>(step->args[2].value)));
  EXPECT_EQ(toJson(*step)["args"][1], (nlohmann::json{{"float", "-inf"}}));
}

TEST(LibraryStep, AMalformedStepSaysWhatAndWhere) {
  const struct {
    nlohmann::json step;
    std::string needle;
  } cases[] = {
      {nlohmann::json::array(), "not an object"},
      {{{"args", nlohmann::json::array()}}, "names no op"},
      {{{"op", "aten::relu"}, {"args", {{{"tensor", {{"buffer", "x"}}}}}}}, "library step aten::relu: a view of 'x' has no integer \"offset\""},
      {{{"op", "aten::relu"}, {"args", {{{"tensor", {{"buffer", "x"}, {"offset", 0}, {"sizes", {1.5}}, {"strides", {1}}, {"dtype", "float32"}}}}}}},
       "\"sizes\" holds 1.5"},
      {{{"op", "aten::relu"},
        {"args", {{{"tensor", view("x")}}}},
        {"outputs", {{{"buffer", "y"}, {"offset", 0}, {"sizes", {1}}, {"strides", {1}}, {"dtype", "complex64"}}}}},
       "dtype \"complex64\""},
      {{{"op", "aten::relu"}, {"args", {{{"shape", 3}}}}}, "an argument this harness cannot read"},
      {{{"op", "aten::relu"}, {"args", {{{"float", "1e400"}}}}}, "only inf, -inf and nan"},
      {{{"op", "aten::relu"}, {"args", {std::uint64_t{1} << 63}}}, "does not fit in 64 bits"},
      {{{"op", "aten::relu"}, {"kwargs", {{"alpha", {{"memory_format", "tiled"}}}}}}, "argument 'alpha': a memory_format argument tiled"},
      {{{"op", "aten::relu"}, {"purpose", "free"}}, "purpose \"free\""},
      {{{"op", "aten::relu"}, {"args", {{"x", 1}}}}, "\"args\" must be a list"},
  };
  for (const auto& c : cases) {
    const auto step = libraryStepFromJson(c.step);
    ASSERT_FALSE(step) << c.step.dump();
    EXPECT_NE(step.error().find(c.needle), std::string::npos) << step.error();
  }
  nlohmann::json deep = 1;
  for (int i = 0; i < 6; ++i) deep = nlohmann::json::array({deep});
  const auto step = libraryStepFromJson({{"op", "aten::relu"}, {"args", {deep}}});
  ASSERT_FALSE(step);
  EXPECT_NE(step.error().find("nests lists too deeply"), std::string::npos) << step.error();
}

TEST(LibraryStep, AValueTheHarnessDoesNotHoldIsNamed) {
  auto step = libraryStepFromJson({{"op", "aten::to"}, {"args", {{{"tensor", view("x")}}}}, {"kwargs", {{"dtype", {{"dtype", "complex64"}}}}}});
  ASSERT_TRUE(step) << step.error();
  EXPECT_EQ(libraryArgumentRefusal(*step),
            "aten::to takes a dtype argument complex64 (the harness's library steps take " + std::string(kLibraryScalarTypes) + ") as 'dtype'");
  step = libraryStepFromJson({{"op", "aten::zeros"}, {"args", {{2, 2}, {{"layout", "sparse_coo"}}}}});
  ASSERT_TRUE(step) << step.error();
  EXPECT_EQ(libraryArgumentRefusal(*step), "aten::zeros takes a layout argument sparse_coo (views are strided)");
  EXPECT_EQ(libraryArgumentRefusal(*libraryStepFromJson(convolution())), "");
}

TEST(LibraryStep, EveryViewIsVisitedOnceInOrder) {
  const nlohmann::json tensors = nlohmann::json::array({{{"tensor", view("a")}}, {{"tensor", view("b")}}});
  nlohmann::json json = {{"op", "aten::cat"}, {"outputs", {view("d")}}};
  json["args"] = nlohmann::json::array({tensors, 1});
  json["kwargs"]["out"] = {{"tensor", view("c")}};
  auto step = libraryStepFromJson(json);
  ASSERT_TRUE(step) << step.error();
  std::string seen;
  step->forEachView([&](TensorView& v) {
    seen += v.buffer;
    v.buffer += "'";
  });
  EXPECT_EQ(seen, "abcd");
  EXPECT_EQ(step->describe(), "aten::cat([a', b'], 1, out=c') -> d'");
}

TEST(LibraryStep, TheOpsAreAClosedSetWithoutRandomFileOrMemoryReinterpretingOps) {
  for (const char* op : {"aten::convolution", "aten::addmm", "aten::native_batch_norm", "aten::_softmax", "aten::copy_", "aten::fill_",
                         "aten::max_pool2d_with_indices", "aten::linalg_vector_norm"}) {
    EXPECT_TRUE(isLibraryOp(op)) << op;
  }
  for (const char* op : {"aten::bernoulli", "aten::normal_", "aten::randn", "aten::from_file", "aten::as_strided", "aten::set_",
                         "aten::_local_scalar_dense", "aten::item", "convolution", "prim::add", "aten::"}) {
    EXPECT_FALSE(isLibraryOp(op)) << op;
  }
  const auto ops = libraryOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_EQ(std::adjacent_find(ops.begin(), ops.end()), ops.end());
}

}  // namespace
}  // namespace cuset
