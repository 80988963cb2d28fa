// What the process can learn about the GPU before it uses it.
#pragma once

#include <cuda_runtime_api.h>

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

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
std::string device_description();

}  // namespace common
