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

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
std::string device_description();

}  // namespace common
