#include "cuset/evaluator/candidate/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

struct FencedBlock {
  std::string language;
  std::string code;
};

std::vector<FencedBlock> fencedBlocks(std::string_view text) {
  std::vector<FencedBlock> blocks;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("```", pos);
    if (open == std::string_view::npos) break;
    const std::size_t langEnd = text.find('\n', open + 3);
    if (langEnd == std::string_view::npos) break;
    std::string lang(text.substr(open + 3, langEnd - open - 3));
    lang.erase(std::remove_if(lang.begin(), lang.end(), [](unsigned char c) { return std::isspace(c); }), lang.end());
    std::size_t close = text.find("\n```", langEnd);
    const bool unterminated = close == std::string_view::npos;  // truncated generations still count
    if (unterminated) close = text.size();
    blocks.push_back({lang, std::string(text.substr(langEnd + 1, close - langEnd - 1 + (unterminated ? 1 : 0)))});
    if (unterminated) break;
    pos = close + 4;
  }
  return blocks;
}

Candidate parseJsonLine(const std::string& line, const std::string& origin, const std::string& defaultModel) {
  Candidate c;
  c.origin = origin;
  c.model = defaultModel;
  c.sample = -1;  // assigned by the reader unless the record gives one
  nlohmann::json record;
  try {
    // A stray non-UTF-8 byte (a Latin-1 comment pasted into a source) costs the candidate nothing but
    // that character: it becomes U+FFFD instead of making the line unreadable.
    record = nlohmann::json::parse(validUtf8(line));
  } catch (const nlohmann::json::exception& e) {
    c.readError = fmt::format("{}: malformed JSON: {}", origin, e.what());
    return c;
  }
  if (!record.is_object()) {
    c.readError = fmt::format("{}: expected a JSON object with problem and source/response fields", origin);
    return c;
  }
  auto stringField = [&](const char* key, std::string& out) -> bool {
    auto it = record.find(key);
    if (it == record.end() || it->is_null()) return false;
    if (!it->is_string()) {
      c.readError = fmt::format("{}: field '{}' must be a string", origin, key);
      return false;
    }
    out = it->get<std::string>();
    return true;
  };
  if (!stringField("problem", c.problemId)) {
    if (c.readError.empty()) c.readError = fmt::format("{}: missing field 'problem'", origin);
    return c;
  }
  stringField("model", c.model);
  if (auto it = record.find("sample"); it != record.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
      c.readError = fmt::format("{}: field 'sample' must be a non-negative integer", origin);
      return c;
    }
    c.sample = it->get<std::int64_t>();
  }
  // A sample the generator could not obtain (a malformed or refused endpoint answer) says why.
  if (std::string error; stringField("error", error) && !error.empty()) {
    c.readError = fmt::format("{}: the model gave no usable response: {}", origin, error);
    return c;
  }
  if (!c.readError.empty()) return c;
  std::string response;
  const bool hasSource = stringField("source", c.source);
  const bool hasResponse = !hasSource && stringField("response", response);
  if (!c.readError.empty()) return c;
  if (!hasSource && !hasResponse) {
    c.readError = fmt::format("{}: needs a 'source' or a 'response' field", origin);
    return c;
  }
  if (hasResponse) {
    if (response.size() > kMaxCandidateSourceBytes) {
      c.readError = fmt::format("{}: response is {} bytes, over the {} byte limit", origin, response.size(), kMaxCandidateSourceBytes);
      return c;
    }
    auto code = extractCodeFromResponse(response);
    if (!code) {
      c.readError = fmt::format("{}: {}", origin, code.error());
      return c;
    }
    c.source = std::move(code).value();
  }
  if (c.source.size() > kMaxCandidateSourceBytes) {
    c.readError = fmt::format("{}: source is {} bytes, over the {} byte limit", origin, c.source.size(), kMaxCandidateSourceBytes);
    c.source.clear();
  }
  return c;
}

