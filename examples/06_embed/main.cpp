// 06_embed: gpurt inside an application that found it with find_package(gpurt). Runs the
// library's axpy on the default device and checks it against the CPU.
#include <cstdio>
#include <vector>

#include <gpurt/gpurt.hpp>
#include <gpurt/library.hpp>  // gpurt::lib: link gpurt::lib (CMake) or pkg-config gpurt-lib

int main() try {
  const gpurt::Device dev = gpurt::default_device();
  gpurt::Queue q = dev.create_queue();
  const std::size_t n = 100003;
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = float(i % 97), y[i] = float(i % 13);
  auto dx = dev.alloc<float>(n), dy = dev.alloc<float>(n);
  q.copy(x, dx);
  q.copy(y, dy);
  gpurt::lib::axpy(q, 2.0f, dx, dy);  // y = 2x + y
  const std::vector<float> r = q.read(dy);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[i] != 2.0f * x[i] + y[i];
  std::printf("%s: embedded gpurt %s on %s, %zu of %zu wrong\n", wrong ? "FAILED" : "OK", gpurt::version_string(),
              dev.description().c_str(), wrong, n);
  return wrong ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
