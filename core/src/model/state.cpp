// The model's functions that every layer above calls: errors raised from a backend's status or a
// bad argument, handle checks, queue ids and the objects a queue keeps until its next finish.
#include "model/state.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/device.hpp"
#include "gpurt/error.hpp"
#include "base/log.hpp"

namespace gpurt::detail {

void raise(const bridge::Status& s, const DeviceState* device) {
  ErrorDetails d;
  if (device) {
    d.backend = device->props.backend;
    d.device = device->description;
  }
  d.native_code = s.native_code;
  d.native_name = s.native_name;
  d.call = s.call;
  d.build_log = s.build_log;
  d.build_options = s.build_options;
  throw Error(s.category, s.message.empty() ? std::string("the backend reported a failure") : s.message,
              std::move(d));
}

void invalid(const std::string& message, const char* call, const DeviceState* device) {
  ErrorDetails d;
  d.call = call ? call : "";
  if (device) {
    d.backend = device->props.backend;
    d.device = device->description;
  }
  throw Error(ErrorCategory::invalid_argument, message, std::move(d));
}

DeviceState* checked_device(const Device& dev, const char* call) {
  if (!detail::Access::state(dev))
    invalid("this Device is empty (default-constructed); obtain one from gpurt::devices(), "
            "gpurt::default_device() or gpurt::device(selector)",
            call);
  return detail::Access::state(dev);
}

std::uint64_t next_queue_id() {
  static std::atomic<std::uint64_t> last_id{0};
  return ++last_id;
}

std::shared_ptr<QueueState> make_queue(DeviceState* device, bool timing) {
  auto q = std::make_shared<QueueState>();
  q->device = device;
  q->id = next_queue_id();
  q->timing = timing;
  bridge::QueueOptions options;
  options.timing = timing;
  check(device->impl->create_queue(options, q->impl), device);
  return q;
}

void throw_empty_handle(const char* what, const char* call) {
  invalid(std::string("this ") + what +
              " is empty (default-constructed or moved-from); create it from a Device first",
          call);
}

// The range a call is given must lie inside its allocation. Views are checked when they are made;
// this second check costs two compares and keeps a forged or corrupted handle from reaching the
// driver with an out-of-range pointer.
void check_range(const Allocation* a, std::size_t offset, std::size_t bytes, const char* call) {
  if (offset > a->bytes || bytes > a->bytes - offset)
    invalid("the range [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") bytes is outside its " +
                std::to_string(a->bytes) + "-byte allocation; take views with Buffer::view",
            call, a->device);
}

void QueueState::retain(std::shared_ptr<const void> object) {
  std::lock_guard<std::mutex> lock(kept_mutex);
  retained.emplace_back(next_retained, std::move(object));
  ++next_retained;
}

std::uint64_t QueueState::retained_mark() {
  std::lock_guard<std::mutex> lock(kept_mutex);
  ++finishes_begun;
  return next_retained;
}

void QueueState::release_retained(std::uint64_t mark) noexcept {
  // `retained` is in the order handed over (only appended to, only its front removed), so the
  // objects before the mark are its first `count`. They are moved out under the lock into memory
  // reserved outside it, and released after it (their destructors may call into gpurt); another
  // thread's finish may take some meanwhile, hence the loop.
  std::vector<std::pair<std::uint64_t, std::shared_ptr<const void>>> done;
  for (;;) {
    std::size_t count = 0;
    {
      std::lock_guard<std::mutex> lock(kept_mutex);
      const auto end = std::find_if(retained.begin(), retained.end(), [mark](const auto& e) { return e.first >= mark; });
      count = static_cast<std::size_t>(end - retained.begin());
      if (count <= done.capacity()) {
        std::move(retained.begin(), end, std::back_inserter(done));
        retained.erase(retained.begin(), end);
        return;  // `done` goes after the lock
      }
    }
    try {
      done.reserve(count);
    } catch (...) {
      return;  // no host memory to move them out: they stay for a later finish, or the queue's end
    }
  }
}

void KeptFailures::keep(std::exception_ptr failure) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex);
    list.push_back(std::move(failure));
  } catch (...) {
    try {
      log(LogLevel::error, "host work", "host work failed, and there was no memory to keep the failure for the "
                                        "next finish or wait: " + describe(failure));
    } catch (...) {
      // nor for the line
    }
  }
}

void KeptFailures::rethrow_oldest() {
  std::exception_ptr failure;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (list.empty()) return;
    failure = std::move(list.front());
    list.pop_front();
  }
  std::rethrow_exception(failure);
}

void KeptFailures::log_each(const std::string& owner) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::exception_ptr& f : list)
    log(LogLevel::error, "host work",
        owner + " went before a finish or wait reported what its host work threw: " + describe(f));
}

std::string describe(const std::exception_ptr& failure) noexcept {
  try {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "an exception of a type not derived from std::exception";
    }
  } catch (...) {
    return {};  // no memory to say more
  }
}

}  // namespace gpurt::detail
