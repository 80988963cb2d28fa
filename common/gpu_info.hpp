// What the process can learn about the GPU before it uses it.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace common {

// Why no CUDA device can be used (no driver, no device, ...), or nothing when one can.
std::optional<std::string> gpu_unavailable_reason();

// Properties of the current device, read once per process.
const cudaDeviceProp& device_properties();

// Whether the device has the copy engine's bulk copies and transaction barriers (sm_90 and newer):
// kernels built on common/bulk_copy.cuh run only where this holds.
bool has_bulk_copy();

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

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
std::string device_description();

}  // namespace common
