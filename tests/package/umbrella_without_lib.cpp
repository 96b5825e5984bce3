// Includes gpurt.hpp only and uses gpurt::lib: must not compile, since the kernel library's header
// <gpurt/library.hpp> is not part of the umbrella header (tests/package/CMakeLists.txt).
#include <gpurt/gpurt.hpp>

int main() {
  gpurt::Queue q;
  return static_cast<int>(gpurt::lib::ReduceOp::sum) + (q.valid() ? 1 : 0);
}
