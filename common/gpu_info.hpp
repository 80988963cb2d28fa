// What the process can learn about the GPU before it uses it.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace common {

// Why no CUDA device can be used (no driver, no device, ...), or nothing when one can.
std::optional<std::string> gpu_unavailable_reason();

// Properties of the device current at the first call, read once per process: the chapters serve
// that one device (README, "What you need"), and what they size by it (grids, workspaces, the
// sm_90 paths) would not fit another.
const cudaDeviceProp& device_properties();

// Whether this program may use what sm_90 brought (thread-block clusters, the copy engine's bulk
// copies, transaction barriers) on the current device: the device must be sm_90 or newer, and so
// must the code its kernels were compiled for. A build for older GPUs alone
// (-DCMAKE_CUDA_ARCHITECTURES=80) still runs on an H100, from the compute_80 PTX the driver
// compiles at load time, and that code has no sm_90 paths: they are compiled out (and trap, or
// do nothing). Kernels built on common/bulk_copy.cuh or on clusters run only where this holds.
bool has_sm90_features();

// Why has_sm90_features() is false, for error messages ("this GPU is sm_80", or which code the
// kernels were compiled for, read from an empty kernel's attributes); empty when it is true.
const std::string& sm90_features_missing();

// Blocks of `threads` threads at `registers` registers each that share an SM (at least one): as
// many as the 64K-register file and the 2048 thread slots take.
constexpr int blocks_per_sm(int threads, int registers) {
  return std::max(1, std::min(2048 / threads, 65536 / (threads * registers)));
}

// Blocks of that shape the whole GPU runs at once: blocks_per_sm on every SM. With a block per
// row, the rows in flight; more rows wait for a second wave.
int64_t resident_blocks(int threads, int registers);

// Whether the rows in flight at once, one per resident block (resident_blocks, up to
// `rows`), `bytes_per_row` each, fit in L2: the test of every kernel that reads its rows a
// second time from cache.
bool rows_in_flight_fit_l2(int64_t rows, int64_t bytes_per_row, int threads, int registers);

// Bytes of device memory free now (cudaMemGetInfo): what a test that needs gigabytes asks first.
size_t free_device_memory();

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
std::string device_description();

}  // namespace common
