// torchrun's environment as `cuset train` reads it: world 1 by default, every variable checked once
// WORLD_SIZE > 1, each mistake named.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/trainer/distributed_env.hpp"

namespace cuset {
namespace {

DistributedEnv read(const std::map<std::string, std::string>& vars) {
  return readDistributedEnv([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string errorOf(const std::map<std::string, std::string>& vars) {
  try {
    read(vars);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::map<std::string, std::string> kRank1 = {
    {"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node07"}, {"MASTER_PORT", "29500"}};

TEST(DistributedEnv, NoVariablesIsOneProcess) {
  const auto env = read({});
  EXPECT_FALSE(env.active());
  EXPECT_TRUE(env.leader());
  EXPECT_EQ(env.worldSize, 1);
  EXPECT_EQ(env.localWorldSize, 1);
  EXPECT_EQ(env.timeout, std::chrono::minutes(5));
  // A world of one needs nothing else, as torchrun --nproc 1 gives.
  EXPECT_FALSE(read({{"WORLD_SIZE", "1"}, {"RANK", "0"}}).active());
}

TEST(DistributedEnv, ReadsTorchrunsVariables) {
  const auto env = read(kRank1);
  EXPECT_TRUE(env.active());
  EXPECT_FALSE(env.leader());
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.worldSize, 4);
  EXPECT_EQ(env.localWorldSize, 2);
  EXPECT_EQ(env.masterAddr, "node07");
  EXPECT_EQ(env.masterPort, 29500);
  EXPECT_EQ(env.describe(), "rank 1 of 4");
  auto withTimeout = kRank1;
  withTimeout["CUSET_DIST_TIMEOUT"] = "30";
  EXPECT_EQ(read(withTimeout).timeout, std::chrono::seconds(30));
}

TEST(DistributedEnv, LocalWorldSizeMayBeMissing) {
  auto vars = kRank1;
  vars.erase("LOCAL_WORLD_SIZE");
  EXPECT_EQ(read(vars).localWorldSize, 2);  // at least this rank's local index + 1
}

TEST(DistributedEnv, EachMistakeIsNamed) {
  for (const char* name : {"RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}) {
    auto vars = kRank1;
    vars.erase(name);
    const std::string error = errorOf(vars);
    EXPECT_NE(error.find(std::string(name) + " is not set"), std::string::npos) << error;
    EXPECT_NE(error.find("WORLD_SIZE=4"), std::string::npos) << error;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {{"RANK", "4"},
                                                                {"RANK", "-1"},
                                                                {"RANK", "one"},
                                                                {"WORLD_SIZE", "0"},
                                                                {"MASTER_PORT", "70000"},
                                                                {"LOCAL_RANK", "2x"},
                                                                {"CUSET_DIST_TIMEOUT", "0"}};
  for (const auto& [name, value] : bad) {
    auto vars = kRank1;
    vars[name] = value;
    const std::string error = errorOf(vars);
    EXPECT_NE(error.find(name + "=" + value + ": expected an integer"), std::string::npos) << name << "=" << value << ": " << error;
  }
  auto vars = kRank1;
  vars["LOCAL_RANK"] = "2";
  EXPECT_NE(errorOf(vars).find("LOCAL_RANK=2 but LOCAL_WORLD_SIZE=2"), std::string::npos) << errorOf(vars);
}

}  // namespace
}  // namespace cuset
