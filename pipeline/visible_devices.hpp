#pragma once
// Which GPUs the CUDA driver of a command-line process sees (issue P11).
// The driver's start grows with every GPU it sees, whether the process uses
// it or not: on a lent 4 x H200 host (persistence mode on) cudaGetDeviceCount
// took 870-1,070 ms with all four visible and 184-199 ms with one
// (bench/p11_visible_probe.sh, stop 43). A command that can use only the GPUs
// up to index k (a run or filter on its one device, a batch given
// execution.device) lets the driver see just those: CUDA_VISIBLE_DEVICES cut
// to its first k + 1 entries (or "0,...,k" where it is unset), which keeps
// every index the same, so messages, statistics and summaries name the
// devices as before. A batch sees only the GPUs of its list (every GPU by
// default) that its files' work pays the start of, one for light files
// (pipeline/batch.cpp, let_the_driver_see_the_gpus_that_pay). Only where the
// process is the command's own: the CLI, never the Python module.
#include <optional>
#include <string>
#include <vector>

#include "pipeline/config.hpp"

namespace sigstream {

// Unset, the variable is narrowed for devices 0..highest only below this.
inline constexpr int kMostDevicesNarrowed = 64;

// What CUDA_VISIBLE_DEVICES should become so that the driver sees only the
// GPUs 0..highest of those it sees now (`current`: the variable's value,
// nullptr where it is unset), or nullopt where it already sees no more.
[[nodiscard]] std::optional<std::string> visible_devices_through(const char* current, int highest);

// The highest GPU index the config's run (`batch` false: its one device,
// 0 by default) or batch (its execution.device list; empty = every GPU)
// can use, or nullopt where it may use any GPU or none (backend cpu).
[[nodiscard]] std::optional<int> highest_device_used(const Config& config, bool batch);
// The same for `devices` (execution.device) under backend `kind`, for a
// caller that resolved the backend itself (a batch's --backend, a CPU-only stage).
[[nodiscard]] std::optional<int> highest_device_used(const std::vector<int>& devices,
                                                     BackendKind kind, bool batch);

// Cuts CUDA_VISIBLE_DEVICES to the GPUs 0..highest (visible_devices_through)
// and says so in the trace. Call it before any CUDA call and while no other
// thread reads the environment (setenv is not safe beside getenv). Returns
// the value set, or nullopt where the variable was left as it was.
std::optional<std::string> let_the_driver_see_through(int highest);

// The same for the command about to run `config` in this process, with
// highest_device_used. A batch's engine does it itself
// (BatchOptions::narrow_visible_devices), where its default of every GPU
// also becomes one for a batch of light files.
std::optional<std::string> see_only_devices_used(const Config& config, bool batch);

} // namespace sigstream
