// Runs a fuzz target over files instead of under libFuzzer: the committed corpora replayed by ctest
// with the project's own compiler, then (with --mutate N) N seeded mutations of them, the short
// fuzzing smoke run CI does without clang. Any crash input is reproduced the same way.
//   fuzz_<target>_replay [--mutate N] [--seed S] FILE_OR_DIR...
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Bytes = std::vector<std::uint8_t>;

// The input being run, written out by the crash handler so a failure found by a mutation can be
// replayed on its own (and kept in the corpus once fixed).
const Bytes* current = nullptr;

void saveCurrentInput(int sig) {
  if (current != nullptr) {
    const int fd = ::open("fuzz-crash-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      [[maybe_unused]] const auto n = ::write(fd, current->data(), current->size());
      ::close(fd);
    }
    static constexpr char kMsg[] = "the failing input is in ./fuzz-crash-input\n";
    [[maybe_unused]] const auto m = ::write(2, kMsg, sizeof(kMsg) - 1);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void runOne(const Bytes& bytes) {
  current = &bytes;
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  current = nullptr;
}

// A few of libFuzzer's mutations, enough to leave the corpus's well-formed paths: the interesting
// bytes of these formats (quotes, braces, digits, colons) are over-represented on purpose.
Bytes mutate(Bytes b, const std::vector<Bytes>& corpus, std::mt19937_64& rng) {
  static constexpr char kInteresting[] = "\"{}[]:,-.0123456789eE\\\n #@*/%'\xff\x00";
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!b.empty()) b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // replace a byte
        if (!b.empty()) b[pick(b.size())] = static_cast<std::uint8_t>(kInteresting[pick(sizeof(kInteresting) - 1)]);
        break;
      case 2:  // insert a byte
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)),
                 static_cast<std::uint8_t>(rng() % 2 ? kInteresting[pick(sizeof(kInteresting) - 1)] : rng()));
        break;
      case 3:  // erase a range
        if (!b.empty()) {
          const std::size_t at = pick(b.size());
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(std::min(b.size(), at + 1 + pick(16))));
        }
        break;
      case 4:  // duplicate a range
        if (!b.empty()) {
          const std::size_t at = pick(b.size()), len = std::min(b.size() - at, 1 + pick(64));
          const Bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + len));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), chunk.begin(), chunk.end());
        }
        break;
      case 5: {  // splice with another input
        const Bytes& other = corpus[pick(corpus.size())];
        if (!other.empty()) {
          const std::size_t from = pick(other.size());
          b.resize(pick(b.size() + 1));
          b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        }
        break;
      }
      default: {  // a large or negative number where digits were
        static const char* kNumbers[] = {"-1", "0", "4294967296", "9223372036854775807", "1e309", "-0.5", "nan", "99999999999999999999"};
        const std::string n = kNumbers[pick(std::size(kNumbers))];
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), n.begin(), n.end());
        break;
      }
    }
    if (b.size() > 8192) b.resize(8192);
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  for (const int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, saveCurrentInput);
  long mutations = 0;
  std::uint64_t seed = 1;
  std::vector<Bytes> corpus;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mutate") == 0 && i + 1 < argc) {
      mutations = std::strtol(argv[++i], nullptr, 10);
      continue;
    }
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::directory_iterator(argv[i])) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // the mutation run depends on the order
    } else {
      files.emplace_back(argv[i]);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      corpus.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      runOne(corpus.back());
    }
  }
  std::printf("%zu input(s) replayed\n", corpus.size());
  if (corpus.empty()) return 1;
  std::mt19937_64 rng(seed);
  for (long m = 0; m < mutations; ++m) {
    const Bytes input = mutate(corpus[rng() % corpus.size()], corpus, rng);
    runOne(input);
  }
  if (mutations > 0) std::printf("%ld mutation(s) run (seed %llu)\n", mutations, static_cast<unsigned long long>(seed));
  return 0;
}
