// What the raw baselines share: a clock, failures as gpurt::Error, and one move-only owner for
// native handles released through a loaded function pointer. No vendor header here.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/error.hpp"

namespace gpurt::bench::raw {

using clock_type = std::chrono::steady_clock;
inline double since_us(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

// Throws gpurt::Error(category) for the failing native `call` of `backend`.
[[noreturn]] void fail(ErrorCategory category, const std::string& backend, const std::string& message,
                       const std::string& call, std::int64_t code = 0, const std::string& code_name = {});

// dlopen()s the first of `names` that loads (RTLD_NOW | RTLD_LOCAL; never closed). Throws
// backend_unavailable naming `what`, every name tried and dlerror()'s text for each.
void* open_library(const std::vector<std::string>& names, const std::string& backend, const std::string& what);
// The address of `name` in `library` (opened as `what`); throws backend_unavailable without it.
void* symbol(void* library, const char* name, const std::string& backend, const std::string& what);

// Owns one native handle; `release` (a function loaded from the vendor library) runs once, in
// the destructor or reset(). A failed release is ignored: the measurement is already taken.
template <class T, class R>
class Owned {
 public:
  using Release = R (*)(T);
  Owned() = default;
  Owned(T handle, Release release) noexcept : h_(handle), release_(release) {}
  ~Owned() { reset(); }
  Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, T{})), release_(o.release_) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, T{});
      release_ = o.release_;
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  T get() const noexcept { return h_; }
  void reset() noexcept {
    if (h_ != T{} && release_) (void)release_(h_);
    h_ = T{};
  }

 private:
  T h_{};
  Release release_ = nullptr;
};

template <class T, class R>
Owned<T, R> own(T handle, R (*release)(T)) noexcept {
  return Owned<T, R>(handle, release);
}

}  // namespace gpurt::bench::raw
