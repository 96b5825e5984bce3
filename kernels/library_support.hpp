// What the library's calls share (kernels/library.cpp and the calls in files of their own): the
// typed errors, the argument checks (validity, sizes, overlap, matrix dimensions), and the programs
// and shaped kernels built once per device and variant. Internal to libgpurt-lib.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpurt/buffer.hpp"
#include "gpurt/device.hpp"
#include "gpurt/error.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/library.hpp"
#include "gpurt/program.hpp"
#include "gpurt/queue.hpp"

namespace gpurt::lib::support {

template <class T> const char* type_name();
template <> inline const char* type_name<std::int32_t>() { return "int"; }
template <> inline const char* type_name<std::uint32_t>() { return "uint"; }
template <> inline const char* type_name<float>() { return "float"; }
template <> inline const char* type_name<double>() { return "double"; }

// Throws the library's typed error for a call (`gpurt::lib::<call>`) on `dev`.
[[noreturn]] inline void fail(ErrorCategory category, const Device& dev, const std::string& call, const std::string& what) {
  throw Error(category, what, ErrorDetails{dev.backend(), 0, {}, "gpurt::lib::" + call, dev.description(), {}, {}});
}

// A build-time constant of a library kernel: a number, or `text` (a static string) when set.
struct Define {
  const char* name;
  long long number = 0;
  const char* text = nullptr;
  std::string value() const { return text ? std::string(text) : std::to_string(number); }
};
using Defines = std::initializer_list<Define>;
constexpr std::size_t max_defines = 5;

// The library's programs, built once per (device, source, element type, extra defines) for the
// process: portable sources (kernels/*.gpurt), or the nvcc-built binary of the tensor-core kernels.
inline Program library_program(const Device& dev, const char* source_name, std::string_view source, const char* type,
                        Defines extra = {}, SourceLanguage language = SourceLanguage::portable) {
  static std::mutex mutex;
  static std::map<std::tuple<Device, std::string, std::string>, Program> programs;
  std::string variant = type ? type : "";
  for (const Define& d : extra) variant += std::string(" ") + d.name + "=" + d.value();
  const auto key = std::make_tuple(dev, std::string(source_name), variant);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = programs.find(key);
    if (it != programs.end()) return it->second;
  }
  if (type && std::string(type) == "double" && !dev.properties().fp64)
    fail(ErrorCategory::unsupported, dev, source_name,
         std::string("the library's ") + source_name + " kernels in double need fp64, which " + dev.description() +
             " lacks; use float");
  BuildOptions options;
  // The element type arrives as GPURT_T (a macro named T would clash with NVRTC's own headers).
  if (type) options.defines.push_back({"GPURT_T", type});
  for (const Define& d : extra) options.defines.push_back({d.name, d.value()});
  Program p = dev.build({language, std::string(source),
                         language == SourceLanguage::portable ? std::string(source_name) + ".gpurt" : source_name},
                        options);
  std::lock_guard<std::mutex> lock(mutex);
  return programs.emplace(key, p).first->second;
}

// A kernel of the library, looked up once per device and variant (not per call), with its 1D
// launch shape: `group`, the largest power of two up to 256 that the kernel allows, and `wave`,
// the number of such groups (each with `local_per_item` bytes of dynamic local memory per
// work-item plus `local_per_group`) that the device runs at once - compute units x resident groups
// per unit, from the occupancy calculator (CUDA) or the backend's estimate (OpenCL). 2D kernels
// use only `kernel`.
struct ShapedKernel {
  Kernel kernel;
  std::size_t group = 1;
  std::size_t wave = 1;
};

// The lookup builds no strings and allocates nothing on the way to a hit: the key holds views of
// source_name, type, name and the defines' names and texts, which must therefore be string
// literals or other static strings.
inline ShapedKernel shaped_kernel(const Device& dev, const char* source_name, std::string_view source, const char* type,
                           const char* name, std::size_t local_per_item, Defines extra = {},
                           SourceLanguage language = SourceLanguage::portable, std::size_t local_per_group = 0) {
  using DefineKey = std::tuple<std::string_view, long long, std::string_view>;
  using Key = std::tuple<Device, std::string_view, std::string_view, std::string_view, std::size_t,
                         std::array<DefineKey, max_defines>>;
  static std::mutex mutex;
  static std::map<Key, ShapedKernel> kernels;
  std::array<DefineKey, max_defines> defines{};
  std::size_t i = 0;
  for (const Define& d : extra) defines.at(i++) = {d.name, d.number, d.text ? d.text : ""};
  const Key key(dev, source_name, name, type ? type : "", local_per_group, defines);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernels.find(key);
    if (it != kernels.end()) return it->second;
  }
  ShapedKernel s;
  s.kernel = library_program(dev, source_name, source, type, extra, language).kernel(name);
  while (s.group * 2 <= std::min<std::size_t>(256, s.kernel.max_group_size())) s.group *= 2;
  s.wave = std::max<std::size_t>(1, dev.properties().compute_units) *
           s.kernel.resident_groups_per_unit(s.group, s.group * local_per_item + local_per_group);
  std::lock_guard<std::mutex> lock(mutex);
  return kernels.emplace(key, s).first->second;
}

// A 1D grid-stride launch: one wave of groups that fills the device, never more than the items need.
inline LaunchConfig stride_config(const Queue& q, const ShapedKernel& k, std::size_t n, std::size_t local_bytes = 0) {
  const std::size_t needed = (n + k.group - 1) / k.group;
  return LaunchConfig(Dim3(std::max<std::size_t>(1, std::min({needed, k.wave, q.device().properties().max_groups.x}))),
                      Dim3(k.group), local_bytes);
}

