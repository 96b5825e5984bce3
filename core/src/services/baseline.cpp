// gpurt::RawBaseline: the plugin's native measurements, with failures as gpurt::Error.
#include "gpurt/baseline.hpp"

#include "api/state.hpp"

namespace gpurt {

namespace detail {
struct BaselineState {
  DeviceState* device = nullptr;
  struct Unused {
    std::string api() const { return {}; }
    template <class... A> bridge::Status launch_async(A&&...) { return {}; }
    template <class... A> bridge::Status launch_sync(A&&...) { return {}; }
    template <class... A> bridge::Status enqueue_four_args(A&&...) { return {}; }
    template <class... A> bridge::Status copy(A&&...) { return {}; }
    template <class... A> bridge::Status build_tiny(A&&...) { return {}; }
    template <class... A> bridge::Status gemm(A&&...) { return {}; }
  };
  std::unique_ptr<Unused> impl;  // TEMPORARY until the bench moves out (b18)
};
}  // namespace detail

RawBaseline::RawBaseline(const Device& device) : state_(std::make_unique<detail::BaselineState>()) {
  state_->device = detail::checked_device(device, "RawBaseline");
  throw Error(ErrorCategory::unsupported, "raw baselines are moving to the bench tool");
}
RawBaseline::~RawBaseline() = default;
RawBaseline::RawBaseline(RawBaseline&&) noexcept = default;
RawBaseline& RawBaseline::operator=(RawBaseline&&) noexcept = default;

namespace {
detail::BaselineState& live(const std::unique_ptr<detail::BaselineState>& s, const char* call) {
  if (!s || !s->impl) detail::throw_empty_handle("RawBaseline", call);
  return *s;
}
}  // namespace

std::string RawBaseline::api() const { return live(state_, "RawBaseline::api").impl->api(); }

double RawBaseline::launch_async_us(std::size_t launches) {
  auto& s = live(state_, "RawBaseline::launch_async_us");
  double us = 0;
  detail::check(s.impl->launch_async(launches, us), s.device);
  return us;
}

double RawBaseline::launch_sync_us(std::size_t reps) {
  auto& s = live(state_, "RawBaseline::launch_sync_us");
  double us = 0;
  detail::check(s.impl->launch_sync(reps, us), s.device);
  return us;
}

double RawBaseline::enqueue_four_args_us(std::size_t launches) {
  auto& s = live(state_, "RawBaseline::enqueue_four_args_us");
  double us = 0;
  detail::check(s.impl->enqueue_four_args(launches, us), s.device);
  return us;
}

double RawBaseline::copy_seconds(CopyDirection dir, HostMemory mem, std::size_t bytes, std::size_t reps) {
  auto& s = live(state_, "RawBaseline::copy_seconds");
  double secs = 0;
  detail::check(s.impl->copy(static_cast<int>(dir), mem == HostMemory::pinned, bytes, reps, secs), s.device);
  return secs;
}

double RawBaseline::build_tiny_ms() {
  auto& s = live(state_, "RawBaseline::build_tiny_ms");
  double ms = 0;
  detail::check(s.impl->build_tiny(ms), s.device);
  return ms;
}

double RawBaseline::gemm_gflops(GemmPrecision precision, std::size_t n, std::size_t reps) {
  auto& s = live(state_, "RawBaseline::gemm_gflops");
  double g = 0;
  detail::check(s.impl->gemm(static_cast<int>(precision), n, reps, g), s.device);
  return g;
}

}  // namespace gpurt
