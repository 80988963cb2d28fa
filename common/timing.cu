#include "timing.hpp"

#include "device_buffer.hpp"
#include "errors.hpp"
#include "gpu_info.hpp"

#include <algorithm>
#include <vector>

namespace common {
namespace {

// Reads every 16 bytes of `data`; the impossible store keeps the loads from being optimized out.
__global__ void read_all_kernel(const int4* data, size_t count, int4* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const int4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) sink[0] = int4{acc, 0, 0, 0};
}

// Reading a buffer twice the size of L2 evicts whatever the previous run left there. Reading,
// not writing (cudaMemset): a written flush buffer leaves L2 full of dirty lines, and the timed
// kernel would pay for writing them back to memory.
class L2Flusher {
 public:
  L2Flusher()
      : buffer_(std::max<size_t>(2 * static_cast<size_t>(device_properties().l2CacheSize),
                                 size_t{64} << 20) / sizeof(int4)),
        sink_(1) {
    buffer_.fill_bytes(0x11);  // written once; the warm-up runs absorb its write-back
  }
  void flush(cudaStream_t stream) {
    read_all_kernel<<<4 * device_properties().multiProcessorCount, 512, 0, stream>>>(
        buffer_.data(), buffer_.size(), sink_.data());
    CUDA_CHECK_LAUNCH();
  }

 private:
  DeviceBuffer<int4> buffer_;
  DeviceBuffer<int4> sink_;
};

class EventPair {
 public:
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_, stop_;
};

double time_once_us(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                    L2Flusher* flusher, const EventPair& events) {
  if (flusher) flusher->flush(stream);
  CUDA_CHECK(cudaEventRecord(events.start(), stream));
  launch(stream);
  CUDA_CHECK(cudaEventRecord(events.stop(), stream));
  CUDA_CHECK(cudaEventSynchronize(events.stop()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, events.start(), events.stop()));
  return 1000.0 * ms;
}

}  // namespace

Timing time_gpu(const std::function<void(cudaStream_t)>& launch, const TimingOptions& options) {
  static L2Flusher flusher;
  cudaStream_t stream = nullptr;  // the default stream: launchers use it unless told otherwise
  EventPair events;
  L2Flusher* flush = options.flush_l2 ? &flusher : nullptr;

  for (int i = 0; i < options.warmup_runs; ++i) time_once_us(launch, stream, flush, events);
  std::vector<double> samples{time_once_us(launch, stream, flush, events)};
  const double estimate_us = std::max(samples[0], 1.0);
  const int runs = std::clamp(static_cast<int>(options.budget_ms * 1000.0 / estimate_us),
                              options.min_runs, options.max_runs);
  while (static_cast<int>(samples.size()) < runs)
    samples.push_back(time_once_us(launch, stream, flush, events));

  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  Timing t;
  t.runs = static_cast<int>(n);
  t.min_us = samples.front();
  t.max_us = samples.back();
  t.median_us = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return t;
}

double copy_bandwidth_gbs() {
  static const double gbs = [] {
    const size_t bytes = size_t{1} << 30;  // 1 GiB each way: far beyond any L2
    DeviceBuffer<unsigned char> src(bytes), dst(bytes);
    src.fill_bytes(0x5A);
    TimingOptions options;
    options.min_runs = 20;
    options.max_runs = 20;
    const Timing t = time_gpu(
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s));
        },
        options);
    return 2.0 * static_cast<double>(bytes) / (t.median_us * 1e3);
  }();
  return gbs;
}

}  // namespace common
