#include "cuset/evaluator/kernelbench/kernelbench_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <future>
#include <regex>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/common/thread_pool.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/suite/problem_check.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

using SourceFile = KernelBenchSourceFile;

std::string pythonProgram(const KernelBenchImportOptions& o) { return pythonWithTorch(o.python); }

// The KernelBench commit: a git checkout's HEAD, else "commit <hex>" in its README, else unknown.
std::string findCommit(const fs::path& root) {
  const fs::path head = root / ".git" / "HEAD";
  if (fs::is_regular_file(head)) {
    std::string ref = readFile(head);
    while (!ref.empty() && std::isspace(static_cast<unsigned char>(ref.back()))) ref.pop_back();
    if (ref.rfind("ref: ", 0) == 0) {
      const fs::path refFile = root / ".git" / ref.substr(5);
      if (fs::is_regular_file(refFile)) ref = readFile(refFile);
      while (!ref.empty() && std::isspace(static_cast<unsigned char>(ref.back()))) ref.pop_back();
    }
    if (!ref.empty() && ref.rfind("ref: ", 0) != 0) return ref.substr(0, 12);
  }
  for (const char* readme : {"README.md", "KernelBench/README.md"}) {
    if (!fs::is_regular_file(root / readme)) continue;
    static const std::regex kCommit(R"(commit\s+`?([0-9a-f]{7,40})`?)");
    std::smatch m;
    const std::string text = readFile(root / readme);
    if (std::regex_search(text, m, kCommit)) return m[1].str();
  }
  return "unknown";
}

bool selected(const SourceFile& f, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  const std::string stem = fs::path(f.relative).stem().string();
  for (const auto& o : only) {
    if (o == f.relative || o == stem || o == fmt::format("level{}/{}", f.level, f.number) || o == fmt::format("level{}/{}", f.level, stem) ||
        o == fmt::format("level{}/{}", f.level, f.name)) {
      return true;
    }
  }
  return false;
}

std::vector<SourceFile> listSources(const KernelBenchImportOptions& o) {
  std::vector<SourceFile> files = listKernelBenchSources(o.root, o.levels);
  std::erase_if(files, [&](const SourceFile& f) { return !selected(f, o.only); });
  return files;
}

// ---- import.json -> problem.yaml -------------------------------------------------------------------

void emitShape(YAML::Emitter& out, const json& shape) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const auto& d : shape) {
    const std::string s = d.get<std::string>();
    if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      out << std::stoll(s);
    else
      out << s;
  }
  out << YAML::EndSeq;
}

void emitInit(YAML::Emitter& out, const json& init) {
  out << YAML::Flow << YAML::BeginMap << YAML::Key << "dist" << YAML::Value << init.at("dist").get<std::string>();
  for (const char* key : {"mean", "std", "low", "high"}) {
    if (!init.contains(key)) continue;
    out << YAML::Key << key << YAML::Value;
    if (init.at(key).is_number_integer())
      out << init.at(key).get<std::int64_t>();
    else
      out << init.at(key).get<double>();
  }
  out << YAML::EndMap;
}