std::vector<Candidate> readJsonl(const fs::path& path, const std::string& defaultModel) {
  std::vector<Candidate> out;
  forEachJsonlLine(path, "candidates file",
                   [&](const std::string& line, const std::string& where) { out.push_back(parseJsonLine(line, where, defaultModel)); });
  return out;
}

// problems/level1/relu/solutions/x.cu, cands/level1/relu/x.cu -> "level1/relu"
std::string problemIdFromPath(const fs::path& file) {
  std::vector<std::string> parts;
  for (const auto& p : file.parent_path()) parts.push_back(p.string());
  if (!parts.empty() && parts.back() == "solutions") parts.pop_back();
  static const std::regex kLevel("level[0-9]+");
  if (parts.size() >= 2 && std::regex_match(parts[parts.size() - 2], kLevel)) {
    return parts[parts.size() - 2] + "/" + parts.back();
  }
  return {};
}

std::vector<Candidate> readDirectory(const fs::path& root, const std::string& defaultModel) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied); it != fs::recursive_directory_iterator();
       ++it) {
    const auto ext = it->path().extension();
    // An imported problem keeps KernelBench's own file beside problem.yaml: the problem, not a candidate.
    const bool problemSource = it->path().filename() == "kernelbench_source.py";
    if ((ext == ".cu" || (ext == ".py" && !problemSource)) && (it->is_regular_file() || it->is_symlink())) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::error_code ec;
  fs::path realRoot = fs::weakly_canonical(root, ec);
  if (realRoot.filename().empty()) realRoot = realRoot.parent_path();  // "cands/" -> "cands"
  std::vector<Candidate> out;
  for (const auto& file : files) {
    Candidate c;
    c.origin = file.string();
    c.model = defaultModel;
    c.sample = -1;
    c.problemId = problemIdFromPath(file);
    if (auto runFile = parseKernelBenchRunFileName(file.filename().string())) {
      c.kernelbench = runFile->first;
      c.sample = runFile->second;
      c.problemId = fmt::format("kernelbench/level{}/{}", runFile->first.level, runFile->first.number);  // until resolved
    }
    // A link may point anywhere (/etc/shadow, another user's files): one that leaves the folder is
    // not followed, so nothing outside it reaches a compile log or a report.
    const fs::path target = fs::weakly_canonical(file, ec);
    const auto [rootEnd, _] = std::mismatch(realRoot.begin(), realRoot.end(), target.begin(), target.end());
    if (fs::is_symlink(file) && (ec || rootEnd != realRoot.end())) {
      c.readError = fmt::format("{}: a symbolic link to {}, outside the candidates folder: not followed", file.string(), target.string());
    } else if (!fs::is_regular_file(file)) {
      c.readError = fmt::format("{}: not a regular file", file.string());
    } else if (c.problemId.empty()) {
      c.readError = fmt::format(
          "{}: cannot tell which problem this is for (expected .../levelN/<problem>/<file>.cu or .py, or KernelBench's "
          "level_<L>_problem_<P>_sample_<S>_kernel.py)",
          file.string());
    } else if (fs::file_size(file) > kMaxCandidateSourceBytes) {
      c.readError = fmt::format("{}: over the {} byte limit", file.string(), kMaxCandidateSourceBytes);
    } else {
      c.source = readFile(file);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Gives every candidate without an explicit sample the next free number for its (model, problem),
// and turns repeated keys into read errors so that results stay one per key.
void assignSamples(std::vector<Candidate>& candidates) {
  std::map<std::string, std::set<std::int64_t>> taken;
  for (const auto& c : candidates) {
    if (c.sample >= 0) taken[c.model + "\n" + c.problemId].insert(c.sample);
  }
  std::map<std::string, std::int64_t> next;
  std::set<std::string> seen;
  for (auto& c : candidates) {
    const std::string group = c.model + "\n" + c.problemId;
    if (c.sample < 0) {
      std::int64_t& n = next[group];
      while (taken[group].contains(n)) ++n;
      c.sample = n;
      taken[group].insert(n);
    }
    if (!seen.insert(c.key()).second && c.readError.empty()) {
      c.readError = fmt::format("{}: duplicate candidate (model '{}', problem '{}', sample {})", c.origin, c.model, c.problemId, c.sample);
    }
  }
}

}  // namespace

std::string candidateKey(std::string_view model, std::string_view problemId, std::int64_t sample) {
  return fmt::format("{}\x1f{}\x1f{}", model, problemId, sample);
}

std::string Candidate::key() const { return candidateKey(model, problemId, sample); }

Expected<std::string> extractCodeFromResponse(std::string_view response) {
  const auto blocks = fencedBlocks(response);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (it->code.find("/*@cuset") != std::string::npos) return it->code;
  }
  // KernelBench's form: the Python file that defines ModelNew (its CUDA is inside, as strings).
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (it->code.find("class ModelNew") != std::string::npos) return it->code;
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (it->code.find("__global__") != std::string::npos) return it->code;
  }
  if (blocks.empty() && (response.find("/*@cuset") != std::string_view::npos || response.find("class ModelNew") != std::string_view::npos)) {
    return std::string(response);  // bare code
  }
  if (blocks.empty()) return Unexpected{"response has no fenced code block"};
  return Unexpected{fmt::format("none of the response's {} code block(s) has a /*@cuset manifest, a ModelNew or a __global__ kernel", blocks.size())};
}

