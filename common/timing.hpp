// Benchmark timing: CUDA events around the launch only, warm-up first, L2 flushed before every
// timed run so that each run reads its input from device memory, median of many runs.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace common {

struct Timing {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int runs = 0;
};

struct TimingOptions {
  int warmup_runs = 3;
  int min_runs = 15;
  int max_runs = 200;
  double budget_ms = 200;  // the run count stops growing once this much GPU time is spent
  bool flush_l2 = true;
};

// Times `launch(stream)`; everything it enqueues on `stream` is included.
Timing time_gpu(const std::function<void(cudaStream_t)>& launch, const TimingOptions& options = {});

// Device-to-device copy bandwidth in GB/s (bytes read + bytes written, 10^9), measured once per
// process with a copy many times larger than L2: the roofline the benchmarks compare against.
double copy_bandwidth_gbs();

}  // namespace common
