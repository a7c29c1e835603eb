#pragma once
// A generated problem instance and its response, as plain data: the families fill it in, the dataset
// writer turns it into problem.yaml text, a candidate and a training record.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuset::synth {

enum class Dtype { f32, f16, bf16 };

std::string_view dtypeName(Dtype d);   // "float32"
std::string_view dtypeShort(Dtype d);  // "f32"
std::string_view dtypeCType(Dtype d);  // "float", "__half", "__nv_bfloat16"
// Conversions around float math: f32 is the identity.
std::string loadAsFloat(Dtype d, const std::string& expr);
std::string storeFromFloat(Dtype d, const std::string& floatExpr);
// "0.1f" for CUDA, "0.1" for TorchScript: constants are written the same way in both.
std::string cudaFloat(double v);
std::string torchFloat(double v);

struct SynthTensor {
  std::string name;
  Dtype dtype = Dtype::f32;
  std::vector<std::string> shape;  // size expressions
  std::string init;                // YAML flow mapping, empty: the format's default
};

using SizeList = std::vector<std::pair<std::string, std::int64_t>>;

struct SynthProblem {
  std::string name;  // unique within a dataset; also the folder name
  std::vector<std::string> tags;
  std::string description;
  SizeList small;
  SizeList full;
  std::vector<SynthTensor> inputs;
  std::vector<SynthTensor> outputs;
  std::string reference;  // TorchScript defining forward(...)
  double atol = 1e-5;
  double rtol = 1e-5;
  std::string toleranceWhy;  // a comment line above the tolerance
  std::string flops;
  std::string bytes;

  std::string yaml() const;
};

struct SynthLaunch {
  std::string kernel;
  std::vector<std::string> grid;
  std::vector<std::string> block;
  std::string sharedBytes;  // empty: none
  std::vector<std::string> args;
};

// The candidate-format response: a fenced cuda block with the manifest and the kernel source.
std::string renderResponse(const std::vector<SynthLaunch>& launches, const std::string& kernelSource);

struct SynthInstance {
  std::string family;
  std::string key;             // the semantic variant (op, constants, dtype, layout): the held-out split is by key
  std::string implementation;  // e.g. "grid-stride b256", for the dataset card
  SynthProblem problem;
  std::string response;
};

}  // namespace cuset::synth
