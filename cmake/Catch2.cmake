# Catch2: v3 when installed, else v2.13 (Debian's package), else v3 fetched at a pinned release.
# Tests include common/catch_compat.hpp, which hides the differences between the two.
find_package(Catch2 3 QUIET CONFIG)
if(Catch2_FOUND)
  set(CATCH2_MAJOR 3)
else()
  find_package(Catch2 2.13 QUIET CONFIG)
  if(Catch2_FOUND)
    set(CATCH2_MAJOR 2)
  else()
    include(FetchContent)
    FetchContent_Declare(Catch2
      GIT_REPOSITORY https://github.com/catchorg/Catch2.git
      GIT_TAG v3.7.1
      GIT_SHALLOW TRUE)
    FetchContent_MakeAvailable(Catch2)
    list(APPEND CMAKE_MODULE_PATH ${catch2_SOURCE_DIR}/extras)
    set(CATCH2_MAJOR 3)
  endif()
endif()
message(STATUS "Catch2 ${Catch2_VERSION} (API v${CATCH2_MAJOR})")
include(Catch)
