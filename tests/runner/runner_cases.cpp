// Hidden cases ("[.]": never listed, so never CTest entries of their own) that
// check_batched_runner.py runs under ctest and under scripts/run-tests-batched.py, to show the two
// give the same verdicts: a pass, a failure, a skip, a crash, a hang, and cases after each.
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "harness.hpp"

TEST_CASE("runner: passes", "[.]") { CHECK(1 + 1 == 2); }

TEST_CASE("runner: fails", "[.]") { CHECK(1 + 1 == 3); }

TEST_CASE("runner: skips", "[.]") { GPURT_SKIP("skipped on purpose"); }

TEST_CASE("runner: fails 77 assertions", "[.]") {  // Catch2's exit status 77 is not the skip code
  for (int i = 0; i < 77; ++i) CHECK(i < 0);
}

TEST_CASE("runner: throws", "[.]") { throw std::runtime_error("thrown on purpose"); }

TEST_CASE("runner: crashes", "[.]") { std::abort(); }

TEST_CASE("runner: hangs", "[.]") { std::this_thread::sleep_for(std::chrono::seconds(120)); }

TEST_CASE("runner: exits 0 in the middle", "[.]") { std::exit(0); }

TEST_CASE("runner: a name with a comma, [brackets] and a \\ backslash", "[.]") { CHECK(true); }

TEST_CASE("runner: passes after the others", "[.]") { CHECK(2 + 2 == 4); }
