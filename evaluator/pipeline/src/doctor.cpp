#include "cuset/evaluator/pipeline/doctor.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

#include "cuset/common/resources.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/cuda/cuda_driver.hpp"
#include "cuset/evaluator/pipeline/run_environment.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/sandbox/sandbox_support.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

constexpr const char* kInstall = "bash scripts/install-deps.sh && cmake --build --preset default";

DoctorCheck check(std::string section, std::string name, bool ok, bool required, std::string detail, std::string fix = {}) {
  return DoctorCheck{std::move(section), std::move(name), ok, required, std::move(detail), ok ? std::string() : std::move(fix)};
}

// A traceback's last line says what went wrong ("ModuleNotFoundError: No module named 'torch'").
std::string lastLine(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t start = text.rfind('\n');
  return std::string(start == std::string_view::npos ? text : text.substr(start + 1));
}

std::string versionText(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

// The same facts every run records (run_environment.cpp), plus whether LibTorch was built with CUDA.
void buildChecks(const nlohmann::json& env, std::vector<DoctorCheck>& out) {
  out.push_back(check("build", "cuset", true, true,
                      fmt::format("{} ({}), {}", env["cuset_version"].get<std::string>(), env["git_revision"].get<std::string>(),
                                  env["compiler"].get<std::string>())));
  out.push_back(check("build", "libtorch", true, true,
                      fmt::format("LibTorch {}, {} build", env["libtorch"].get<std::string>(), libtorchHasCuda() ? "CUDA" : "CPU-only")));
  out.push_back(check("build", "cuda toolkit", true, true,
                      fmt::format("CUDA {} headers; NVRTC {} at run time", env["cuda_toolkit"].get<std::string>(), env["nvrtc"].get<std::string>())));
  // Where its own files come from: an install (relative to its prefix) or a build folder (resources.hpp).
  try {
    const Resources& r = resources();
    out.push_back(check("build", "files", true, true,
                        r.installed() ? fmt::format("installed: {}", r.file().parent_path().parent_path().parent_path().string())
                                      : fmt::format("build folder: {}", r.file().parent_path().string())));
  } catch (const std::exception& e) {
    out.push_back(
        check("build", "files", false, true, e.what(), "run an installed cuset (cmake --install build --prefix P) or the one in its build folder"));
  }
}

void backendChecks(const nlohmann::json& env, std::vector<DoctorCheck>& out) {
  const SimToolchain sim = SimToolchain::fromBuild();
  std::string simProblem;
  if (::access(sim.compiler.c_str(), X_OK) != 0)
    simProblem = fmt::format("no host C++ compiler at {}", sim.compiler.string());
  else if (!fs::exists(sim.simLibraryDir / "libcuset_sim.so"))
    simProblem = fmt::format("no libcuset_sim.so in {}", sim.simLibraryDir.string());
  else if (!fs::exists(sim.simInclude))
    simProblem = fmt::format("no simulator headers at {}", sim.simInclude.string());
  out.push_back(check("backends", "sim", simProblem.empty(), true,
                      simProblem.empty() ? fmt::format("kernels run on the CPU (host compiler {})", sim.compiler.string()) : simProblem,
                      "build from the checkout (" + std::string(kInstall) + "), or set CUSET_SIM_CXX / CUSET_SIM_LIBDIR"));
  out.push_back(
      check("backends", "compile-only", true, true, fmt::format("NVRTC {} compiles cubins without a GPU", env["nvrtc"].get<std::string>())));

  const Expected<const CudaDriver*> driver = CudaDriver::get();
  if (!driver) {
    out.push_back(
        check("backends", "cuda", false, false, driver.error(), "run on a machine with an NVIDIA GPU and driver (525+); use --backend sim here"));
    return;
  }
  const CudaDriver& d = **driver;
  int count = 0;
  d.cuDeviceGetCount(&count);
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    char name[256] = {};
    if (d.cuDeviceGet(&device, i) == CUDA_SUCCESS && d.cuDeviceGetName(name, sizeof(name), device) == CUDA_SUCCESS) names.emplace_back(name);
  }
  const std::string gpus = names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
  out.push_back(check("backends", "cuda", count > 0, false,
                      fmt::format("driver {} (CUDA {}), {} GPU(s): {}; LibTorch sees {}", d.libraryPath(), versionText(d.version()), count, gpus,
                                  libtorchCudaDevices()),
                      "the driver sees no GPU: check nvidia-smi and CUDA_VISIBLE_DEVICES"));
}

