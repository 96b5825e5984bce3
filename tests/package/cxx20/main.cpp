// A C++20 application using gpurt: it must still be compiled as C++20 (gpurt requires C++17 *or
// newer*; neither gpurt.pc nor gpurt::gpurt may pin the standard to 17). Runs the library's axpy on
// fresh random inputs of a prime size (whole numbers, so the result is exact with or without FMA)
// and checks every element against the CPU.
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include <gpurt/gpurt.hpp>
#include <gpurt/library.hpp>  // gpurt::lib: link gpurt::lib (CMake) or pkg-config gpurt-lib

static_assert(__cplusplus >= 202002L, "this consumer asked for C++20 and must be compiled as C++20");

int main() try {
  const gpurt::Device dev = gpurt::default_device();
  gpurt::Queue q = dev.create_queue();
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> dist(-100000, 100000);  // exact in float, so is 0.5x + y
  const std::size_t n = 10007;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = float(dist(rng));
  for (float& v : y) v = float(dist(rng));
  auto dx = dev.alloc<float>(n), dy = dev.alloc<float>(n);
  q.copy(x, dx);
  q.copy(y, dy);
  gpurt::lib::axpy(q, 0.5f, dx, dy);
  const std::vector<float> r = q.read(dy);
  const std::span<const float> got(r);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += got[i] != 0.5f * x[i] + y[i];
  std::printf("%s: C++%ld consumer of gpurt %s on %s, %zu of %zu wrong\n", wrong ? "FAILED" : "OK",
              long(__cplusplus / 100 % 100), gpurt::version_string(), dev.description().c_str(), wrong, n);
  return wrong ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
