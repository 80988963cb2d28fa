// Run once at configure time (cmake/ReportGpu.cmake): asks the CUDA runtime, as the GPU tests
// will, whether a device is usable, and prints its name or the runtime's reason.
#include "../common/no_gpu_reason.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    std::printf("%s", common::no_gpu_reason(error).c_str());
    return 1;
  }
  if (count == 0) {
    std::printf("the CUDA runtime sees no device");
    return 1;
  }
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) {
    std::printf("device 0 does not answer");
    return 1;
  }
  std::printf("%s (sm_%d%d)", properties.name, properties.major, properties.minor);
  return 0;
}
