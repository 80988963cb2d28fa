// Device memory that frees itself, and guarded buffers that catch unwritten outputs and
// out-of-bounds writes without a sanitizer.
#pragma once

#include "errors.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace common {

// Owns `size()` elements of device memory. Move-only.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    CHECK_ARG(count_ <= SIZE_MAX / sizeof(T),
              count_ << " elements of " << sizeof(T) << " bytes overflow a byte count");
    if (count_ > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    CHECK_ARG(host.size() == count_, "host has " << host.size() << " elements, buffer " << count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Elements [first, first + count) only: one row of a matrix too large to copy back whole.
  std::vector<T> download(size_t first, size_t count) const {
    CHECK_ARG(first <= count_ && count <= count_ - first,
              "elements [" << first << ", " << first + count << ") of a buffer of " << count_);
    std::vector<T> host(count);
    if (count > 0)
      CUDA_CHECK(cudaMemcpy(host.data(), ptr_ + first, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  void fill_bytes(unsigned char byte) {
    if (count_ > 0) CUDA_CHECK(cudaMemset(ptr_, byte, bytes()));
  }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// The byte an output is filled with before a kernel runs. 0xFF makes every float, half and bf16
// a NaN whose bit pattern the GPU never produces itself (its NaNs are 0x7FFF...), and every index
// -1, so an element still holding it was never written.
inline constexpr unsigned char kPoisonByte = 0xFF;
// The byte of the guard zones around a guarded buffer. A kernel that writes past either end of
// its output changes them; one that reads past either end of its input takes in a value that
// spoils its result: 0x7B makes a float or a bf16 about 1.3e36 and a half 61280, far above the
// test data, so a sum, a maximum, a row's statistics or a top-k that includes one goes wrong
// (a byte such as 0xA5, a float of -2.9e-16, would vanish into a sum unseen).
inline constexpr unsigned char kCanaryByte = 0x7B;

// `size()` elements with guard zones of kGuardBytes on both sides, optionally shifted by
// `misalign` elements from a 256-byte boundary so that kernels meet unaligned pointers.
template <typename T>
class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 4096;

  explicit GuardedBuffer(size_t count, size_t misalign = 0)
      : count_(count),
        front_bytes_(kGuardBytes + misalign * sizeof(T)),
        raw_(raw_bytes(count, misalign)) {
    CUDA_CHECK(cudaMemset(raw_.data(), kCanaryByte, raw_.size()));
  }

  T* data() { return reinterpret_cast<T*>(raw_.data() + front_bytes_); }
  const T* data() const { return reinterpret_cast<const T*>(raw_.data() + front_bytes_); }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    CHECK_ARG(host.size() == count_, "host has " << host.size() << " elements, buffer " << count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(data(), host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), data(), bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  // Fill the elements (not the guards) with `byte`.
  void fill_bytes(unsigned char byte) {
    if (count_ > 0) CUDA_CHECK(cudaMemset(data(), byte, bytes()));
  }
  // Fill the elements (not the guards) with kPoisonByte.
  void poison() { fill_bytes(kPoisonByte); }

  // True when no byte of either guard zone changed.
  bool guards_intact() const {
    std::vector<unsigned char> front(front_bytes_), back(kGuardBytes);
    CUDA_CHECK(cudaMemcpy(front.data(), raw_.data(), front.size(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back.data(), raw_.data() + front_bytes_ + bytes(), back.size(),
                          cudaMemcpyDeviceToHost));
    for (unsigned char b : front)
      if (b != kCanaryByte) return false;
    for (unsigned char b : back)
      if (b != kCanaryByte) return false;
    return true;
  }

 private:
  // Checked before anything is computed from it: a wrapped byte count would allocate a small
  // buffer that the kernel under test then overruns.
  static size_t raw_bytes(size_t count, size_t misalign) {
    constexpr size_t kMaxElements = (SIZE_MAX - 2 * kGuardBytes) / sizeof(T);
    CHECK_ARG(count <= kMaxElements && misalign <= kMaxElements - count,
              count << " elements shifted by " << misalign << " overflow a byte count");
    return (misalign + count) * sizeof(T) + 2 * kGuardBytes;
  }

  size_t count_;
  size_t front_bytes_;
  DeviceBuffer<unsigned char> raw_;
};

// True when `value` still holds the poison pattern, i.e. nothing wrote it.
template <typename T>
bool is_poison(const T& value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  for (unsigned char b : bytes)
    if (b != kPoisonByte) return false;
  return true;
}

// Index of the first element that still holds the poison pattern, or -1 when all were written.
template <typename T>
int64_t first_unwritten(const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (is_poison(values[i])) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace common
