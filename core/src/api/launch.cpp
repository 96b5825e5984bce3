// Queue::launch: every check a launch needs, done before anything is enqueued, then one hook.
#include <cstddef>
#include <cstdint>
#include <shared_mutex>
#include <string>

#include "api/format.hpp"
#include "api/launch.hpp"
#include "gpurt/plugin/signature.hpp"
#include "gpurt/queue.hpp"
#include "model/state.hpp"
#include "services/trace.hpp"

namespace gpurt {

namespace {

const char* const dim_name[3] = {"x", "y", "z"};

void check_shape(const detail::DeviceState* d, const bridge::KernelInfo& info,
                 const LaunchConfig& c, const char* call) {
  const DeviceProperties& p = d->props;
  for (int i = 0; i < 3; ++i) {
    if (c.groups[i] == 0)
      detail::invalid("zero volume: groups = " + to_string(c.groups) + " has a zero " +
                          dim_name[i] + " dimension; a launch needs at least one group in each "
                          "dimension (skip the launch when there is no work)",
                      call, d);
    if (c.group_size[i] == 0)
      detail::invalid("zero volume: group_size = " + to_string(c.group_size) + " has a zero " +
                          dim_name[i] + " dimension; use 1 for unused dimensions",
                      call, d);
  }
  for (int i = 0; i < 3; ++i) {
    if (c.group_size[i] > p.max_group_dims[i])
      detail::invalid("group size " + to_string(c.group_size) + " is too large in " + dim_name[i] +
                          ": the device allows at most " + std::to_string(p.max_group_dims[i]) +
                          " (limits " + to_string(p.max_group_dims) + ")",
                      call, d);
    if (c.groups[i] > p.max_groups[i])
      detail::invalid(std::to_string(c.groups[i]) + " groups in " + dim_name[i] +
                          " exceed the device's limit of " + std::to_string(p.max_groups[i]) +
                          " (limits " + to_string(p.max_groups) + "); use larger groups or "
                          "another dimension",
                      call, d);
  }
  const std::size_t volume = c.group_size.volume();
  if (volume > p.max_group_size)
    detail::invalid("oversize group: " + to_string(c.group_size) + " is " + std::to_string(volume) +
                        " work-items but the device allows at most " +
                        std::to_string(p.max_group_size) + " per group",
                    call, d);
  if (info.max_group_size != 0 && volume > info.max_group_size)
    detail::invalid("oversize group: " + to_string(c.group_size) + " is " + std::to_string(volume) +
                        " work-items but kernel '" + info.name + "' allows at most " +
                        std::to_string(info.max_group_size) +
                        " on this device (its registers or local memory limit it); use "
                        "Kernel::max_group_size()",
                    call, d);
}

// a + b, or SIZE_MAX when the sum does not fit (so that a limit check on it still fails).
std::size_t saturating_add(std::size_t a, std::size_t b) {
  std::size_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

void check_local(const detail::DeviceState* d, const bridge::KernelInfo& info, std::size_t dynamic,
                 std::size_t from_args, const char* call) {
  const std::size_t total = saturating_add(saturating_add(dynamic, from_args), info.static_local_bytes);
  if (total > d->props.max_local_memory)
    detail::invalid("too much local memory: the launch asks for " + detail::format_bytes(total) +
                        " per group (" + std::to_string(dynamic) + " dynamic, " +
                        std::to_string(from_args) + " in Local arguments, " +
                        std::to_string(info.static_local_bytes) + " declared in the kernel) but "
                        "the device offers " + detail::format_bytes(d->props.max_local_memory),
                    call, d);
}

std::string param_text(const bridge::KernelInfo& info, std::size_t i) {
  std::string s = "parameter " + std::to_string(i);
  if (i < info.params.size() && !info.params[i].type_name.empty())
    s += " (" + info.params[i].type_name + ")";
  return s + " of kernel '" + info.name + "'";
}

std::string arg_text(std::size_t i) { return "argument " + std::to_string(i); }

// Whether the top bit of a scalar argument's integer is set (little-endian hosts): the one bit whose
// meaning changes with signedness.
bool top_bit(const gpurt_kernel_arg& a) {
  return a.size > 0 && (static_cast<const unsigned char*>(a.value)[a.size - 1] & 0x80) != 0;
}

// A scalar argument against the parameter's declared type (kind, width, and signedness where it
// changes the value). Parameters of unknown or aggregate type are checked by size only.
void check_scalar_type(std::size_t i, const gpurt_kernel_arg& a, const detail::ValueType& got,
                       const plugin::ParamType& t, const bridge::KernelInfo& info, const detail::DeviceState* d,
                       const char* call) {
  using detail::ValueKind;
  if (!t.known || t.pointer || got.kind == ValueKind::unknown) return;
  const detail::ValueType& want = t.value;
  if (want.kind == ValueKind::other || want.kind == ValueKind::unknown || got.kind == ValueKind::other) return;
  auto refuse = [&](const char* why) {  // builds its strings only on failure: no cost per launch
    const std::string expected = plugin::describe_value(want);
    detail::invalid(arg_text(i) + " is a " + plugin::describe_value(got) + " but " + param_text(info, i) +
                        " is a " + expected + why + "; pass a " + expected,
                    call, d);
  };
  const bool want_16 = want.kind == ValueKind::floating && want.bytes == 2;
  if (want_16) {  // a gpurt::half or gpurt::bfloat16 of the same format, or its bits as a 16-bit integer
    if (got.bytes != 2 || got.kind == ValueKind::boolean ||
        (got.kind == ValueKind::floating && got.is_bfloat16 != want.is_bfloat16))
      refuse("");
    return;
  }
  if (want.kind == ValueKind::boolean) {
    if (got.kind == ValueKind::floating || got.bytes != want.bytes) refuse("");
    return;
  }
  if (want.kind != got.kind && !(want.kind == ValueKind::integer && got.kind == ValueKind::boolean))
    refuse(want.kind == ValueKind::floating ? " (the kernel would read the integer's bits as a float)"
                                            : " (the kernel would read the float's bits as an integer)");
  if (want.bytes != got.bytes || want.lanes != got.lanes) refuse("");
  if (want.kind == ValueKind::integer && got.kind == ValueKind::integer && want.is_signed != got.is_signed) {
    // Same width, other signedness: fine while the value means the same to the kernel.
    if (top_bit(a))
      refuse(got.is_signed ? " and the value is negative (the kernel would see a large positive number)"
                           : " and the value is too large for it (the kernel would see a negative number)");
  }
}

// A buffer argument's element type against the pointee of the parameter's declared type.
void check_buffer_type(std::size_t i, const detail::ValueType& got, const plugin::ParamType& t,
                       const bridge::KernelInfo& info, const detail::DeviceState* d, const char* call) {
  using detail::ValueKind;
  if (!t.known || !t.pointer || t.void_pointee) return;
  const detail::ValueType& want = t.value;
  if (want.kind == ValueKind::other || want.kind == ValueKind::unknown || got.kind == ValueKind::other ||
      got.kind == ValueKind::unknown)
    return;
  // errors.md: "void*, struct and vector pointees take any buffer" - a float4* walks a
  // Buffer<float> four at a time as often as a Buffer<gpurt::float4>, and bytes on purpose.
  if (want.lanes != 0) return;
  bool same = want.kind == got.kind && want.bytes == got.bytes && want.is_bfloat16 == got.is_bfloat16;
  if (same && want.kind == ValueKind::integer && want.is_signed != got.is_signed)
    same = want.bytes == 1 && (want.plain_char || got.plain_char);  // char vs signed/unsigned char
  if (want.kind == ValueKind::floating && want.bytes == 2 && got.kind == ValueKind::integer && got.bytes == 2)
    same = true;  // half or bfloat16 data held as 16-bit integers on the host
  if (!same) {
    const std::string expected = plugin::describe_value(want);
    detail::invalid(arg_text(i) + " is a Buffer<" + plugin::describe_value(got) + "> but " + param_text(info, i) +
                        " points to " + expected + "; pass a Buffer<" + expected +
                        ">, or reinterpret the bytes with buffer.as<" + expected + ">()",
                    call, d);
  }
}

}  // namespace

LaunchConfig LaunchConfig::groups_of(Dim3 groups, Dim3 group_size, std::size_t local_bytes) {
  for (int i = 0; i < 3; ++i) {
    std::size_t total = 0;
    if (__builtin_mul_overflow(groups[i], group_size[i], &total))
      detail::invalid(std::to_string(groups[i]) + " groups of " + std::to_string(group_size[i]) +
                          " work-items in " + dim_name[i] + " are more work-items than a size_t "
                          "counts (groups " + to_string(groups) + ", group size " +
                          to_string(group_size) + "); use fewer or smaller groups",
                      "LaunchConfig::groups_of");
  }
  return LaunchConfig(groups, group_size, local_bytes);
}

LaunchConfig LaunchConfig::global(Dim3 global_size, Dim3 group_size, std::size_t local_bytes) {
  constexpr const char* where = "LaunchConfig::global";
  for (int i = 0; i < 3; ++i) {
    if (group_size[i] == 0)
      detail::invalid("the group size " + to_string(group_size) + " has a zero " + dim_name[i] +
                          " dimension; use 1 for unused dimensions",
                      where);
    if (global_size[i] % group_size[i] != 0)
      detail::invalid("the global size " + to_string(global_size) + " is not a multiple of the "
                          "group size " + to_string(group_size) + " in " + dim_name[i] + " (" +
                          std::to_string(global_size[i]) + " % " + std::to_string(group_size[i]) +
                          " = " + std::to_string(global_size[i] % group_size[i]) +
                          "); choose a group size that divides it, or use LaunchConfig::cover, "
                          "which rounds the group count up (the kernel must then check its index)",
                      where);
  }
  return LaunchConfig({global_size.x / group_size.x, global_size.y / group_size.y,
                       global_size.z / group_size.z},
                      group_size, local_bytes);
}

LaunchConfig LaunchConfig::cover(Dim3 items, Dim3 group_size, std::size_t local_bytes) {
  for (int i = 0; i < 3; ++i)
    if (group_size[i] == 0)
      detail::invalid("LaunchConfig::cover needs a group size of at least 1 in every dimension, "
                      "got " + to_string(group_size),
                      "LaunchConfig::cover");
  auto up = [](std::size_t n, std::size_t g) { return n / g + (n % g != 0 ? 1 : 0); };
  return LaunchConfig({up(items.x, group_size.x), up(items.y, group_size.y), up(items.z, group_size.z)},
                      group_size, local_bytes);
}

LaunchConfig LaunchConfig::cover(const Kernel& kernel, std::size_t items, std::size_t local_bytes) {
  return cover(Dim3(items), Dim3(kernel.suggested_group_size()), local_bytes);
}

namespace {

void check_kernel_device(const detail::DeviceState* d, const detail::KernelState* k, const char* call) {
  if (k->device != d)
    detail::invalid("kernel '" + k->info.name + "' was built for " + k->device->description +
                        " but the queue is on " + d->description + "; build the program for the "
                        "queue's device",
                    call, d);
}

// The number of arguments against the kernel's parameters, and the dynamic-local-memory parameter
// against LaunchConfig::local_bytes. `dynamic_param`: the launch fills that parameter.
void check_count(const detail::DeviceState* d, const bridge::KernelInfo& info, const LaunchConfig& config,
                 bool dynamic_param, std::size_t count, const char* call) {
  if (!info.params_known) return;
  const std::size_t expected = info.params.size() - (dynamic_param ? 1 : 0);
  if (dynamic_param && (info.params.empty() ||
                        info.params.back().kind != bridge::ParamKind::local_pointer))
    detail::invalid("LaunchConfig::local_bytes is " + std::to_string(config.local_bytes) +
                        " but kernel '" + info.name + "' does not end with a __local pointer "
                        "parameter to receive it" +
                        (!info.params.empty() && info.params.back().kind == bridge::ParamKind::unknown
                             ? " (its last parameter's kind is unknown: the driver gave no "
                               "argument info and the source could not be read)"
                             : "") +
                        "; add one, or set local_bytes to 0",
                    call, d);
  if (info.dynamic_local_is_parameter && config.local_bytes == 0 && count + 1 == expected &&
      info.params.back().kind == bridge::ParamKind::local_pointer)
    detail::invalid("kernel '" + info.name + "' has dynamic local memory (GPURT_DYNAMIC_LOCAL, its last "
                        "parameter) but LaunchConfig::local_bytes is 0; "
                        "set local_bytes to the bytes it needs (the other " + std::to_string(count) +
                        " argument" + (count == 1 ? " was" : "s were") + " given)",
                    call, d);
  if (count != expected)
    detail::invalid("kernel '" + info.name + "' takes " + std::to_string(expected) +
                        " argument" + (expected == 1 ? "" : "s") +
                        (dynamic_param ? " (besides its dynamic local memory parameter)" : "") +
                        " but " + std::to_string(count) + " were given",
                    call, d);
}

// One argument, checked against parameter `p` (null when the parameters are unknown); each
// function below checks one kind. `i` is the argument's index.
struct ArgContext {
  const detail::DeviceState* d;
  const detail::KernelState* k;
  const bridge::ParamInfo* p;
  std::size_t i;
  const char* call;
};

// A buffer: not empty, on the queue's device, to a global pointer, within its allocation, of the
// element type the kernel reads, on the alignment the kernel takes views at. Sets its handle.
void check_buffer_arg(const ArgContext& c, gpurt_kernel_arg& n, const detail::ArgCheck& a) {
  const bridge::KernelInfo& info = c.k->info;
  const detail::DeviceState* d = c.d;
  const bridge::ParamInfo* p = c.p;
  const std::size_t i = c.i;
  const char* call = c.call;
  if (!a.allocation)
    detail::invalid("argument " + std::to_string(i) + ": this Buffer is empty (default-constructed or "
                        "moved-from); pass a buffer allocated with Device::alloc (dev.alloc<T>(0) makes a "
                        "valid, empty one)",
                    call, d);
  if (a.allocation->device != d)
    detail::invalid("argument " + std::to_string(i) + " is a buffer on " +
                        a.allocation->device->description + ", not on the queue's device " +
                        d->description + "; copy it to this device first",
                    call, d);
  if (p && p->kind != bridge::ParamKind::global_pointer && p->kind != bridge::ParamKind::unknown)
    detail::invalid("argument " + std::to_string(i) + " is a buffer but " + param_text(info, i) +
                        " is not a global pointer",
                    call, d);
  if (p && p->kind == bridge::ParamKind::unknown && p->size != 0 && p->size != sizeof(void*))
    detail::invalid("argument " + std::to_string(i) + " is a buffer (a " +
                        std::to_string(sizeof(void*)) + "-byte pointer) but " +
                        param_text(info, i) + " has " + std::to_string(p->size) + " bytes",
                    call, d);
  detail::check_range(a.allocation, n.offset, n.size, call);
  if (!c.k->types.empty()) check_buffer_type(i, a.type, c.k->types[i], info, d, call);
  if (n.offset % c.k->view_alignment != 0)
    detail::invalid("argument " + std::to_string(i) + " is a view starting at byte " +
                        std::to_string(n.offset) + ", but " + param_text(info, i) +
                        " takes a view as a sub-buffer (as OpenCL C kernels do), which on " +
                        d->selector + " must start on a multiple of " + std::to_string(c.k->view_alignment) +
                        " bytes. Pass the whole buffer and an index offset, or write the "
                        "kernel in the portable dialect (SourceLanguage::portable), whose "
                        "kernels take views at any element offset",
                    call, d);
  n.buffer = a.allocation->impl ? a.allocation->impl->handle() : nullptr;
}

// A scalar: not for a pointer, of the parameter's type and size.
void check_scalar_arg(const ArgContext& c, const gpurt_kernel_arg& n, const detail::ArgCheck& a) {
  const bridge::KernelInfo& info = c.k->info;
  const bridge::ParamInfo* p = c.p;
  const std::size_t i = c.i;
  if (p && (p->kind == bridge::ParamKind::global_pointer ||
            p->kind == bridge::ParamKind::local_pointer))
    detail::invalid("argument " + std::to_string(i) + " is a scalar of " +
                        std::to_string(n.size) + " bytes but " + param_text(info, i) +
                        " is a pointer; pass a Buffer" +
                        (p->kind == bridge::ParamKind::local_pointer ? " or gpurt::Local" : ""),
                    c.call, c.d);
  if (!c.k->types.empty()) check_scalar_type(i, n, a.type, c.k->types[i], info, c.d, c.call);
  if (p && p->size != 0 && p->size != n.size)
    detail::invalid("argument " + std::to_string(i) + " has " + std::to_string(n.size) +
                        " bytes but " + param_text(info, i) + " has " +
                        std::to_string(p->size) + "; pass a value of the parameter's type",
                    c.call, c.d);
}

// A Local: taken by the backend, for a __local pointer, of at least one byte.
void check_local_arg(const ArgContext& c, const gpurt_kernel_arg& n) {
  const bridge::KernelInfo& info = c.k->info;
  const detail::DeviceState* d = c.d;
  const bridge::ParamInfo* p = c.p;
  const std::size_t i = c.i;
  if (!info.local_arguments)
    throw Error(ErrorCategory::unsupported,
                "argument " + std::to_string(i) + " is a gpurt::Local, which the " +
                    d->props.backend + " backend does not take; pass dynamic local memory "
                    "through LaunchConfig::local_bytes",
                ErrorDetails{d->props.backend, 0, {}, c.call, d->description, {}, {}});
  // A Local given to a parameter of unknown kind is refused: drivers do not all check it,
  // and one that takes it for a pointer corrupts memory.
  if (p && p->kind != bridge::ParamKind::local_pointer)
    detail::invalid("argument " + std::to_string(i) + " is a gpurt::Local but " +
                        param_text(info, i) +
                        (p->kind == bridge::ParamKind::unknown
                             ? " is of unknown kind (the driver gave no argument info), so "
                               "gpurt cannot check it is a __local pointer"
                             : " is not a __local pointer"),
                    c.call, d);
  if (n.size == 0)
    detail::invalid("argument " + std::to_string(i) +
                        " is a gpurt::Local of 0 bytes; local memory arguments need at "
                        "least one byte",
                    c.call, d);
}

// Every argument in turn; returns the bytes the Local arguments ask for (saturating).
std::size_t check_args(const detail::DeviceState* d, const detail::KernelState* k, const detail::LaunchArgs& args,
                       const char* call) {
  const bridge::KernelInfo& info = k->info;
  std::size_t local_from_args = 0;
  for (std::size_t i = 0; i < args.count; ++i) {
    const ArgContext c{d, k, info.params_known && i < info.params.size() ? &info.params[i] : nullptr, i, call};
    gpurt_kernel_arg& n = args.native[i];
    switch (n.kind) {
      case GPURT_ARG_BUFFER: check_buffer_arg(c, n, args.checks[i]); break;
      case GPURT_ARG_SCALAR: check_scalar_arg(c, n, args.checks[i]); break;
      default:  // GPURT_ARG_LOCAL: native_arg makes no other kind
        check_local_arg(c, n);
        local_from_args = saturating_add(local_from_args, n.size);
        break;
    }
  }
  return local_from_args;
}

}  // namespace

void detail::prepare_launch(DeviceState* d, KernelState* k, const LaunchConfig& config, const LaunchArgs& args,
                            const char* call, PreparedLaunch& out) {
  check_kernel_device(d, k, call);
  const bridge::KernelInfo& info = k->info;
  check_shape(d, info, config, call);
  check_local(d, info, config.local_bytes, 0, call);
  const bool dynamic_param = info.dynamic_local_is_parameter && config.local_bytes > 0;
  check_count(d, info, config, dynamic_param, args.count, call);
  check_local(d, info, config.local_bytes, check_args(d, k, args, call), call);

  out.count = args.count;
  out.shape = gpurt_launch_shape{{config.groups.x, config.groups.y, config.groups.z},
                                 {config.group_size.x, config.group_size.y, config.group_size.z},
                                 config.local_bytes};
  if (dynamic_param) {
    args.native[out.count++] = {GPURT_ARG_LOCAL, nullptr, 0, config.local_bytes, nullptr};
    out.shape.local_bytes = 0;
  }
}

void Queue::launch_args(const Kernel& kernel, const LaunchConfig& config, gpurt_kernel_arg* native,
                        const detail::ArgCheck* checks, std::size_t count) {
  constexpr const char* call = "Queue::launch";
  detail::QueueState* q = checked(call);
  detail::KernelState* k = detail::Access::state(kernel, call);
  detail::PreparedLaunch p;
  detail::prepare_launch(q->device, k, config, detail::LaunchArgs{native, checks, count}, call, p);
  detail::Traced trace("launch", k->info.name.c_str(), 0, q, q->device);
  std::shared_lock<std::shared_mutex> order(q->order);
  bridge::Outcome launched = q->impl->launch(*k->impl, p.shape, native, p.count);
  if (!launched.ok()) detail::raise(launched.failure(), q->device);
}

}  // namespace gpurt
