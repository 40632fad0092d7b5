# GoogleTest for Kyoyu's tests. Provides:
#   KY_GTEST_FOUND  ON when GoogleTest is available
#   ky_gtest        INTERFACE target: GTest::gtest + Threads + MPI::MPI_CXX (tests bring their own main,
#                   tests/mpi_main.cpp, which initialises Kyoyu and MPI)
#   ky_gtest_main   INTERFACE target: ky_gtest + GTest::gtest_main (single-process tests)
# Found as an installed package (Debian libgtest-dev ships the CMake config), else built from the
# Debian source copy in KY_GTEST_SOURCE (/usr/src/googletest; point it at a copy where none is installed).
include_guard(GLOBAL)
set(KY_GTEST_SOURCE "/usr/src/googletest" CACHE PATH "GoogleTest sources, used when no installed package is found")

set(KY_GTEST_FOUND OFF)
find_package(GTest QUIET)
if(NOT TARGET GTest::gtest AND EXISTS "${KY_GTEST_SOURCE}/CMakeLists.txt")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    add_subdirectory("${KY_GTEST_SOURCE}" "${CMAKE_BINARY_DIR}/_googletest" EXCLUDE_FROM_ALL)
    if(TARGET gtest AND NOT TARGET GTest::gtest)
        add_library(GTest::gtest ALIAS gtest)
        add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
endif()

if(TARGET GTest::gtest)
    set(KY_GTEST_FOUND ON)
    add_library(ky_gtest INTERFACE)
    target_link_libraries(ky_gtest INTERFACE GTest::gtest Threads::Threads MPI::MPI_CXX)
    add_library(ky_gtest_main INTERFACE)
    target_link_libraries(ky_gtest_main INTERFACE ky_gtest GTest::gtest_main)
    message(STATUS "Kyoyu: GoogleTest found")
else()
    message(WARNING "Kyoyu: GoogleTest not found (apt-get install libgtest-dev); tests/ is skipped")
endif()
