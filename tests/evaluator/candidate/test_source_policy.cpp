// The include policy holds however a candidate spells a directive: macros, digraphs, trigraphs, line
// splices and comments cannot smuggle a host file into a compile log.
#include <gtest/gtest.h>

#include "cuset/evaluator/candidate/source_policy.hpp"

namespace cuset {
namespace {

std::string refusal(const std::string& source) { return disallowedInclude(source).value_or("allowed"); }

TEST(SourcePolicy, ToolkitHeadersAreAllowedHoweverTheDirectiveIsSpelled) {
  for (const std::string source :
       {"#include <cuda_fp16.h>\n", "  #  include   <cmath>\n", "# /* why */ include <cstdint>\n", "%:include <cuda_bf16.h>\n",
        "#inc\\\nlude <cfloat>\n", "#if __has_include(<cuda_fp16.h>)\n#endif\n", "#define X 1\n#pragma once\n"}) {
    EXPECT_EQ(refusal(source), "allowed") << source;
  }
}

TEST(SourcePolicy, TheLibraryFamiliesAreAllowedByPlainNamesOnly) {
  for (const std::string header : {"cuda/std/array", "cuda/std/cstdint", "cub/block/block_reduce.cuh", "cub/warp/warp_scan.cuh", "mma.h",
                                   "cuda_pipeline.h", "cooperative_groups/memcpy_async.h", "cuda/barrier"}) {
    EXPECT_EQ(refusal("#include <" + header + ">\n"), "allowed") << header;
  }
  for (const std::string header :
       {"cuda/std/../../../../etc/passwd", "cuda/std/detail/libcxx/include/cstdlib", "cuda/std/", "cub/block/x.h", "cub/device/device_reduce.cuh",
        "cub/block/../../../etc/passwd.cuh", "cub/cub.cuh", "cuda/std/Array", "cooperative_groups/details/async.h", "cuda_runtime.hpp", "mma.hpp"}) {
    EXPECT_NE(refusal("#include <" + header + ">\n").find("is not available"), std::string::npos) << header;
  }
}

TEST(SourcePolicy, EveryWayToNameAnotherFileIsRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"#include </etc/passwd>\n", "#include </etc/passwd> is not available"},
      {"#include \"kernel.h\"\n", "quoted includes are not allowed"},
      {"#define P </etc/passwd>\n#include P\n", "line 2: a computed #include"},
      {"#define Q \"/etc/passwd\"\n# include Q\n", "a computed #include"},
      {"%:include </etc/passwd>\n", "#include </etc/passwd> is not available"},
      {"%:define P </etc/passwd>\n%:include P\n", "a computed #include"},
      {"??=include </etc/passwd>\n", "#include </etc/passwd>"},
      {"#inc\\\nlude </etc/passwd>\n", "#include </etc/passwd>"},
      {"#include \\\n </etc/passwd>\n", "#include </etc/passwd>"},
      {"/* a comment */ #include </etc/hostname>\n", "#include </etc/hostname>"},
      {"#include_next <cuda_fp16.h>\n", "#include_next <cuda_fp16.h> is not available"},
      {"#import <cuda_fp16.h>\n", "#import <cuda_fp16.h> is not available"},
      {"#pragma GCC dependency \"/etc/passwd\"\n", "dependency"},
      {"_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", "dependency"},
      {"#if __has_include(</etc/shadow>)\n#endif\n", "__has_include may name only"},
      {"#embed </etc/passwd>\n", "#embed is not allowed"},
  };
  for (const auto& [source, expected] : cases) {
    EXPECT_NE(refusal(source).find(expected), std::string::npos) << source << " -> " << refusal(source);
  }
}

TEST(SourcePolicy, DirectivesInsideLiteralsAndCommentsAreText) {
  for (const std::string source :
       {"// #include </etc/passwd>\n", "/* \n#include </etc/passwd>\n */\n", "const char* s = \"#include </etc/passwd>\";\n",
        "const char* r = R\"x(\n#include </etc/passwd>\n)x\";\n", "int n = 1'000'000;\n"}) {
    EXPECT_EQ(refusal(source), "allowed") << source;
  }
}

}  // namespace
}  // namespace cuset
