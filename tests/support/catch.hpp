// Catch2 2.x (Debian 12) and 3.x (Ubuntu 24.04) behind one include.
#pragma once

#if GPURT_CATCH2_MAJOR >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