void sandboxChecks(std::vector<DoctorCheck>& out) {
  const SandboxSupport s = probeSandboxSupport();
  out.push_back(check("sandbox", "seccomp", s.seccomp, true, s.seccomp ? "system-call allow-list for sim workers" : s.seccompWhy,
                      "run on a kernel with seccomp filters (CONFIG_SECCOMP_FILTER) and outside a container that forbids them"));
  out.push_back(check("sandbox", "landlock", s.landlockAbi > 0, false,
                      s.landlockAbi > 0
                          ? fmt::format("ABI {}: restricted helpers read only what they are given", s.landlockAbi)
                          : "not available in this kernel: the KernelBench helper and the sim workers' children run without its file-system rules",
                      "use Linux 5.13+ with Landlock enabled (lsm=landlock,...)"));
  out.push_back(check("sandbox", "user namespaces", s.userNamespaces, false,
                      s.userNamespaces ? "unprivileged user namespaces are allowed" : s.userNamespacesWhy,
                      "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)"));
}

void pythonChecks(std::vector<DoctorCheck>& out) {
  const PythonChoice choice = choosePython();
  const std::string& python = choice.path;
  const char* fix = "bash scripts/install-deps.sh (makes the pinned .venv), or set CUSET_PYTHON to a Python with torch 2.x";
  SubprocessResult r;
  try {
    r = runSubprocess(
        {python, "-c",
         "import sys, torch; print(sys.prefix); print(torch.__version__, 'CUDA ' + str(torch.version.cuda) if torch.version.cuda else 'CPU')"},
        std::chrono::seconds(120));
  } catch (const std::exception& e) {
    out.push_back(check("python", "environment", false, true, fmt::format("{} cannot be started: {}", python, e.what()), fix));
    return;
  }
  std::istringstream lines(r.output);
  std::string prefix, torch;
  std::getline(lines, prefix);
  std::getline(lines, torch);
  out.push_back(check("python", "environment", r.ok(), true,
                      r.ok() ? fmt::format("{} ({}; prefix {}): torch {}", python, choice.why, prefix, torch)
                             : fmt::format("{} ({}) cannot import torch: {}", python, choice.why, lastLine(r.output)),
                      fix));
}

}  // namespace

bool DoctorReport::ok() const {
  return std::all_of(checks.begin(), checks.end(), [](const DoctorCheck& c) { return c.ok || !c.required; });
}

nlohmann::json DoctorReport::toJson() const {
  nlohmann::json j = {{"ok", ok()}, {"checks", nlohmann::json::array()}};
  for (const DoctorCheck& c : checks) {
    j["checks"].push_back({{"section", c.section}, {"name", c.name}, {"ok", c.ok}, {"required", c.required}, {"detail", c.detail}, {"fix", c.fix}});
  }
  return j;
}

DoctorReport runDoctor() {
  DoctorReport report;
  const nlohmann::json env = describeEnvironment();
  buildChecks(env, report.checks);
  backendChecks(env, report.checks);
  sandboxChecks(report.checks);
  pythonChecks(report.checks);
  return report;
}

std::string renderDoctor(const DoctorReport& report) {
  std::string text, section;
  for (const DoctorCheck& c : report.checks) {
    if (c.section != section) text += fmt::format("{}{}\n", text.empty() ? "" : "\n", section = c.section);
    const char* mark = c.ok ? "ok" : c.required ? "MISSING" : "no";
    text += fmt::format("  {:<16} {:<8} {}\n", c.name, mark, c.detail);
    if (!c.fix.empty()) text += fmt::format("  {:<16} {:<8} fix: {}\n", "", "", c.fix);
  }
  text += report.ok() ? "\nready: everything the defaults need is here\n" : "\nnot ready: a required part is missing (see MISSING above)\n";
  return text;
}

}  // namespace cuset
