#pragma once
// Running the reference implementations the trainer is checked against (tests/trainer/reference/: an
// independent forward, transformers, PEFT) in the project's Python, and reading their JSON.
#include <cstdio>
#include <string>

namespace cuset::test {

// The command's stdout and its exit status (through a shell: the tests build the command themselves).
inline std::string runCommand(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  status = pclose(pipe);
  return out;
}

// Whether the project's Python (CUSET_PYTHON) can import `module`.
inline bool pythonHas(const std::string& module) {
  int status = 0;
  runCommand(std::string(CUSET_PYTHON) + " -c 'import " + module + "' 2>/dev/null", status);
  return status == 0;
}

// `CUSET_PYTHON tests/trainer/reference/SCRIPT ARGS` with its stderr kept apart (in `stderrFile`).
inline std::string runReference(const std::string& scriptAndArgs, const std::string& stderrFile, int& status) {
  return runCommand(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/trainer/reference/" + scriptAndArgs + " 2>" + stderrFile, status);
}

}  // namespace cuset::test