[[noreturn]] inline void bad(const Queue& q, const std::string& call, const std::string& what) {
  fail(ErrorCategory::invalid_argument, q.device(), call, what);
}

// api-guide.md, "Handles": every call on a handle that is not valid() (default-constructed or
// moved-from) throws invalid_argument - also a library call that zero elements would leave with
// nothing to do, which must not take an invalid Buffer or Queue for an empty one. Checked first.
struct Handle {
  const char* name;
  bool valid;
};

inline void require_valid(const Queue& q, const char* call, std::initializer_list<Handle> buffers) {
  if (!q.valid())
    throw Error(ErrorCategory::invalid_argument,
                "this Queue is empty (default-constructed or moved-from); create it from a Device first",
                ErrorDetails{{}, 0, {}, std::string("gpurt::lib::") + call, {}, {}, {}});
  for (const Handle& b : buffers)
    if (!b.valid)
      bad(q, call, std::string(b.name) + " is not a valid Buffer (default-constructed or moved-from); allocate it "
                   "with Device::alloc (dev.alloc<T>(0) makes a valid, empty one)");
}

// library.hpp: "double on a device without fp64 throws Error(unsupported)" - checked first, so that
// a call with no elements to compute throws as a call with some does (fill and copy, which only
// move bytes, work on every device).
template <class T>
void require_type(const Queue& q, const char* call) {
  if constexpr (std::is_same<T, double>::value)
    if (!q.device().properties().fp64)
      fail(ErrorCategory::unsupported, q.device(), call,
           std::string("the library's ") + call + " kernels in double need fp64, which " + q.device().description() +
               " lacks; use float");
}

inline void require_size(const Queue& q, const char* call, const char* what, std::size_t have, std::size_t want) {
  if (have != want)
    bad(q, call, std::string(what) + " holds " + std::to_string(have) + " elements but " + std::to_string(want) +
                     " are needed (exactly that many; pass a buffer or a view of " + std::to_string(want) +
                     " elements)");
}

// ---- Aliasing: one rule for every call. Two views overlap when they are views of one allocation
// (through view() or as<U>()) whose byte ranges intersect; an empty view overlaps nothing. A call
// names each output and the inputs it must not run over; `InPlace::allowed` accepts the output
// being exactly the input's view (same start, same size: each element is read before the same
// work-item writes it), and no other overlap.
enum class InPlace { allowed, rejected };

inline std::string byte_range(std::size_t offset, std::size_t bytes) {
  return "[" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + ")";
}

template <class Out, class In>
void check_overlap(const Queue& q, const char* call, const char* out_name, const Buffer<Out>& out,
                   const char* in_name, const Buffer<In>& in, InPlace in_place) {
  if (!out.overlaps(in)) return;
  const bool same = out.offset_bytes() == in.offset_bytes() && out.size_bytes() == in.size_bytes();
  if (same && in_place == InPlace::allowed) return;
  const std::string where = " (bytes " + byte_range(out.offset_bytes(), out.size_bytes()) + " and " +
                            byte_range(in.offset_bytes(), in.size_bytes()) + " of one allocation); ";
  if (in_place == InPlace::allowed)
    bad(q, call, std::string(out_name) + " and " + in_name + " overlap in part" + where + out_name + " may be " +
                     in_name + " itself (the same view) but no other range of its memory; use a separate buffer");
  bad(q, call, std::string(out_name) + " and " + in_name + " overlap" + where + "lib::" + call + " cannot write " +
                   out_name + " over " + in_name + ", not even in place; use a separate buffer for " + out_name);
}

// ---- Sizes of the matrix calls (transpose, matmul, conv2d, the tensor-core matmuls). Their
// kernels index rows and columns in 32 bits: a dimension of at most 2^31 keeps a tile's last
// index below 2^32. Products of dimensions are checked before they are used.
constexpr std::size_t max_dimension = std::size_t(1) << 31;

struct Dimension {
  const char* name;
  std::size_t value;
};

// The elements of the `what` matrix, a.value x b.value, or an error naming the call and the
// sizes when the product does not fit 64 bits.
inline std::size_t matrix_elements(const Queue& q, const char* call, const char* what, Dimension a, Dimension b) {
  std::size_t n = 0;
  if (__builtin_mul_overflow(a.value, b.value, &n))
    bad(q, call, std::string(what) + " would hold " + a.name + " x " + b.name + " = " + std::to_string(a.value) +
                     " x " + std::to_string(b.value) + " elements, more than 2^64 - 1; check the dimensions");
  return n;
}

inline void check_dimensions(const Queue& q, const char* call, std::initializer_list<Dimension> dims) {
  for (const Dimension& d : dims)
    if (d.value > max_dimension)
      bad(q, call, std::string(d.name) + " = " + std::to_string(d.value) +
                       " is more than 2^31 (2147483648), the largest matrix dimension the library's kernels "
                       "index; split the matrix");
}

// Groups of `per_group` items covering `items`, or an error naming the call when a dimension needs
// more groups than the device launches.
inline Dim3 matrix_groups(const Queue& q, const char* call, Dim3 items, Dim3 per_group) {
  const Dim3 groups = LaunchConfig::cover(items, per_group).groups;
  const Dim3& limit = q.device().properties().max_groups;
  for (int i = 0; i < 3; ++i)
    if (groups[i] > limit[i])
      bad(q, call, to_string(items) + " elements need " + to_string(groups) + " blocks of " + to_string(per_group) +
                       ", more groups than " + q.device().description() + " launches at once (at most " +
                       to_string(limit) + "); split the work into parts");
  return groups;
}



}  // namespace gpurt::lib::support
