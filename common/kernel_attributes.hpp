// Kernel attributes and occupancy, asked of the driver once per process.
//
// A launcher that sets an attribute of its kernel (a larger shared-memory limit, clusters of more
// than 8 blocks) or sizes its grid by the kernel's occupancy would otherwise call the driver on
// every launch: host time that every call pays, though the answer never changes. What these
// functions learn is kept per kernel, for the device current at the first call (one device per
// process: README, "What you need"). Several host threads may call them at once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace common {

// cudaFuncSetAttribute(kernel, attribute, value), unless this process already set that attribute
// of that kernel to that value through this function: every setting of it must go through here.
void set_kernel_attribute(const void* kernel, cudaFuncAttribute attribute, int value);

// Blocks of `kernel` that one SM holds at once, with `threads` threads and `shared_bytes` of
// dynamic shared memory (cudaOccupancyMaxActiveBlocksPerMultiprocessor; 0 when the block does not
// fit), asked once for each (kernel, threads, shared_bytes). The kernel's attributes enter the
// answer, so they must be set before the first call.
int max_blocks_per_sm(const void* kernel, int threads, size_t shared_bytes);

// The same for a kernel named by its function pointer.
template <typename... Params>
void set_kernel_attribute(void (*kernel)(Params...), cudaFuncAttribute attribute, int value) {
  set_kernel_attribute(reinterpret_cast<const void*>(kernel), attribute, value);
}
template <typename... Params>
int max_blocks_per_sm(void (*kernel)(Params...), int threads, size_t shared_bytes) {
  return max_blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, shared_bytes);
}

}  // namespace common
