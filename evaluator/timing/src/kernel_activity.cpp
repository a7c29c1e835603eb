#include "cuset/evaluator/timing/kernel_activity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace cuset {

std::uint64_t busyNanoseconds(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t busy = 0, coveredTo = 0;
  bool any = false;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!any || start >= coveredTo) {
      busy += end - start;
      coveredTo = end;
      any = true;
    } else if (end > coveredTo) {
      busy += end - coveredTo;
      coveredTo = end;
    }
  }
  return busy;
}

ActivitySummary summariseActivity(const std::vector<KernelRecord>& records, std::size_t launchesPerIteration,
                                  const std::vector<std::uint64_t>& expectedIterations, std::size_t droppedRecords) {
  std::map<std::uint64_t, std::vector<const KernelRecord*>> byIteration;
  for (const auto& r : records) byIteration[r.externalId].push_back(&r);
  ActivitySummary out;
  if (droppedRecords > 0) out.problems.push_back(fmt::format("CUPTI dropped {} activity record(s): timings may be incomplete", droppedRecords));
  // One line for all mismatched iterations: a measurement runs thousands of them, and one cause
  // (records not attributed, a launch that does not happen) usually explains every one.
  std::size_t mismatched = 0;
  std::string firstMismatch;
  for (std::uint64_t id : expectedIterations) {
    const auto it = byIteration.find(id);
    const std::size_t got = it == byIteration.end() ? 0 : it->second.size();
    if (got != launchesPerIteration && mismatched++ == 0) {
      firstMismatch = fmt::format("iteration {}: {} kernel record(s) for {} launch(es)", id, got, launchesPerIteration);
    }
    if (got == 0) continue;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
    std::uint64_t first = UINT64_MAX, last = 0;
    for (const auto* r : it->second) {
      intervals.emplace_back(r->startNs, r->endNs);
      first = std::min(first, r->startNs);
      last = std::max(last, r->endNs);
    }
    out.iterations.push_back({id, static_cast<double>(busyNanoseconds(intervals)) / 1e6, static_cast<double>(last - first) / 1e6, got});
  }
  if (mismatched == 1) out.problems.push_back(firstMismatch);
  if (mismatched > 1)
    out.problems.push_back(fmt::format("{} of {} iterations with a kernel-record count other than their launches (first: {})", mismatched,
                                       expectedIterations.size(), firstMismatch));
  for (const auto& [id, list] : byIteration) {
    if (std::find(expectedIterations.begin(), expectedIterations.end(), id) == expectedIterations.end()) {
      out.problems.push_back(
          fmt::format("{} kernel record(s) outside any measured iteration (external id {}): work launched where it "
                      "is not timed",
                      list.size(), id));
    }
  }
  return out;
}

}  // namespace cuset
