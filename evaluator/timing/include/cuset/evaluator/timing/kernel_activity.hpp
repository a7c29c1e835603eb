#pragma once
// What a CUPTI kernel-activity record contributes to a measurement, independent of CUPTI itself so
// that it is testable without a GPU. One measured iteration of a candidate may launch several kernels
// on several streams; its time is the *busy* time of the GPU for those kernels: the length of the
// union of their [start, end) intervals (overlapping kernels are not double-counted, gaps between
// launches are not counted).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cuset {

struct KernelRecord {
  std::uint64_t startNs = 0, endNs = 0;
  std::uint64_t externalId = 0;  // the iteration, pushed as an external correlation id around its launches
  std::uint32_t streamId = 0;
  std::string name;
};

struct IterationTiming {
  std::uint64_t externalId = 0;
  double busyMs = 0.0;  // union of the kernels' intervals
  double spanMs = 0.0;  // first start to last end
  std::size_t kernels = 0;
};

struct ActivitySummary {
  std::vector<IterationTiming> iterations;  // by external id, ascending
  std::vector<std::string> problems;        // record-count mismatches, dropped records
};

// Groups records by external id and checks each iteration against the number of kernel launches it
// made; `droppedRecords` is CUPTI's own count of records it could not deliver.
ActivitySummary summariseActivity(const std::vector<KernelRecord>& records, std::size_t launchesPerIteration,
                                  const std::vector<std::uint64_t>& expectedIterations, std::size_t droppedRecords);

// Length of the union of [start, end) intervals, in ns.
std::uint64_t busyNanoseconds(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals);

}  // namespace cuset
