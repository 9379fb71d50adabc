// CUDA_VISIBLE_DEVICES cut to the GPUs a command can use (issue P11): the
// first k + 1 entries, whatever they are (indices, UUIDs), so index i names
// the same GPU as before; never more entries than were visible; nothing
// set where the command may use every GPU or none. Configs parsed from YAML
// as a user writes them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "pipeline/config.hpp"
#include "pipeline/visible_devices.hpp"

namespace sigstream {
namespace {

Config config_with(const std::string& execution) {
  return parse_config("version: 1\nsource: {file: in.wav}\nstages: [{type: gain, db: -3}]\n"
                      "execution: {" +
                          execution + "}\n",
                      "test");
}

TEST(VisibleDevices, UnsetBecomesTheIndicesUpToTheHighest) {
  EXPECT_EQ(visible_devices_through(nullptr, 0), "0");
  EXPECT_EQ(visible_devices_through(nullptr, 3), "0,1,2,3");
  EXPECT_EQ(visible_devices_through(nullptr, -1), std::nullopt);
}

TEST(VisibleDevices, AGivenListKeepsItsFirstEntriesAsWritten) {
  EXPECT_EQ(visible_devices_through("3,1,2,0", 0), "3");
  EXPECT_EQ(visible_devices_through("3,1,2,0", 1), "3,1");
  EXPECT_EQ(visible_devices_through("3,1,2,0", 2), "3,1,2");
  EXPECT_EQ(visible_devices_through("GPU-5f1c,GPU-9a2e,GPU-0b7d", 1), "GPU-5f1c,GPU-9a2e");
  EXPECT_EQ(visible_devices_through("MIG-aa11/1/0,MIG-bb22/2/0", 0), "MIG-aa11/1/0");
}

TEST(VisibleDevices, NeverMoreThanWereVisible) {
  // As many entries as the command may use, or fewer: left as it is (the
  // driver's own count and the "does not exist" message stay true).
  EXPECT_EQ(visible_devices_through("2,3", 1), std::nullopt);
  EXPECT_EQ(visible_devices_through("2,3", 5), std::nullopt);
  EXPECT_EQ(visible_devices_through("7", 0), std::nullopt);
  EXPECT_EQ(visible_devices_through("", 0), std::nullopt);
}

TEST(VisibleDevices, WhatItCannotReadSafelyIsLeftAlone) {
  // An empty or repeated entry among those kept: how the driver reads it is its own.
  EXPECT_EQ(visible_devices_through(",0,1", 0), std::nullopt);
  EXPECT_EQ(visible_devices_through("0, ,1,2", 1), std::nullopt);
  EXPECT_EQ(visible_devices_through("0,0,1", 1), std::nullopt);
  EXPECT_EQ(visible_devices_through("0,1,", 1), "0,1");
  EXPECT_EQ(visible_devices_through("0,1,,2", 0), "0");
  // A device past any host (a typo) builds no list: the driver's message says so.
  EXPECT_EQ(visible_devices_through(nullptr, kMostDevicesNarrowed - 1)->size(), 181U);
  EXPECT_EQ(visible_devices_through(nullptr, kMostDevicesNarrowed), std::nullopt);
  EXPECT_EQ(visible_devices_through(nullptr, 2147483647), std::nullopt);
}

TEST(VisibleDevices, TheDevicesACommandCanUse) {
  // A run or filter uses one GPU: execution.device's first, 0 by default.
  EXPECT_EQ(highest_device_used(config_with("backend: auto"), false), 0);
  EXPECT_EQ(highest_device_used(config_with("backend: cuda, device: 2"), false), 2);
  // A batch: every GPU by default, else the highest of its list.
  EXPECT_EQ(highest_device_used(config_with("backend: cuda"), true), std::nullopt);
  EXPECT_EQ(highest_device_used(config_with("device: [0]"), true), 0);
  EXPECT_EQ(highest_device_used(config_with("backend: cuda, device: [3, 1]"), true), 3);
  // The CPU backend starts no driver.
  EXPECT_EQ(highest_device_used(config_with("backend: cpu, device: 1"), false), std::nullopt);
  EXPECT_EQ(highest_device_used(config_with("backend: cpu, device: [1]"), true), std::nullopt);
}

TEST(VisibleDevices, SetsTheVariableOnlyWhereItNarrowsIt) {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> saved =
      before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("CUDA_VISIBLE_DEVICES", "1,0,2", 1);
  EXPECT_EQ(see_only_devices_used(config_with("backend: cuda"), true), std::nullopt);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "1,0,2");
  EXPECT_EQ(see_only_devices_used(config_with("device: [1]"), true), "1,0");
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "1,0");
  EXPECT_EQ(see_only_devices_used(config_with("backend: auto"), false), "1");
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "1");
  if (saved)
    ::setenv("CUDA_VISIBLE_DEVICES", saved->c_str(), 1);
  else
    ::unsetenv("CUDA_VISIBLE_DEVICES");
}

} // namespace
} // namespace sigstream
