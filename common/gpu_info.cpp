#include "gpu_info.hpp"

#include "errors.hpp"

#include <sstream>

namespace common {

std::optional<std::string> gpu_unavailable_reason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls do not inherit it
    return std::string("no usable CUDA device: ") + cudaGetErrorName(err) + " (" +
           cudaGetErrorString(err) + ")";
  }
  if (count == 0) return std::string("no CUDA device found");
  return std::nullopt;
}

const cudaDeviceProp& device_properties() {
  static const cudaDeviceProp props = [] {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    return p;
  }();
  return props;
}

bool has_bulk_copy() {
  return device_properties().major >= 9;
}

std::string device_description() {
  const cudaDeviceProp& p = device_properties();
  std::ostringstream s;
  s << p.name << " (sm_" << p.major << p.minor << ", " << p.multiProcessorCount << " SMs, "
    << (p.l2CacheSize >> 20) << " MiB L2)";
  return s.str();
}

int64_t resident_blocks(int threads, int registers) {
  return int64_t{blocks_per_sm(threads, registers)} * device_properties().multiProcessorCount;
}

bool rows_in_flight_fit_l2(int64_t rows, int64_t bytes_per_row, int threads, int registers) {
  const cudaDeviceProp& gpu = device_properties();
  const int64_t rows_in_flight = std::min<int64_t>(rows, resident_blocks(threads, registers));
  return rows_in_flight * bytes_per_row <= gpu.l2CacheSize;
}

}  // namespace common
