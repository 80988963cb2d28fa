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

TEST_CASE("spans of different sizes: overlaps_any and any_two_overlap", "[overlap]") {
  alignas(16) static unsigned char memory[64];
  unsigned char* a = memory;
  REQUIRE(common::spans_overlap({a, 40}, {a + 39, 1}));         // one byte shared
  REQUIRE(common::spans_overlap({a + 39, 1}, {a, 40}));         // either order
  REQUIRE_FALSE(common::spans_overlap({a, 40}, {a + 40, 24}));  // adjacent
  REQUIRE_FALSE(common::spans_overlap({a + 40, 24}, {a, 40}));
  REQUIRE(common::spans_overlap({a + 8, 4}, {a, 64}));           // one inside the other
  REQUIRE_FALSE(common::spans_overlap({nullptr, 64}, {a, 64}));  // absent buffers share nothing
  REQUIRE_FALSE(common::spans_overlap({a, 0}, {a, 64}));         // nor do empty ones
  // A span whose end would wrap past the top of the address space still covers what follows it.
  REQUIRE(common::spans_overlap({a + 8, SIZE_MAX}, {a + 16, 8}));
  REQUIRE_FALSE(common::spans_overlap({a + 8, SIZE_MAX}, {a, 8}));
  REQUIRE(common::overlaps_any({a + 30, 4}, {{a, 8}, {a + 32, 8}}));
  REQUIRE_FALSE(common::overlaps_any({a + 30, 2}, {{a, 8}, {a + 32, 8}}));
  REQUIRE(common::any_two_overlap({{a, 8}, {a + 16, 8}, {a + 20, 1}}));
  REQUIRE_FALSE(common::any_two_overlap({{a, 8}, {a + 16, 8}, {a + 8, 8}}));
}

TEST_CASE("elements_aligned, and offset_bytes that moves a pointer between elements", "[overlap]") {
  alignas(8) float storage[4] = {};
  const float* x = storage;
  REQUIRE(common::elements_aligned(x, storage + 1));
  REQUIRE(common::elements_aligned(static_cast<const float*>(nullptr)));
  const float* odd = common::offset_bytes(x, 2);
  REQUIRE(reinterpret_cast<uintptr_t>(odd) - reinterpret_cast<uintptr_t>(x) == 2);
  REQUIRE_FALSE(common::elements_aligned(odd));
  REQUIRE_FALSE(common::elements_aligned(x, common::offset_bytes(storage, 1)));
  REQUIRE(common::offset_bytes(x, 4) == x + 1);
}
