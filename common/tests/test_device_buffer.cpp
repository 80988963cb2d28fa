// What the buffers decide on the host, before any CUDA call: these run without a GPU.
#include "common/catch_compat.hpp"
#include "common/device_buffer.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

TEST_CASE("buffers refuse an element count whose byte count overflows", "[device_buffer]") {
  REQUIRE_THROWS_AS(common::DeviceBuffer<float>(SIZE_MAX / 2), std::invalid_argument);
  REQUIRE_THROWS_AS(common::GuardedBuffer<float>(SIZE_MAX / 4), std::invalid_argument);
  // Each part fits a byte count, but not with the other and the two guard zones.
  REQUIRE_THROWS_AS(common::GuardedBuffer<double>(SIZE_MAX / 16, SIZE_MAX / 16),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(
      common::GuardedBuffer<char>(SIZE_MAX - common::GuardedBuffer<char>::kGuardBytes),
      std::invalid_argument);
}

TEST_CASE("poison marks every byte, and first_unwritten finds the first such element",
          "[device_buffer]") {
  float poisoned;
  std::memset(&poisoned, common::kPoisonByte, sizeof(poisoned));
  REQUIRE(common::is_poison(poisoned));
  REQUIRE_FALSE(common::is_poison(0.0f));
  // The GPU's own NaN is not the poison pattern: a kernel that writes NaN wrote something.
  uint32_t gpu_nan_bits = 0x7FFFFFFFu;
  float gpu_nan;
  std::memcpy(&gpu_nan, &gpu_nan_bits, sizeof(gpu_nan));
  REQUIRE_FALSE(common::is_poison(gpu_nan));

  std::vector<int64_t> indices = {0, 5, -2, -1, 7};  // -1 is all 0xFF bytes
  REQUIRE(common::first_unwritten(indices) == 3);
  indices[3] = 4;
  REQUIRE(common::first_unwritten(indices) == -1);
  REQUIRE(common::first_unwritten(std::vector<float>{}) == -1);
}
