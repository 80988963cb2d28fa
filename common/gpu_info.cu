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

namespace {
// Compiled like every kernel of the program (the same CMAKE_CUDA_ARCHITECTURES): the code the
// driver picks for it on this device is the code it picks for them.
__global__ void empty_probe_kernel() {}
}  // namespace

int kernels_compiled_for() {
  static const int arch = [] {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, empty_probe_kernel));
    return attributes.ptxVersion;
  }();
  return arch;
}

bool has_sm90_features() {
  static const bool has =
      sm90_features_missing().empty();  // asked on every launch of some versions
  return has;
}

std::string sm90_features_missing() {
  const cudaDeviceProp& p = device_properties();
  std::ostringstream s;
  if (p.major < 9)
    s << "this GPU is sm_" << p.major << p.minor;
  else if (kernels_compiled_for() < 90)
    s << "this GPU is sm_" << p.major << p.minor << ", but the kernels run from code compiled for "
      << "compute_" << kernels_compiled_for()
      << " (configure with -DCMAKE_CUDA_ARCHITECTURES=" << p.major << p.minor << ")";
  return s.str();
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
