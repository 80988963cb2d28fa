// Where buffers sit, as the entry points check it before they launch anything: whether two share
// memory (an output may alias an input in place; partial overlap is refused), and whether
// pointers are aligned to their elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace common {

// A buffer of `bytes` bytes at `at`; a null or empty one shares memory with nothing.
struct Span {
  const void* at;
  size_t bytes;
};
// Whether two spans share a byte. Compared as integers (ordering pointers into different
// allocations is unspecified in C++), by differences of addresses only, so no end can wrap around.
inline bool spans_overlap(Span a, Span b) {
  if (a.at == nullptr || b.at == nullptr || a.bytes == 0 || b.bytes == 0) return false;
  const auto begin_a = reinterpret_cast<uintptr_t>(a.at),
             begin_b = reinterpret_cast<uintptr_t>(b.at);
  return begin_a <= begin_b ? begin_b - begin_a < a.bytes : begin_a - begin_b < b.bytes;
}
// Whether the `bytes` bytes at a and the `bytes` bytes at b share any byte.
inline bool buffers_overlap(const void* a, const void* b, size_t bytes) {
  return spans_overlap({a, bytes}, {b, bytes});
}
// Whether `span` shares a byte with any of `others`.
inline bool overlaps_any(Span span, std::initializer_list<Span> others) {
  for (const Span& other : others)
    if (spans_overlap(span, other)) return true;
  return false;
}
// Whether any two of `spans` share a byte.
inline bool any_two_overlap(std::initializer_list<Span> spans) {
  for (const Span* a = spans.begin(); a != spans.end(); ++a)
    for (const Span* b = a + 1; b != spans.end(); ++b)
      if (spans_overlap(*a, *b)) return true;
  return false;
}

// Whether a matrix of rows x cols elements of T (rows >= 0, cols >= 1) has a byte count that fits
// int64_t, so that no element count, byte count or offset into it can overflow.
template <typename T>
bool matrix_bytes_fit(int64_t rows, int64_t cols) {
  return rows <= INT64_MAX / static_cast<int64_t>(sizeof(T)) / cols;
}

// Whether every pointer sits at an address its element type allows (nullptr does).
template <typename... Elements>
bool elements_aligned(const Elements*... pointers) {
  return ((reinterpret_cast<uintptr_t>(pointers) % alignof(Elements) == 0) && ...);
}

// p moved by `bytes` bytes, not elements: a pointer between two elements, as the tests of the
// alignment checks pass them (never dereferenced).
template <typename T>
T* offset_bytes(T* p, size_t bytes) {
  using Byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
  return reinterpret_cast<T*>(reinterpret_cast<Byte*>(p) + bytes);
}

}  // namespace common
