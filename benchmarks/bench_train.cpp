// Training-step speed of the C++ trainer against the same model and step in Python PyTorch (Debian's
// the project's pinned torch), same threads, same batch, side by side in one run; then resident memory over many
// steps. Target (issue #4): at least as fast as the Python step, and memory flat over 1,000 steps.
//   bench_train [--threads N] [--steps N] [--rounds N] [--memory-steps N]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_model.hpp"
#include "cuset/trainer/llama_model.hpp"

namespace {

// A small Qwen2-style model and one batch shape (kept fixed so figures stay comparable over time).
using namespace bench;  // the model's sizes

long residentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, steps = 20, memorySteps = 1000, rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::stoi(argv[i + 1]);
    if (flag == "--steps") steps = std::stoi(argv[i + 1]);
    if (flag == "--memory-steps") memorySteps = std::stoi(argv[i + 1]);
    if (flag == "--rounds") rounds = std::max(1, std::stoi(argv[i + 1]));
  }
  cuset::setComputeThreads(threads);
  torch::manual_seed(0);
  cuset::CausalLm model(benchModelConfig());
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3).betas({0.9, 0.95}).weight_decay(0.01));
  const auto ids = torch::randint(0, kVocab, {kBatch, kSeq + 1}, torch::kInt64);
  const auto inputs = ids.narrow(1, 0, kSeq), targets = ids.narrow(1, 1, kSeq);
  auto step = [&] {
    optimizer.zero_grad();
    const auto logits = model->forward(inputs);
    const auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), targets.reshape({-1}));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
  };
  for (int i = 0; i < 3; ++i) step();
  auto cppStepMs = [&] {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / steps;
  };
  // Same BLAS threading as the C++ side (setComputeThreads): one OpenBLAS thread under LibTorch's.
  const std::string command = fmt::format("OPENBLAS_NUM_THREADS=1 {} {}/python/train_step.py {} {} {} {} {} {} {} {} {} {} 2>&1", CUSET_PYTHON,
                                          CUSET_BENCH_DIR, kVocab, kHidden, kInter, kLayers, kHeads, kKvHeads, kBatch, kSeq, steps, threads);
  auto pythonStepMs = [&]() -> double {
    std::string output;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buffer[4096];
      while (std::size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
      pclose(pipe);
    }
    try {
      return nlohmann::json::parse(output.substr(output.rfind('{'))).at("ms_per_step").get<double>();
    } catch (const std::exception&) {
      fmt::print("python step unavailable ({}): does the project's Python have torch (scripts/install-deps.sh)?\n", output.substr(0, 200));
      return 0;
    }
  };
  // Rounds alternate the two sides, so a slow spell of a shared machine hits both; the median of the
  // per-round ratios is the figure, the range says how far to trust it.
  std::vector<double> cpp, python, ratios;
  for (int r = 0; r < rounds; ++r) {
    cpp.push_back(cppStepMs());
    python.push_back(pythonStepMs());
    if (python.back() > 0) ratios.push_back(python.back() / cpp.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  fmt::print("training step, batch {}x{}, {} thread(s), {} round(s) of {} steps:\n", kBatch, kSeq, threads, rounds, steps);
  fmt::print("  C++ (cuset)     {:8.1f} ms/step (median; rounds: {:.1f})\n", median(cpp), fmt::join(cpp, ", "));
  if (!ratios.empty()) {
    fmt::print("  Python PyTorch  {:8.1f} ms/step (median; rounds: {:.1f})\n", median(python), fmt::join(python, ", "));
    fmt::print("  ratio python/c++ {:.2f}x (median of rounds; range {:.2f}-{:.2f}x)\n", median(ratios),
               *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()));
  }

  const long before = residentKiB();
  long at10pct = 0;
  for (int i = 0; i < memorySteps; ++i) {
    step();
    if (i == memorySteps / 10) at10pct = residentKiB();
  }
  fmt::print("resident memory: {} MiB after warm-up, {} MiB at step {}, {} MiB at step {}\n", before / 1024, at10pct / 1024, memorySteps / 10,
             residentKiB() / 1024, memorySteps);
  return 0;
}
