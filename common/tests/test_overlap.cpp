#include "common/catch_compat.hpp"
#include "common/overlap.hpp"

using common::buffers_overlap;

TEST_CASE("buffers_overlap: any shared byte, and nothing else", "[overlap]") {
  alignas(16) static unsigned char memory[64];
  unsigned char* a = memory;
  REQUIRE(buffers_overlap(a, a, 16));       // the same buffer
  REQUIRE(buffers_overlap(a, a + 15, 16));  // one byte shared, either order
  REQUIRE(buffers_overlap(a + 15, a, 16));
  REQUIRE_FALSE(buffers_overlap(a, a + 16, 16));  // adjacent, either order
  REQUIRE_FALSE(buffers_overlap(a + 16, a, 16));
  REQUIRE_FALSE(buffers_overlap(a, a + 40, 16));  // apart
  REQUIRE_FALSE(buffers_overlap(a, a, 0));        // empty buffers share nothing
}
