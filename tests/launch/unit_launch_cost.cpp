// What a launch costs on its way through the core, the bridge and the plugin helper, counted: this
// program replaces the global operator new (which libgpurt and the plugins use too, through the
// dynamic linker), counting the allocations the calling thread makes between two marks. A launch
// that succeeds must make none: no argument array on the heap, no Status text, no message string.
// A string of more than a few characters allocates, so a success path that built its message text
// ahead (or a Status with any) fails here. Runs on the mock backend (GPURT_ENABLE_MOCK=1), whose
// launch does its work on the calling thread.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "harness.hpp"
#include "mock_control.h"

namespace {

thread_local bool t_counting = false;
thread_local std::size_t t_allocations = 0;

void* counted_alloc(std::size_t n) {
  if (t_counting) ++t_allocations;
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace gpurt;

namespace {

// The allocations `fn` makes on this thread.
template <class F>
std::size_t allocations_of(F&& fn) {
  t_allocations = 0;
  t_counting = true;
  try {
    fn();
  } catch (...) {
    t_counting = false;
    throw;
  }
  t_counting = false;
  return t_allocations;
}

const char* source = R"(
GPURT_KERNEL void vector_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* c, uint64_t n) {}
GPURT_KERNEL void fill_u32(GPURT_GLOBAL uint32_t* out, uint32_t value, uint64_t n) {}
)";

struct Setup {
  Device dev = device("mock:0");
  Queue q = dev.create_queue();
  Kernel add = dev.build({SourceLanguage::portable, source, "launch_cost.gpurt"}).kernel("vector_add");
  Kernel fill = dev.build({SourceLanguage::portable, source, "launch_cost.gpurt"}).kernel("fill_u32");
  Buffer<float> a = dev.alloc<float>(256), b = dev.alloc<float>(256), c = dev.alloc<float>(256);
  Buffer<std::uint32_t> u = dev.alloc<std::uint32_t>(256);
  LaunchConfig config = LaunchConfig::cover(Dim3(256), Dim3(64));
};

}  // namespace

TEST_CASE("the counter sees what it must: a string of a message's length allocates") {
  std::string s;
  CHECK(allocations_of([&] { s = std::string(64, 'x'); }) >= 1);
}

TEST_CASE("architecture.md: a launch that passes its checks allocates nothing and builds no string") {
  Setup s;
  // Warm up: whatever is made once per kernel or queue is made here.
  s.q.launch(s.add, s.config, s.a, s.b, s.c, std::uint64_t{256});
  s.q.launch(s.fill, s.config, s.u, std::uint32_t{7}, std::uint64_t{256});
  s.q.finish();
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 1000; ++i) {
      s.q.launch(s.add, s.config, s.a, s.b, s.c, std::uint64_t{256});
      s.q.launch(s.fill, s.config, s.u.view(8, 64), std::uint32_t{7}, std::uint64_t{64});
    }
  });
  CHECK(n == 0);
  s.q.finish();
  CHECK(s.q.read(s.u)[8] == 7u);
}

TEST_CASE("architecture.md: a launch that fails a check builds its message then, and says what is wrong") {
  Setup s;
  s.q.launch(s.add, s.config, s.a, s.b, s.c, std::uint64_t{256});
  std::string message;
  const std::size_t n = allocations_of([&] {
    try {
      s.q.launch(s.add, s.config, s.a, s.b, s.c, 256.0f);  // a float for a uint64_t
    } catch (const Error& e) {
      message = e.what();
    }
  });
  CHECK(n > 0);
  CHECK(message.find("argument 3") != std::string::npos);
}

TEST_CASE("architecture.md: a launch the plugin fails builds its Status then, with the plugin's text") {
  Setup s;
  void* h = ::dlopen(GPURT_MOCK_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto fail = reinterpret_cast<gpurt_mock_fail_fn>(::dlsym(h, "gpurt_mock_fail"));
  REQUIRE(fail);
  s.q.launch(s.add, s.config, s.a, s.b, s.c, std::uint64_t{256});
  fail(GPURT_MOCK_OP_LAUNCH, 0, 1);
  std::string message;
  const std::size_t n = allocations_of([&] {
    try {
      s.q.launch(s.add, s.config, s.a, s.b, s.c, std::uint64_t{256});
    } catch (const Error& e) {
      message = e.what();
    }
  });
  CHECK(n > 0);
  CHECK(message.find("injected launch failure") != std::string::npos);
  s.q.launch(s.add, s.config, s.a, s.b, s.c, std::uint64_t{256});  // the next one succeeds
  s.q.finish();
}
