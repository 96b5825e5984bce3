// gpurt/native.hpp: native handles out of gpurt objects and gpurt objects over native ones. The
// core checks the handle (empty, backend, size) and asks the plugin (ABI 4.1: native_handle,
// device_import, backend_import_device); the plugin checks that the native object belongs to the
// device.
#include "gpurt/native.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "api/format.hpp"
#include "model/state.hpp"
#include "loader/loader.hpp"

namespace gpurt {

const char* to_string(NativeKind kind) {
  switch (kind) {
    case NativeKind::platform: return "platform";
    case NativeKind::device: return "device";
    case NativeKind::context: return "context";
    case NativeKind::queue: return "queue";
    case NativeKind::buffer: return "buffer";
    case NativeKind::event: return "event";
    case NativeKind::program: return "program";
    case NativeKind::kernel: return "kernel";
  }
  return "unknown";
}

namespace detail {
namespace {

// Where the handles of another backend come from, for the hint.
std::string typed_header(const std::string& backend) {
  return "gpurt::native_handle (or the typed accessors gpurt::" + backend + "::* of <gpurt/" + backend +
         ".hpp>, where the backend has that header)";
}

// Throws invalid_argument unless `d` is of `backend` (null: any backend).
void check_backend(const DeviceState* d, const char* backend, const char* what, const char* call) {
  if (!backend || d->props.backend == backend) return;
  invalid(std::string(call) + " takes " + what + " of the " + backend + " backend, but this one belongs to " +
              d->description + " (backend " + d->props.backend + "); use " + typed_header(d->props.backend) +
              " for it, or make the object on a " + backend + " device",
          call, d);
}

NativeHandle handle_of(const DeviceState* d, NativeKind kind, const bridge::Status& s, const bridge::Native& n) {
  check(s, d);
  NativeHandle h;
  h.backend = d->props.backend;
  h.kind = kind;
  h.handle = n.handle;
  h.type_name = n.type_name;
  return h;
}

// The native handle of a Queue, Event, Program or Kernel: each state has `device` and `impl`.
template <class H>
NativeHandle native_of_object(const H& handle, NativeKind kind, const char* what, const char* backend,
                              const char* call) {
  auto* state = Access::state(handle, call);
  check_backend(state->device, backend, what, call);
  bridge::Native n;
  const bridge::Status s = state->impl->native(n);
  return handle_of(state->device, kind, s, n);
}

}  // namespace

NativeHandle native_of(const Device& device, NativeKind kind, const char* backend, const char* call) {
  DeviceState* d = checked_device(device, call);
  check_backend(d, backend, "a device", call);
  gpurt_native_kind k = GPURT_NATIVE_DEVICE;
  switch (kind) {
    case NativeKind::platform: k = GPURT_NATIVE_PLATFORM; break;
    case NativeKind::device: k = GPURT_NATIVE_DEVICE; break;
    case NativeKind::context: k = GPURT_NATIVE_CONTEXT; break;
    default:
      invalid(std::string("a Device has native platform, device and context handles, not a ") + to_string(kind) +
                  " handle; ask the " + to_string(kind) + " object itself",
              call, d);
  }
  bridge::Native n;
  const bridge::Status s = d->impl->native(k, n);
  return handle_of(d, kind, s, n);
}

NativeHandle native_of(const Queue& queue, const char* backend, const char* call) {
  return native_of_object(queue, NativeKind::queue, "a queue", backend, call);
}

NativeHandle native_of_buffer(const Allocation* a, std::size_t offset_bytes, std::size_t size_bytes,
                              const char* backend, const char* call) {
  check_backend(a->device, backend, "a buffer", call);
  NativeHandle h;
  if (a->impl) {
    // Asked once per allocation (a failure throws out of call_once, which leaves it to be asked again).
    std::call_once(a->native_once, [a] {
      bridge::Native n;
      const bridge::Status s = a->impl->native(n);
      const NativeHandle first = handle_of(a->device, NativeKind::buffer, s, n);
      a->native_type = first.type_name;
      a->native_value = first.handle;
    });
    h.backend = a->device->props.backend;
    h.kind = NativeKind::buffer;
    h.handle = a->native_value;
    h.type_name = a->native_type;
  } else {
    // An empty buffer has no native allocation: handle 0, of the backend's type where it is known.
    h.backend = a->device->props.backend;
    h.kind = NativeKind::buffer;
  }
  h.offset_bytes = offset_bytes;
  h.size_bytes = size_bytes;
  return h;
}

NativeHandle native_of(const Event& event, const char* backend, const char* call) {
  return native_of_object(event, NativeKind::event, "an event", backend, call);
}

NativeHandle native_of(const Program& program, const char* backend, const char* call) {
  return native_of_object(program, NativeKind::program, "a program", backend, call);
}

NativeHandle native_of(const Kernel& kernel, const char* backend, const char* call) {
  return native_of_object(kernel, NativeKind::kernel, "a kernel", backend, call);
}

namespace {
void check_native(std::uint64_t native, const char* what, const char* call, const DeviceState* d) {
  if (native == 0)
    invalid(std::string("the native ") + what + " is null (0); pass the handle the vendor API returned", call, d);
}
}  // namespace

std::shared_ptr<Allocation> import_allocation(const Device& device, std::uint64_t native, std::size_t count,
                                              std::size_t elem_size, Ownership ownership, const char* backend,
                                              const char* call) {
  DeviceState* d = checked_device(device, call);
  check_backend(d, backend, "a device", call);
  if (count > static_cast<std::size_t>(-1) / elem_size)
    invalid(std::to_string(count) + " elements of " + std::to_string(elem_size) +
                " bytes do not fit in a size_t; pass the buffer's real element count",
            call, d);
  const std::size_t bytes = count * elem_size;
  auto a = std::make_shared<Allocation>();
  a->device = d;
  a->bytes = bytes;
  a->counted = false;
  if (bytes == 0) {
    // Nothing of the native buffer is used; with adopt it still has to be released: import it
    // (which checks it) and drop it at once.
    if (native != 0 && ownership == Ownership::adopt) {
      std::unique_ptr<bridge::Buffer> b;
      check(d->impl->import_buffer(native, 0, true, b), d);
    }
    return a;
  }
  check_native(native, "buffer", call, d);
  check(d->impl->import_buffer(native, bytes, ownership == Ownership::adopt, a->impl), d);
  return a;
}

Queue import_queue(const Device& device, std::uint64_t native, Ownership ownership, const char* backend,
                   const char* call) {
  DeviceState* d = checked_device(device, call);
  check_backend(d, backend, "a device", call);
  auto q = std::make_shared<QueueState>();
  q->device = d;
  bool timing = false;
  check(d->impl->import_queue(native, ownership == Ownership::adopt, timing, q->impl), d);
  q->timing = timing;
  q->id = next_queue_id();
  return Access::make<Queue>(std::move(q));
}

Event import_event(const Device& device, std::uint64_t native, Ownership ownership, const char* backend,
                   const char* call) {
  DeviceState* d = checked_device(device, call);
  check_backend(d, backend, "a device", call);
  check_native(native, "event", call, d);
  auto e = std::make_shared<EventState>();
  e->device = d;
  e->timing = false;
  e->imported = true;
  check(d->impl->import_event(native, ownership == Ownership::adopt, e->impl), d);
  return Access::make<Event>(std::move(e));
}

Device import_device(const std::string& backend, std::uint64_t context, std::uint64_t device, Ownership ownership,
                     const char* call) {
  BackendRecord* r = backend_record(backend);
  if (!r)
    invalid("there is no backend named '" + backend + "' (known: " + known_backend_list() + ")", call);
  if (!r->backend)
    throw Error(ErrorCategory::backend_unavailable,
                "the " + backend + " backend is not available (" + r->info.reason + "); gpurt::import_device needs it",
                [&] {
                  ErrorDetails det;
                  det.backend = backend;
                  det.call = call;
                  return det;
                }());
  if (context == 0)
    invalid("the native context is null (0); pass the context the vendor API returned", call);
  bridge::Device* impl = nullptr;
  const bridge::Status s = r->backend->import_device(context, device, ownership == Ownership::adopt, impl);
  if (!s.ok()) {
    ErrorDetails det;
    det.backend = backend;
    det.call = s.call.empty() ? call : s.call;
    det.native_code = s.native_code;
    det.native_name = s.native_name;
    throw Error(s.category, s.message + (s.hint.empty() ? "" : " " + s.hint), std::move(det));
  }
  auto d = std::make_unique<DeviceState>();
  d->backend = r;
  d->impl = impl;
  d->props = impl->properties();
  d->props.backend = backend;
  // The listed device it runs on gives the index and selector: the same native device.
  bridge::Native mine;
  const bool known = impl->native(GPURT_NATIVE_DEVICE, mine).ok();
  d->props.index = static_cast<std::size_t>(-1);
  for (const auto& listed : r->devices) {
    bridge::Native theirs;
    if (known && listed->impl->native(GPURT_NATIVE_DEVICE, theirs).ok() && theirs.handle == mine.handle) {
      d->props.index = listed->props.index;
      d->selector = listed->selector;
      d->memory = listed->memory;  // one physical memory: one count, one limit (device.hpp alloc)
      break;
    }
  }
  if (d->selector.empty()) d->selector = backend;
  d->description = d->selector + " (" + d->props.name + ", application context)";
  // Listed among the sharers of its memory, whose pools are released together when it runs short,
  // once it is kept for the process (the list holds plain pointers).
  DeviceState* owner = d->memory;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  {
    std::lock_guard<std::mutex> sharing(owner->sharers_mutex);
    owner->sharers.reserve(owner->sharers.size() + 1);
  }
  r->imported.push_back(std::move(d));
  DeviceState* kept = r->imported.back().get();
  if (owner != kept) {
    std::lock_guard<std::mutex> sharing(owner->sharers_mutex);
    owner->sharers.push_back(kept);  // reserved above (only this function appends, under `mutex`)
  }
  return Access::make<Device>(kept);
}

}  // namespace detail

bool peer_access(const Device& a, const Device& b) {
  detail::DeviceState* x = detail::checked_device(a, "gpurt::peer_access");
  detail::DeviceState* y = detail::checked_device(b, "gpurt::peer_access");
  if (x == y) return true;
  if (x->backend != y->backend) return false;
  bool possible = false;
  (void)x->impl->peer_access(*y->impl, possible);
  return possible;
}

}  // namespace gpurt
