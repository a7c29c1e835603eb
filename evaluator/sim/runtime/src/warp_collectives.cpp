// Warp collectives and block barriers: a lane records the collective it waits in and yields; once
// every participant waits, the scheduler computes all their results at once (so no lane can overwrite
// another's value) in BlockRunner::resolveWarpGroup.
#include <algorithm>
#include <cstdint>

#include "block_runner.hpp"
#include "ptx_program.hpp"

namespace cuset_sim {

namespace detail {

namespace {

bool inGroup(unsigned group, int lane) { return lane >= 0 && lane < 32 && (group & (1u << lane)); }

// A reduction (__reduce_*_sync) over the group's 32-bit values, in lane order.
std::uint64_t reduceWarp(WarpOp op, const std::uint64_t (&values)[32], unsigned group) {
  std::uint64_t reduced = 0;
  auto in = [&](int lane) { return inGroup(group, lane); };
  bool init = false;
  for (int lane = 0; lane < 32; ++lane) {
    if (!in(lane)) continue;
    const auto u = static_cast<std::uint32_t>(values[lane]);
    const auto s = static_cast<std::int32_t>(u);
    if (!init) {
      reduced = u;
      init = true;
      continue;
    }
    const auto r = static_cast<std::uint32_t>(reduced);
    switch (op) {
      case WarpOp::reduce_add:
        reduced = static_cast<std::uint32_t>(r + u);
        break;
      case WarpOp::reduce_min:
        reduced = std::min(r, u);
        break;
      case WarpOp::reduce_max:
        reduced = std::max(r, u);
        break;
      case WarpOp::reduce_min_signed:
        reduced = static_cast<std::uint32_t>(std::min(static_cast<std::int32_t>(r), s));
        break;
      case WarpOp::reduce_max_signed:
        reduced = static_cast<std::uint32_t>(std::max(static_cast<std::int32_t>(r), s));
        break;
      case WarpOp::reduce_and:
        reduced = r & u;
        break;
      case WarpOp::reduce_or:
        reduced = r | u;
        break;
      case WarpOp::reduce_xor:
        reduced = r ^ u;
        break;
      default:
        break;
    }
  }
  return reduced;
}

// What one lane of the group gets back from the collective it waited in.
WarpResult laneResult(const Lane& l, int lane, const std::uint64_t (&values)[32], unsigned group, unsigned ballot, unsigned matchAll,
                      std::uint64_t reduced) {
  auto in = [&](int src) { return inGroup(group, src); };
  const int width = (l.width >= 1 && l.width <= 32) ? l.width : 32;
  const int base = lane - lane % width;
  std::uint64_t v = values[lane];
  int predicate = 0;
  auto from = [&](int src) { return in(src) ? values[src] : values[lane]; };
  switch (l.op) {
    case WarpOp::sync:
    case WarpOp::wmma_load:
    case WarpOp::wmma_store:
    case WarpOp::wmma_mma:
      break;
    case WarpOp::ptx_shfl:
    case WarpOp::ptx_ldmatrix:
    case WarpOp::ptx_mma:
      break;
    case WarpOp::shfl_idx:
      v = from(base + ((l.arg % width) + width) % width);
      break;
    case WarpOp::shfl_up:
      v = lane - l.arg >= base ? from(lane - l.arg) : values[lane];
      break;
    case WarpOp::shfl_down:
      v = lane + l.arg < base + width ? from(lane + l.arg) : values[lane];
      break;
    case WarpOp::shfl_xor:
      v = ((lane ^ l.arg) >= base && (lane ^ l.arg) < base + width) ? from(lane ^ l.arg) : values[lane];
      break;
    case WarpOp::ballot:
      v = ballot;
      break;
    case WarpOp::any:
      predicate = ballot != 0;
      v = predicate;
      break;
    case WarpOp::all:
      predicate = ballot == group;
      v = predicate;
      break;
    case WarpOp::match_any: {
      unsigned m = 0;
      for (int j = 0; j < 32; ++j) {
        if (in(j) && values[j] == values[lane]) m |= 1u << j;
      }
      v = m;
      break;
    }
    case WarpOp::match_all:
      predicate = static_cast<int>(matchAll);
      v = matchAll ? group : 0;
      break;
    default:
      v = reduced;
      break;
  }
  return WarpResult{v, predicate};
}

}  // namespace

bool BlockRunner::resolveWarpGroup(std::size_t first, std::size_t last, Lane& leader, std::vector<Lane*>& wake) {
  const unsigned myBit = 1u << leader.ctx.lane;
  if ((leader.mask & myBit) == 0) {
    fail(leader, format("%s with mask 0x%08x, which does not include the calling lane %u", warpOpName(leader.op), leader.mask, leader.ctx.lane));
    return false;
  }
  // Lanes that do not exist (a partial last warp) or have exited are left out of the group, except
  // from a WMMA operation, which is defined only when the whole warp performs it.
  const bool wholeWarp = leader.op == WarpOp::wmma_load || leader.op == WarpOp::wmma_store || leader.op == WarpOp::wmma_mma ||
                         leader.op == WarpOp::ptx_ldmatrix || leader.op == WarpOp::ptx_mma;
  unsigned group = 0;
  for (std::size_t i = first; i < last; ++i) {
    const Lane& l = lanes_[i];
    if (wholeWarp && l.state == Lane::State::done) {
      fail(leader, format("%s reached by only part of the warp: lane %u has exited (warp-wide matrix operations need every lane of the warp)",
                          warpOpName(leader.op), l.ctx.lane));
      return false;
    }
    if ((leader.mask & (1u << l.ctx.lane)) == 0 || l.state == Lane::State::done) continue;
    if (l.state == Lane::State::block || l.state == Lane::State::until) return false;  // cannot complete now
    if (l.state == Lane::State::warp && (l.op != leader.op || l.mask != leader.mask)) {
      fail(l, format("divergent warp collective: this lane waits in %s (mask 0x%08x, line %d) while lane %u waits in %s (mask 0x%08x, line %d)",
                     warpOpName(l.op), l.mask, l.line, leader.ctx.lane, warpOpName(leader.op), leader.mask, leader.line));
      return false;
    }
    group |= 1u << l.ctx.lane;
  }
  std::uint64_t values[32] = {};
  for (std::size_t i = first; i < last; ++i) {
    if (group & (1u << lanes_[i].ctx.lane)) values[lanes_[i].ctx.lane] = lanes_[i].value;
  }
  if (leader.op == WarpOp::ptx_shfl || leader.op == WarpOp::ptx_ldmatrix || leader.op == WarpOp::ptx_mma) {
    // Inline PTX: each lane's value points at its operands; the instruction writes every lane's result.
    ptx::LaneSlot* slots[32] = {};
    for (int lane = 0; lane < 32; ++lane) slots[lane] = reinterpret_cast<ptx::LaneSlot*>(values[lane]);
    if (const std::string error = ptx::warpCompute(leader.op, slots, group); !error.empty()) {
      fail(leader, error);
      return false;
    }
  }
  auto in = [&](int lane) { return inGroup(group, lane); };
  unsigned ballot = 0, matchAll = 1;
  std::uint64_t first_value = 0;
  bool haveFirst = false;
  for (int lane = 0; lane < 32; ++lane) {
    if (!in(lane)) continue;
    if (values[lane] != 0) ballot |= 1u << lane;
    if (!haveFirst) {
      first_value = values[lane];
      haveFirst = true;
    } else if (values[lane] != first_value) {
      matchAll = 0;
    }
  }
  const std::uint64_t reduced = reduceWarp(leader.op, values, group);
  warpSynchronized(first / 32);
  for (std::size_t i = first; i < last; ++i) {
    Lane& l = lanes_[i];
    const int lane = static_cast<int>(l.ctx.lane);
    if (!in(lane)) continue;
    l.warpResult = laneResult(l, lane, values, group, ballot, matchAll, reduced);
    l.state = Lane::State::ready;
    wake.push_back(&l);
  }
  return true;
}

}  // namespace detail

using detail::currentLane;
using detail::Lane;
using detail::yield;

const char* warpOpName(WarpOp op) {
  switch (op) {
    case WarpOp::sync:
      return "__syncwarp";
    case WarpOp::shfl_idx:
      return "__shfl_sync";
    case WarpOp::shfl_up:
      return "__shfl_up_sync";
    case WarpOp::shfl_down:
      return "__shfl_down_sync";
    case WarpOp::shfl_xor:
      return "__shfl_xor_sync";
    case WarpOp::ballot:
      return "__ballot_sync";
    case WarpOp::any:
      return "__any_sync";
    case WarpOp::all:
      return "__all_sync";
    case WarpOp::match_any:
      return "__match_any_sync";
    case WarpOp::match_all:
      return "__match_all_sync";
    case WarpOp::reduce_add:
      return "__reduce_add_sync";
    case WarpOp::reduce_min:
    case WarpOp::reduce_min_signed:
      return "__reduce_min_sync";
    case WarpOp::reduce_max:
    case WarpOp::reduce_max_signed:
      return "__reduce_max_sync";
    case WarpOp::reduce_and:
      return "__reduce_and_sync";
    case WarpOp::reduce_or:
      return "__reduce_or_sync";
    case WarpOp::reduce_xor:
      return "__reduce_xor_sync";
    case WarpOp::wmma_load:
      return "wmma::load_matrix_sync";
    case WarpOp::wmma_store:
      return "wmma::store_matrix_sync";
    case WarpOp::wmma_mma:
      return "wmma::mma_sync";
    case WarpOp::ptx_shfl:
      return "shfl.sync (inline PTX)";
    case WarpOp::ptx_ldmatrix:
      return "ldmatrix/stmatrix (inline PTX)";
    case WarpOp::ptx_mma:
      return "mma.sync (inline PTX)";
  }
  return "?";
}

WarpResult warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int arg, int width, int line) {
  Lane& lane = currentLane(warpOpName(op));
  lane.state = Lane::State::warp;
  lane.op = op;
  lane.mask = mask;
  lane.value = value;
  lane.arg = arg;
  lane.width = width;
  lane.line = line;
  yield(lane);
  return lane.warpResult;
}

