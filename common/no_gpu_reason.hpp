// Why the CUDA runtime cannot use a GPU, in words that point at the fix. Header-only, so that the
// configure-time probe (cmake/gpu_probe.cpp) and the test and benchmark mains say the same.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace common {

// `error`: what cudaGetDeviceCount returned (not cudaSuccess).
inline std::string no_gpu_reason(cudaError_t error) {
  std::string reason =
      std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
  if (error == cudaErrorInsufficientDriver) {
    // The runtime says this both where the driver is too old and where there is none at all,
    // the usual case on a machine without a GPU; the driver's version tells them apart.
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) return reason;
    const auto version = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    if (driver == 0)
      reason += ": no NVIDIA driver is installed";
    else if (driver < CUDART_VERSION)
      reason += ": the NVIDIA driver supports CUDA " + version(driver) + ", older than the CUDA " +
                version(CUDART_VERSION) + " runtime this program was built with";
  }
  return reason;
}

}  // namespace common
