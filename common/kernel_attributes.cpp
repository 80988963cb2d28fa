#include "kernel_attributes.hpp"

#include "errors.hpp"

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace common {

namespace {

// One lock for both tables: the driver call is made under it, so that two threads cannot both
// find a kernel missing and ask, and each table holds what the driver was last told or answered.
std::mutex& tables_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

void set_kernel_attribute(const void* kernel, cudaFuncAttribute attribute, int value) {
  static std::map<std::pair<const void*, cudaFuncAttribute>, int> set_to;
  const std::lock_guard<std::mutex> lock(tables_mutex());
  const auto key = std::make_pair(kernel, attribute);
  const auto found = set_to.find(key);
  if (found != set_to.end() && found->second == value) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, attribute, value));
  set_to[key] = value;
}

int max_blocks_per_sm(const void* kernel, int threads, size_t shared_bytes) {
  static std::map<std::tuple<const void*, int, size_t>, int> answers;
  const std::lock_guard<std::mutex> lock(tables_mutex());
  const auto key = std::make_tuple(kernel, threads, shared_bytes);
  if (const auto found = answers.find(key); found != answers.end()) return found->second;
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared_bytes));
  answers.emplace(key, blocks);
  return blocks;
}

}  // namespace common