std::optional<std::pair<KernelBenchRunFile, std::int64_t>> parseKernelBenchRunFileName(std::string_view fileName) {
  static const std::regex kRunFile(R"(level_([0-9]{1,3})_problem_([0-9]{1,6})_sample_([0-9]{1,9})_kernel\.py)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(fileName.begin(), fileName.end(), m, kRunFile)) return std::nullopt;
  return std::pair{KernelBenchRunFile{std::stoi(m[1].str()), std::stoi(m[2].str())}, std::stoll(m[3].str())};
}

std::set<std::pair<int, int>> kernelBenchRunFileProblems(const fs::path& folder) {
  if (!fs::is_directory(folder))
    throw makeError("{}: --kernelbench needs a KernelBench run folder (level_L_problem_P_sample_S_kernel.py files)", folder.string());
  std::set<std::pair<int, int>> out;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied); it != fs::recursive_directory_iterator();
       ++it) {
    if (auto runFile = parseKernelBenchRunFileName(it->path().filename().string())) out.insert({runFile->first.level, runFile->first.number});
  }
  if (out.empty()) throw makeError("{}: no KernelBench run files in it (level_L_problem_P_sample_S_kernel.py)", folder.string());
  return out;
}

void resolveKernelBenchRunFiles(std::vector<Candidate>& candidates, const ProblemSuite& suite) {
  std::map<std::pair<int, int>, std::string> imported;
  for (const auto& p : suite.problems()) {
    if (p.origin && p.origin->suite == "kernelbench") imported[{p.origin->level, p.origin->number}] = p.id;
  }
  for (auto& c : candidates) {
    if (!c.kernelbench) continue;
    auto it = imported.find({c.kernelbench->level, c.kernelbench->number});
    if (it != imported.end()) {
      c.problemId = it->second;
    } else if (c.readError.empty()) {
      c.readError = fmt::format(
          "{}: KernelBench level {} problem {} is not in the suite {} ({} KernelBench problems imported there; import it with "
          "`cuset import kernelbench KB_ROOT --out {} --only level{}/{}`, or pass --kernelbench KB_ROOT)",
          c.origin, c.kernelbench->level, c.kernelbench->number, suite.root().string(), imported.size(), suite.root().string(), c.kernelbench->level,
          c.kernelbench->number);
    }
  }
}

std::vector<Candidate> readCandidates(const fs::path& path, const std::string& defaultModel) {
  std::vector<Candidate> out;
  if (fs::is_directory(path)) {
    out = readDirectory(path, defaultModel);
  } else if (fs::is_regular_file(path)) {
    out = readJsonl(path, defaultModel);
  } else {
    throw makeError("{}: candidates not found (expected a .jsonl file or a folder of .cu files)", path.string());
  }
  assignSamples(out);
  return out;
}

}  // namespace cuset
