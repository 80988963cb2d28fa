// Register caps that apply only where they were tuned.
//
// Some kernels cap their registers below what their block size allows (__launch_bounds__'s
// minimum blocks per SM, __maxnreg__), so that more blocks share an SM. The caps were measured on
// sm_90 (H100, H200), where every capped kernel compiles without spilling. Built for another
// architecture, the same code at the same caps spilled in places (nvcc 13.0: sm_80, sm_89,
// sm_100 and sm_120), so there each kernel may have every register its block size allows. The
// host code's occupancy arithmetic, which assumes the sm_90 caps, only picks shapes: nothing
// depends on blocks being resident together.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
#define COMMON_REGISTER_CAPS_TUNED 0
#else
#define COMMON_REGISTER_CAPS_TUNED 1
#endif

// __launch_bounds__(threads, COMMON_TUNED_MIN_BLOCKS(b)): b blocks per SM where tuned, else 1.
#define COMMON_TUNED_MIN_BLOCKS(blocks) (COMMON_REGISTER_CAPS_TUNED ? (blocks) : 1)

namespace common {
// The most registers a thread may use in a block of `threads` threads: an SM's 64K registers,
// allocated 8 at a time, and at most 255.
constexpr int max_registers_for_block(int threads) {
  return 65536 / threads / 8 * 8 > 255 ? 255 : 65536 / threads / 8 * 8;
}
}  // namespace common

// __maxnreg__ (CUDA 12.4 and newer) caps a kernel's registers without capping its block size,
// which __launch_bounds__ can only do together. COMMON_TUNED_MAX_REGISTERS(tuned, threads):
// `tuned` registers where tuned; elsewhere all that blocks of `threads` threads allow, since left
// to itself the compiler chose fewer for some kernels, and spilled. Older toolkits leave it out.
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))
#if COMMON_REGISTER_CAPS_TUNED
#define COMMON_TUNED_MAX_REGISTERS(tuned, threads) __maxnreg__(tuned)
#else
#define COMMON_TUNED_MAX_REGISTERS(tuned, threads) \
  __maxnreg__(::common::max_registers_for_block(threads))
#endif
#else
#define COMMON_TUNED_MAX_REGISTERS(tuned, threads)
#endif
