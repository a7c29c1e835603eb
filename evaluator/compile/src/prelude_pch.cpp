#include "prelude_pch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <sstream>

#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/subprocess.hpp"

namespace fs = std::filesystem;

namespace cuset::detail {
namespace {

constexpr std::string_view kPrelude = "cuset_sim/prelude.hpp";

std::vector<std::string> withIncludes(const SimToolchain& toolchain, std::vector<std::string> argv) {
  argv.push_back("-I" + toolchain.simInclude.string());
  argv.push_back("-I" + toolchain.cudaInclude.string());
  return argv;
}

// Every file the prelude includes, from the compiler's own dependency output (`-M`): the system and
// toolkit headers, not only ours.
std::optional<std::vector<fs::path>> preludeDependencies(const SimToolchain& toolchain, const std::vector<std::string>& flags,
                                                         std::chrono::milliseconds timeout, std::string& whyNot) {
  std::vector<std::string> argv = {toolchain.compiler.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv = withIncludes(toolchain, argv);
  argv.insert(argv.end(), {"-x", "c++-header", "-M", (toolchain.simInclude / kPrelude).string()});
  const SubprocessResult r = runSubprocess(argv, timeout);
  if (!r.ok()) {
    whyNot = "listing the prelude's headers failed: " + r.output.substr(0, 500);
    return std::nullopt;
  }
  // "prelude.o: a.h b.h \<newline> c.h ...": skip the target, join continuations.
  std::string text = r.output;
  for (std::size_t p; (p = text.find("\\\n")) != std::string::npos;) text.replace(p, 2, " ");
  std::istringstream words(text.substr(text.find(':') + 1));
  std::vector<fs::path> files;
  for (std::string w; words >> w;) files.emplace_back(w);
  return files;
}

}  // namespace

std::optional<PreludePch> ensurePreludePch(const SimToolchain& toolchain, const std::vector<std::string>& flags, const fs::path& root,
                                           std::chrono::milliseconds timeout, std::string& whyNot) {
  const SubprocessResult version = runSubprocess({toolchain.compiler.string(), "--version"}, timeout);
  if (!version.ok()) {
    whyNot = "the host compiler did not answer --version";
    return std::nullopt;
  }
  auto dependencies = preludeDependencies(toolchain, flags, timeout, whyNot);
  if (!dependencies) return std::nullopt;

  ContentHasher h;
  h.add("cuset-sim-pch-v1").add(fs::weakly_canonical(toolchain.compiler).string()).add(version.output);
  for (const auto& f : flags) h.add(f);
  h.add(toolchain.simInclude.string()).add(toolchain.cudaInclude.string());
  for (const auto& file : *dependencies) h.add(file.string()).add(readFile(file));
  PreludePch pch{root / h.digest().hex(), h.digest().hex()};
  const fs::path gch = pch.includeDir / (std::string(kPrelude) + ".gch");

  std::error_code ec;
  fs::create_directories(gch.parent_path(), ec);
  if (ec) {
    whyNot = fmt::format("cannot create {}: {}", gch.parent_path().string(), ec.message());
    return std::nullopt;
  }
  FileLock lock(root / (pch.key + ".lock"));
  if (!lock.held()) {
    whyNot = fmt::format("cannot lock {}", (root / (pch.key + ".lock")).string());
    return std::nullopt;
  }
  if (fs::exists(gch)) return pch;

  static std::atomic<std::uint64_t> builds{0};
  const fs::path temporary = fmt::format("{}.{}.{}.tmp", gch.string(), ::getpid(), builds.fetch_add(1));
  std::vector<std::string> argv = {toolchain.compiler.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv = withIncludes(toolchain, argv);
  argv.insert(argv.end(), {"-x", "c++-header", (toolchain.simInclude / kPrelude).string(), "-o", temporary.string()});
  const SubprocessResult r = runSubprocess(argv, timeout);
  if (!r.ok()) {
    fs::remove(temporary, ec);
    whyNot = "precompiling the prelude failed: " + (r.timedOut ? std::string("time limit") : r.output.substr(0, 500));
    return std::nullopt;
  }
  fs::rename(temporary, gch, ec);  // atomic: a reader sees no .gch or a whole one
  if (ec) {
    fs::remove(temporary, ec);
    whyNot = fmt::format("cannot write {}: {}", gch.string(), ec.message());
    return std::nullopt;
  }
  return pch;
}

}  // namespace cuset::detail