int block_barrier(BlockOp op, int predicate, int line) {
  Lane& lane = currentLane("__syncthreads");
  lane.state = Lane::State::block;
  lane.blockOp = op;
  lane.predicate = predicate;
  lane.line = line;
  yield(lane);
  return lane.blockResult;
}

void wait_until(bool (*ready)(const void*), const void* arg, const char* what, int line) {
  if (ready(arg)) return;
  Lane& lane = currentLane(what);
  lane.state = Lane::State::until;
  lane.ready = ready;
  lane.readyArg = arg;
  lane.waitingFor = what;
  lane.line = line;
  yield(lane);
}

unsigned active_mask() {
  Lane& lane = currentLane("__activemask");
  // Threads of a warp that have not exited; the simulator does not model divergence within a warp.
  const ThreadContext& c = lane.ctx;
  const std::size_t n = std::size_t{c.block->blockDim.x} * c.block->blockDim.y * c.block->blockDim.z;
  const std::size_t first = c.linear - c.lane;
  unsigned mask = 0;
  Lane* base = &lane - c.lane;
  for (std::size_t i = first; i < std::min(first + 32, n); ++i) {
    if (base[i - first].state != Lane::State::done) mask |= 1u << (i - first);
  }
  return mask;
}

}  // namespace cuset_sim
