#include "gpu_info.hpp"

#include "errors.hpp"
#include "no_gpu_reason.hpp"

#include <sstream>

namespace common {

std::optional<std::string> gpu_unavailable_reason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls do not inherit it
    return "no usable CUDA device: " + no_gpu_reason(err);
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

// The virtual architecture of the code the current device runs for this program's kernels (90:
// compute_90 PTX or an sm_90 binary compiled from it), as CUB's PtxVersion reads it.
int kernels_compiled_for() {
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, empty_probe_kernel));
  return attributes.ptxVersion;
}

std::string why_no_sm90_features() {
  const cudaDeviceProp& p = device_properties();
  std::ostringstream s;
  if (p.major < 9) {
    s << "this GPU is sm_" << p.major << p.minor;
  } else if (const int arch = kernels_compiled_for(); arch < 90) {
    s << "this GPU is sm_" << p.major << p.minor << ", but the kernels run from code compiled for "
      << "compute_" << arch << " (configure with -DCMAKE_CUDA_ARCHITECTURES=" << p.major << p.minor
      << ")";
  }
  return s.str();
}

}  // namespace

// Asked on every launch of some versions: found once.
const std::string& sm90_features_missing() {
  static const std::string why = why_no_sm90_features();
  return why;
}

bool has_sm90_features() {
  return sm90_features_missing().empty();
}

size_t free_device_memory() {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
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
