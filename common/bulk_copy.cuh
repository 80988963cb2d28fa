// Hopper's copy engine seen from a kernel: one thread asks for a contiguous block of global
// memory to land in shared memory (cp.async.bulk), and every thread that needs the data waits on
// an mbarrier that the copy itself completes. No registers hold the bytes in flight, so a block
// can keep far more of them outstanding than its threads could with loads (sm_90 and newer).
//
//   __shared__ uint64_t full;  // one barrier per buffer
//   if (threadIdx.x == 0) {
//     mbarrier_init(&full, 1);
//     fence_barrier_init();
//   }
//   __syncthreads();
//   if (threadIdx.x == 0) {
//     mbarrier_expect_bytes(&full, bytes);
//     bulk_copy_to_shared(buffer, src, bytes, &full);
//   }
//   mbarrier_wait(&full, phase);  // phase 0, 1, 0, ... on each reuse of the buffer
//
// Addresses and sizes must be multiples of 16 bytes. Built for an older GPU, every function here
// traps: launchers check common::has_sm90_features() (gpu_info.hpp) before choosing such a kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace common {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define COMMON_BULK_COPY_ASM(...) __trap()
#else
#define COMMON_BULK_COPY_ASM(...) asm volatile(__VA_ARGS__)
#endif

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A barrier that completes a phase once `arrivals` threads arrived and all expected bytes landed.
__device__ __forceinline__ void mbarrier_init([[maybe_unused]] uint64_t* barrier,
                                              [[maybe_unused]] uint32_t arrivals) {
  COMMON_BULK_COPY_ASM("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)),
                       "r"(arrivals)
                       : "memory");
}

// Makes the initialized barriers visible to the copy engine (then a __syncthreads for the block).
__device__ __forceinline__ void fence_barrier_init() {
  COMMON_BULK_COPY_ASM("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Orders this thread's earlier ordinary shared-memory accesses before later copy-engine writes:
// a buffer the block has just read may be refilled.
__device__ __forceinline__ void fence_proxy_async_shared() {
  COMMON_BULK_COPY_ASM("fence.proxy.async.shared::cta;" ::: "memory");
}

// The calling thread arrives and announces `bytes` more to land before the phase completes.
__device__ __forceinline__ void mbarrier_expect_bytes([[maybe_unused]] uint64_t* barrier,
                                                      [[maybe_unused]] uint32_t bytes) {
  COMMON_BULK_COPY_ASM(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
      "r"(bytes)
      : "memory");
}

// Global → shared, `bytes` (a multiple of 16) from 16-byte aligned addresses; completes on
// `barrier`. The data may be read only after mbarrier_wait has returned for that phase.
__device__ __forceinline__ void bulk_copy_to_shared([[maybe_unused]] void* dst,
                                                    [[maybe_unused]] const void* src,
                                                    [[maybe_unused]] uint32_t bytes,
                                                    [[maybe_unused]] uint64_t* barrier) {
  COMMON_BULK_COPY_ASM(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(barrier))
      : "memory");
}

// Blocks until the barrier's phase with parity `phase` (0 or 1) has completed. With
// kClusterScope, what other blocks of the cluster stored into this block and counted on the
// barrier (cluster_mailbox.cuh) is visible afterwards too, not only this block's own copies.
template <bool kClusterScope = false>
__device__ __forceinline__ void mbarrier_wait([[maybe_unused]] uint64_t* barrier,
                                              [[maybe_unused]] uint32_t phase) {
  [[maybe_unused]] const uint32_t address = shared_address(barrier);
  uint32_t done = 0;
  while (!done) {
    if constexpr (kClusterScope) {
      COMMON_BULK_COPY_ASM(
          "{\n"
          ".reg .pred p;\n"
          "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n"
          "}\n"
          : "=r"(done)
          : "r"(address), "r"(phase)
          : "memory");
    } else {
      COMMON_BULK_COPY_ASM(
          "{\n"
          ".reg .pred p;\n"
          "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n"
          "}\n"
          : "=r"(done)
          : "r"(address), "r"(phase)
          : "memory");
    }
  }
}

#undef COMMON_BULK_COPY_ASM

}  // namespace common
