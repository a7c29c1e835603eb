#pragma once
// A console reporter that also keeps every run by name, for the side-by-side tables the benchmarks
// print after Google Benchmark's own output.
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace cuset::bench {

class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, Run> runs;  // by benchmark_name(), e.g. "region_round_trip/shared/64/real_time"
  void ReportRuns(const std::vector<Run>& rs) override {
    for (const auto& r : rs) runs[r.benchmark_name()] = r;
    ConsoleReporter::ReportRuns(rs);
  }
};

}  // namespace cuset::bench
