#include "cuset/trainer/distributed_env.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <optional>

#include "cuset/common/error.hpp"

namespace cuset {
namespace {

std::optional<long> integerVariable(const EnvLookup& lookup, const char* name, long low, long high) {
  const char* raw = lookup(name);
  if (!raw || !*raw) return std::nullopt;
  const std::string text = raw;
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    throw makeError("{}={}: expected an integer from {} to {}", name, text, low, high);
  }
  return value;
}

long requiredInteger(const EnvLookup& lookup, const char* name, long low, long high, int worldSize) {
  const auto v = integerVariable(lookup, name, low, high);
  if (!v) {
    throw makeError(
        "WORLD_SIZE={} but {} is not set: start data-parallel training with `cuset launch`, torchrun, or a script that "
        "exports RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (docs/scale-out.md)",
        worldSize, name);
  }
  return *v;
}

}  // namespace

std::string DistributedEnv::describe() const { return fmt::format("rank {} of {}", rank, worldSize); }

DistributedEnv readDistributedEnv(const EnvLookup& lookup) {
  DistributedEnv env;
  if (auto t = integerVariable(lookup, "CUSET_DIST_TIMEOUT", 1, 24 * 3600)) env.timeout = std::chrono::seconds(*t);
  const auto world = integerVariable(lookup, "WORLD_SIZE", 1, 1 << 20);
  if (!world || *world == 1) return env;
  env.worldSize = static_cast<int>(*world);
  env.rank = static_cast<int>(requiredInteger(lookup, "RANK", 0, env.worldSize - 1, env.worldSize));
  env.localRank = static_cast<int>(requiredInteger(lookup, "LOCAL_RANK", 0, env.worldSize - 1, env.worldSize));
  // torchrun always sets LOCAL_WORLD_SIZE; a hand-written script may not, and then nothing is assumed
  // about how many ranks share this node except that this one does.
  env.localWorldSize = static_cast<int>(integerVariable(lookup, "LOCAL_WORLD_SIZE", 1, env.worldSize).value_or(env.localRank + 1));
  if (env.localRank >= env.localWorldSize) {
    throw makeError("LOCAL_RANK={} but LOCAL_WORLD_SIZE={}: expected LOCAL_RANK < LOCAL_WORLD_SIZE", env.localRank, env.localWorldSize);
  }
  const char* addr = lookup("MASTER_ADDR");
  if (!addr || !*addr) {
    throw makeError("WORLD_SIZE={} but MASTER_ADDR is not set: it names the host of rank 0, where the ranks meet", env.worldSize);
  }
  env.masterAddr = addr;
  env.masterPort = static_cast<int>(requiredInteger(lookup, "MASTER_PORT", 1, 65535, env.worldSize));
  return env;
}

DistributedEnv readDistributedEnv() {
  return readDistributedEnv([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace cuset