void emitTensors(YAML::Emitter& out, const json& list, bool withInit) {
  out << YAML::BeginMap;
  for (const auto& t : list) {
    out << YAML::Key << t.at("name").get<std::string>() << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "dtype" << YAML::Value << t.at("dtype").get<std::string>();
    out << YAML::Key << "shape" << YAML::Value;
    emitShape(out, t.at("shape"));
    if (withInit && t.contains("init")) {
      out << YAML::Key << "init" << YAML::Value;
      emitInit(out, t.at("init"));
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emitArchives(YAML::Emitter& out, const json& archives) {
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [set, file] : archives.items()) out << YAML::Key << set << YAML::Value << file.get<std::string>();
  out << YAML::EndMap;
}

// The size sets the tracer wrote ("small"/"medium" and "full"; older tracers: always small and full).
std::vector<std::string> sizeSetsOf(const json& imported) {
  if (!imported.contains("size_sets")) return {"small", "full"};
  return imported.at("size_sets").get<std::vector<std::string>>();
}

std::string problemYaml(const SourceFile& f, const std::string& commit, const json& imported) {
  YAML::Emitter out;
  out << YAML::Comment(fmt::format("Imported from KernelBench {} ({}) by `cuset import kernelbench`: do not edit, re-import.", f.relative, commit));
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << f.name;
  out << YAML::Key << "level" << YAML::Value << f.level;
  out << YAML::Key << "tags" << YAML::Value << YAML::Flow << YAML::BeginSeq << "kernelbench" << fmt::format("kernelbench-level{}", f.level)
      << YAML::EndSeq;
  std::string description = imported.value("description", "");
  if (description.empty()) description = fmt::format("KernelBench {}", f.relative);
  out << YAML::Key << "description" << YAML::Value << description;
  const std::vector<std::string> sets = sizeSetsOf(imported);
  out << YAML::Key << "sizes" << YAML::Value << YAML::BeginMap;
  for (const std::string& set : sets) {
    out << YAML::Key << set << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : imported.at("sizes").at(set).items()) out << YAML::Key << k << YAML::Value << v.get<std::int64_t>();
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  json inputs = imported.at("inputs");
  for (const auto& p : imported.at("parameters")) inputs.push_back(p);
  out << YAML::Key << "inputs" << YAML::Value;
  emitTensors(out, inputs, true);
  out << YAML::Key << "outputs" << YAML::Value;
  emitTensors(out, imported.at("outputs"), false);
  const json& ref = imported.at("reference");
  out << YAML::Key << "reference_archive" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "archives" << YAML::Value;
  emitArchives(out, ref.at("archives"));
  if (ref.at("scripted").get<bool>()) {
    out << YAML::Key << "args" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& a : ref.at("args")) {
      if (a.is_string() && a.get<std::string>().rfind("input:", 0) == 0)
        out << a.get<std::string>().substr(6);
      else if (a.is_boolean())
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "int" << YAML::Value << (a.get<bool>() ? 1 : 0) << YAML::EndMap;
      else if (a.is_number_integer())
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "int" << YAML::Value << a.get<std::int64_t>() << YAML::EndMap;
      else
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "float" << YAML::Value << a.get<double>() << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "attributes" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& a : ref.at("attributes")) out << a.get<std::string>();
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  if (const auto& t = imported.at("input_transform"); !t.is_null()) {
    out << YAML::Key << "input_transform" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "draws" << YAML::Value;
    emitTensors(out, t.at("draws"), true);
    out << YAML::Key << "archives" << YAML::Value;
    emitArchives(out, t.at("archives"));
    out << YAML::Key << "produces" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& p : t.at("produces")) out << p.get<std::string>();
    out << YAML::EndSeq << YAML::EndMap;
  }
  // The tracer gives a tolerance only where the dtype default (1e-4 for float32) is not KernelBench's.
  if (const auto& t = imported.value("tolerance", json()); !t.is_null()) {
    out << YAML::Key << "tolerance" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "atol" << YAML::Value << t.at("atol").get<double>()
        << YAML::Key << "rtol" << YAML::Value << t.at("rtol").get<double>() << YAML::EndMap;
  }
  out << YAML::Key << "cost" << YAML::Value << YAML::BeginMap;
  for (const std::string& set : sets) {
    const json& c = imported.at("cost").at(set);
    out << YAML::Key << set << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "flops" << YAML::Value << c.at("flops").get<std::int64_t>()
        << YAML::Key << "bytes" << YAML::Value << c.at("bytes").get<std::int64_t>() << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "origin" << YAML::Value << YAML::BeginMap << YAML::Key << "suite" << YAML::Value << "kernelbench" << YAML::Key << "commit"
      << YAML::Value << commit << YAML::Key << "level" << YAML::Value << f.level << YAML::Key << "number" << YAML::Value << f.number << YAML::Key
      << "file" << YAML::Value << f.relative << YAML::Key << "source" << YAML::Value << "kernelbench_source.py";
  if (const json& overrides = imported.value("size_overrides", json::object()); !overrides.empty()) {
    out << YAML::Key << "size_overrides" << YAML::Value << YAML::BeginMap;
    for (const auto& [set, knobs] : overrides.items()) {
      out << YAML::Key << set << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& [name, value] : knobs.items()) out << YAML::Key << name << YAML::Value << value.get<std::int64_t>();
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (const json& defect = imported.value("defect", json()); defect.is_object()) {
    out << YAML::Key << "defect" << YAML::Value << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << defect.at("kind").get<std::string>()
        << YAML::Key << "reason" << YAML::Value << defect.at("reason").get<std::string>() << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (!out.good()) throw makeError("{}: cannot write problem.yaml: {}", f.relative, out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

std::string firstLine(const std::string& s) {
  const auto end = s.find('\n');
  return end == std::string::npos ? s : s.substr(0, end);
}

// Writes problem.yaml and runs `cuset problems check` on it. A reference that runs but that a trivial
// kernel would match is KernelBench's defect: the problem is written again with it flagged (`defect:`)
// and the numbers as the reason. False, with r.reason set, when the reference is broken.
bool writeCheckedProblem(const SourceFile& f, const std::string& commit, json& imported, const fs::path& work, ImportedProblem& r) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string yaml = problemYaml(f, commit, imported);
    writeFileAtomic(work / "problem.yaml", yaml);
    const Problem problem = parseProblem(yaml, (work / "problem.yaml").string(), work);
    const ProblemCheckResult check = checkProblem(problem, 1);
    if (!check.failures.empty()) {
      r.reason = fmt::format("cuset problems check: {}", firstLine(check.failures.front()));
      return false;
    }
    if (check.ok()) return true;
    imported["defect"] = {{"kind", "degenerate"}, {"reason", fmt::format("{}", fmt::join(check.defects, "; "))}};
  }
  r.reason = "cuset problems check: the problem stays defective after being flagged";
  return false;
}

ImportedProblem importOne(const SourceFile& f, const KernelBenchImportOptions& o, const std::string& commit) {
  const auto start = std::chrono::steady_clock::now();
  ImportedProblem r;
  r.source = f.relative;
  r.status = "skipped";
  const fs::path levelDir = o.outDir / fmt::format("level{}", f.level);
  const fs::path finalDir = levelDir / f.name;
  const fs::path work = levelDir / fmt::format(".{}.importing", f.name);
  auto finish = [&](ImportedProblem& result) {
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::error_code ec;
    fs::remove_all(work, ec);
    if (result.status != "imported") fs::remove_all(finalDir, ec);  // no stale problem of an earlier import
    return result;
  };
  fs::remove_all(work);
  fs::create_directories(work);
  const SubprocessResult run =
      runSubprocess({pythonProgram(o), resources().path("kb_entry").string(), "trace", "--file", f.path.string(), "--out", work.string(),
                     "--trace-memory-gib", fmt::format("{}", o.traceMemoryGiB), "--small-max-mib", fmt::format("{}", o.smallMaxMiB),
                     "--small-max-gflop", fmt::format("{}", o.smallMaxGflop), "--medium-max-mib", fmt::format("{}", o.mediumMaxMiB),
                     "--medium-max-gflop", fmt::format("{}", o.mediumMaxGflop)},
                    std::chrono::duration_cast<std::chrono::milliseconds>(o.timeoutPerFile));
  const fs::path resultFile = work / "import.json";
  if (!run.ok() || !fs::is_regular_file(resultFile)) {
    std::string tail = run.output.size() > 400 ? run.output.substr(run.output.size() - 400) : run.output;
    r.reason = run.timedOut ? fmt::format("the tracer ran past {} s", o.timeoutPerFile.count())
                            : fmt::format("the tracer failed (exit {}, signal {}): {}", run.exitCode, run.signal, tail);
    r.transient = true;
    return finish(r);
  }
  try {
    json imported = readJsonFile(resultFile);
    if (imported.at("status") != "imported") {
      r.reason = imported.value("reason", "no reason given");
      return finish(r);
    }
    fs::copy_file(f.path, work / "kernelbench_source.py", fs::copy_options::overwrite_existing);
    fs::remove(resultFile);
    if (!writeCheckedProblem(f, commit, imported, work, r)) return finish(r);
    r.details = {{"scaling", imported.at("scaling")},
                 {"verification", imported.at("verification")},
                 {"scripted", imported.at("reference").at("scripted")},
                 {"input_transform", !imported.at("input_transform").is_null()},
                 {"size_sets", sizeSetsOf(imported)}};
    if (const json& defect = imported.value("defect", json()); defect.is_object()) r.details["defect"] = defect;
    std::error_code ec;
    fs::remove_all(finalDir, ec);
    fs::rename(work, finalDir);
    r.status = "imported";
    r.id = fmt::format("level{}/{}", f.level, f.name);
    std::vector<std::string> notes;
    if (!imported.at("reference").at("scripted")) {
      notes.push_back(fmt::format("traced per size set ({})", imported.at("reference").value("script_error", "not scripted")));
    }
    if (const auto& t = imported.value("tolerance", json()); !t.is_null() && t.contains("reason")) {
      notes.push_back(fmt::format("atol {:g}: {}", t.at("atol").get<double>(), t.at("reason").get<std::string>()));
    }
    for (const auto& n : imported.value("notes", json::array())) notes.push_back(n.get<std::string>());
    r.reason = fmt::format("{}", fmt::join(notes, "; "));
  } catch (const std::exception& e) {
    r.reason = fmt::format("import failed: {}", firstLine(e.what()));
  }
  return finish(r);
}

}  // namespace

std::string ImportedProblem::defect() const {
  if (!details.is_object() || !details.contains("defect")) return "";
  return details.at("defect").value("kind", "defect");
}

bool ImportedProblem::simulable() const {
  if (status != "imported") return false;
  if (!details.is_object() || !details.contains("size_sets")) return true;  // reports from before medium/full-only sets
  const auto& sets = details.at("size_sets");
  return std::find(sets.begin(), sets.end(), "small") != sets.end();
}

std::map<std::string, ImportCounts> importCountsPerLevel(const KernelBenchImportReport& report) {
  std::map<std::string, ImportCounts> counts;
  for (const auto& p : report.problems) {
    for (const std::string& key : {p.source.substr(0, p.source.find('/')), std::string("all")}) {
      ImportCounts& c = counts[key];
      ++c.files;
      if (p.status != "imported") {
        ++c.skipped;
        continue;
      }
      ++c.imported;
      if (!p.defect().empty()) ++c.flagged;
      if (!p.simulable()) ++c.gpuOnly;
    }
  }
  return counts;
}

std::size_t KernelBenchImportReport::imported() const {
  return static_cast<std::size_t>(std::count_if(problems.begin(), problems.end(), [](auto& p) { return p.status == "imported"; }));
}

std::vector<KernelBenchSourceFile> listKernelBenchSources(const fs::path& root, const std::vector<int>& levels) {
  static const std::regex kFile(R"((\d+)_(.+)\.py)");
  std::vector<KernelBenchSourceFile> files;
  bool anyLevel = false;
  for (int level : levels) {
    const fs::path dir = root / "KernelBench" / fmt::format("level{}", level);
    if (!fs::is_directory(dir)) continue;
    anyLevel = true;
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::smatch m;
      const std::string file = entry.path().filename().string();
      if (!entry.is_regular_file() || !std::regex_match(file, m, kFile)) continue;
      files.push_back({level, std::stoi(m[1].str()), entry.path(), fmt::format("level{}/{}", level, file), kernelBenchProblemName(file)});
    }
  }
  if (!anyLevel) {
    throw makeError("{}: no KernelBench/level{{N}} folder for levels {} (expected KB_ROOT/KernelBench/level1/1_*.py)", root.string(),
                    fmt::join(levels, ","));
  }
  std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return std::tie(a.level, a.number) < std::tie(b.level, b.number); });
  return files;
}

