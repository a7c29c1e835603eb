#pragma once
// Helpers shared by the test suites.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "cuset/common/error.hpp"

namespace cuset::test {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("cuset-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& child) const { return path_ / child; }

 private:
  std::filesystem::path path_;
};

inline void writeText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A training config small enough for end-to-end tests: a 1-layer model on data/sft-tiny.jsonl,
// logging and saving every 3 steps.
inline std::string tinyTrainConfig(int maxSteps) {
  return "seed: 7\nthreads: 1\nmodel:\n  config: {model_type: qwen2, hidden_size: 48, intermediate_size: 96, "
         "num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, tie_word_embeddings: true}\n"
         "tokenizer: {train_vocab_size: 400}\ndata: {train: " +
         std::string(CUSET_SOURCE_DIR) + "/data/sft-tiny.jsonl, max_tokens: 400}\nbatch: {size: 4}\nsteps: {max: " + std::to_string(maxSteps) +
         ", log_every: 3, save_every: 3}\n";
}

// Asserts that `statement` throws an exception whose message contains every one of `needles`.
#define CUSET_EXPECT_THROW_WITH(statement, ...)                                                                                               \
  do {                                                                                                                                        \
    try {                                                                                                                                     \
      statement;                                                                                                                              \
      ADD_FAILURE() << "expected an exception from: " #statement;                                                                             \
    } catch (const std::exception& cuset_e_) {                                                                                                \
      for (const std::string& needle : std::initializer_list<std::string>{__VA_ARGS__}) {                                                     \
        EXPECT_NE(std::string(cuset_e_.what()).find(needle), std::string::npos) << "message: " << cuset_e_.what() << "\nmissing: " << needle; \
      }                                                                                                                                       \
    }                                                                                                                                         \
  } while (0)

}  // namespace cuset::test
