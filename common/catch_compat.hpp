// Tests include this instead of Catch2 itself: the same macros under Catch2 v3 and v2.13.
// CATCH2_MAJOR comes from the build (cmake/Catch2.cmake).
#pragma once

#include <stdexcept>
#include <string>

#if CATCH2_MAJOR == 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif

// Fails the test with the checker's message unless the result is ok.
#define REQUIRE_CHECK(result)            \
  do {                                   \
    const auto& check_result_ = (result); \
    INFO(check_result_.message);         \
    REQUIRE(check_result_.ok);           \
  } while (0)

// Requires `expr` to throw std::invalid_argument whose message contains `text`: an argument test
// that accepts any invalid_argument would pass whichever check threw it first.
#define REQUIRE_INVALID_ARGUMENT(expr, text)                                            \
  do {                                                                                  \
    bool thrown_ = false;                                                               \
    std::string what_;                                                                  \
    try {                                                                               \
      static_cast<void>(expr);                                                          \
    } catch (const std::invalid_argument& e) {                                          \
      thrown_ = true;                                                                   \
      what_ = e.what();                                                                 \
    }                                                                                   \
    INFO("expected std::invalid_argument mentioning \"" << (text) << "\" from " #expr); \
    INFO("what(): " << what_);                                                          \
    REQUIRE(thrown_);                                                                   \
    REQUIRE(what_.find(text) != std::string::npos);                                     \
  } while (0)