std::string kernelBenchProblemName(const std::string& fileName) {
  std::string stem = fs::path(fileName).stem().string();
  std::string out = "kb";
  bool underscore = false;
  for (char c : stem) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (underscore && out.size() > 2) out += '_';
      underscore = false;
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      underscore = true;
    }
  }
  return out.size() > 64 ? out.substr(0, 64) : out;
}

KernelBenchImportReport importKernelBench(const KernelBenchImportOptions& options) {
  const std::vector<SourceFile> files = listSources(options);
  if (files.empty())
    throw makeError("{}: no KernelBench problem file matches (levels {}, --only {})", options.root.string(), fmt::join(options.levels, ","),
                    fmt::join(options.only, " "));
  const SubprocessResult probe = runSubprocess({pythonProgram(options), "-c", "import torch"}, std::chrono::seconds(120));
  if (!probe.ok()) {
    throw makeError(
        "{}: cannot import torch ({}); run scripts/install-deps.sh (it makes the project's .venv) or set CUSET_PYTHON to a Python that has torch",
        pythonProgram(options), firstLine(probe.output));
  }
  KernelBenchImportReport report;
  report.commit = options.commit.empty() ? findCommit(options.root) : options.commit;
  report.root = fs::absolute(options.root).lexically_normal().string();
  const fs::path reportFile = options.outDir / "import-report.json";
  if (!options.only.empty() && fs::is_regular_file(reportFile)) {
    report = importReportFromJson(readJsonFile(reportFile), reportFile.string());  // --only: keep the other entries
  }
  fs::create_directories(options.outDir);
  ThreadPool pool(options.jobs);
  ProgressBar progress("import", files.size(), "problem", options.progress);
  std::vector<std::future<ImportedProblem>> pending;
  for (const auto& f : files) {
    pending.push_back(pool.submit([&, f] {
      ImportedProblem r = importOne(f, options, report.commit);
      progress.advance();
      return r;
    }));
  }
  for (auto& p : pending) {
    ImportedProblem r = p.get();
    auto same = std::find_if(report.problems.begin(), report.problems.end(), [&](auto& e) { return e.source == r.source; });
    if (same != report.problems.end())
      *same = std::move(r);
    else
      report.problems.push_back(std::move(r));
  }
  progress.finish();
  std::sort(report.problems.begin(), report.problems.end(), [](const ImportedProblem& a, const ImportedProblem& b) {
    static const std::regex kNum(R"(level(\d+)/(\d+)_)");
    std::smatch ma, mb;
    std::regex_search(a.source, ma, kNum);
    std::regex_search(b.source, mb, kNum);
    if (ma.empty() || mb.empty()) return a.source < b.source;
    return std::pair(std::stoi(ma[1]), std::stoi(ma[2])) < std::pair(std::stoi(mb[1]), std::stoi(mb[2]));
  });
  writeFileAtomic(reportFile, importReportJson(report).dump(1) + "\n");
  writeFileAtomic(options.outDir / "import-report.md", importReportMarkdown(report));
  return report;
}

}  // namespace cuset
