// Value types shared by the public API and the backend plugins: dimensions, device properties,
// backend availability, program sources and launch shapes. Plain data; the one behaviour is the
// 16-bit floats' conversion to and from float (core/src/base/float16.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace gpurt {

// Host twins of the dialect's vector types (docs/kernel-language.md, "Vector types"): the size and
// alignment of CUDA's float4 and OpenCL's cl_float4: the element type of a Buffer<gpurt::float4>
// for a `GPURT_GLOBAL float4*` parameter (which, as every vector pointer, takes any buffer:
// errors.md), and the value a `float4` parameter takes (checked lane by lane: a gpurt::float2 or a
// gpurt::int4 there is refused).
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) int2 { std::int32_t x, y; };
struct alignas(16) int4 { std::int32_t x, y, z, w; };
struct alignas(8) uint2 { std::uint32_t x, y; };
struct alignas(16) uint4 { std::uint32_t x, y, z, w; };

// Host twins of the dialect's 16-bit floats (docs/kernel-language.md, "half and bfloat16"): two
// bytes holding the bits, the element types of buffers for `half*` and `bfloat16*` parameters (a
// Buffer<std::uint16_t> passes there too) and the values of `half` and `bfloat16` parameters.
// From a float: rounded to nearest, ties to even; a value beyond the largest finite one becomes an
// infinity of its sign; a NaN stays a NaN (quiet, its sign kept); half's subnormals are exact. To a
// float: exact (every half and bfloat16 value is a float). == and != compare values, as float's do
// (a NaN equals nothing, -0 equals +0); bits() compares representations. Without libgpurt (a
// plugin) only the bits are available.
class half {
 public:
  half() = default;
  explicit half(float value) noexcept;
  explicit operator float() const noexcept;
  static constexpr half from_bits(std::uint16_t bits) noexcept { half h; h.bits_ = bits; return h; }
  constexpr std::uint16_t bits() const noexcept { return bits_; }
  friend bool operator==(half a, half b) noexcept { return float(a) == float(b); }
  friend bool operator!=(half a, half b) noexcept { return !(a == b); }

 private:
  std::uint16_t bits_ = 0;
};
class bfloat16 {
 public:
  bfloat16() = default;
  explicit bfloat16(float value) noexcept;
  explicit operator float() const noexcept;
  static constexpr bfloat16 from_bits(std::uint16_t bits) noexcept { bfloat16 b; b.bits_ = bits; return b; }
  constexpr std::uint16_t bits() const noexcept { return bits_; }
  friend bool operator==(bfloat16 a, bfloat16 b) noexcept { return float(a) == float(b); }
  friend bool operator!=(bfloat16 a, bfloat16 b) noexcept { return !(a == b); }

 private:
  std::uint16_t bits_ = 0;
};
static_assert(sizeof(half) == 2 && std::is_trivially_copyable<half>::value, "half is two bytes of bits");
static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable<bfloat16>::value, "bfloat16 is two bytes of bits");

namespace detail {
// What a value is, as far as kernel argument checks care: its kind, signedness and width. The
// core describes each host argument (and each Buffer's element type) with one, and each kernel
// parameter's type from its spelling (gpurt/plugin/signature.hpp), and compares the two.
enum class ValueKind : std::uint8_t {
  unknown,   // nothing known: only sizes are compared
  integer,
  floating,
  boolean,
  other,     // a struct, vector or enum-free aggregate: sizes are compared
};
struct ValueType {
  ValueKind kind = ValueKind::unknown;
  bool is_signed = false;
  bool plain_char = false;  // spelled `char` (signedness differs between compilers)
  std::uint8_t bytes = 0;    // of the whole value (a vector's lanes together)
  std::uint8_t lanes = 0;    // 2 or 4 for the dialect's vector types (kind and signedness: a lane's)
  bool is_bfloat16 = false;  // a 2-byte float with 8 exponent bits (bfloat16), not IEEE half
};
template <class T> struct vector_lanes { static constexpr std::uint8_t value = 0; using element = void; };
#define GPURT_VECTOR_LANES_(V, E, N) \
  template <> struct vector_lanes<V> { static constexpr std::uint8_t value = N; using element = E; };
GPURT_VECTOR_LANES_(float2, float, 2)
GPURT_VECTOR_LANES_(float4, float, 4)
GPURT_VECTOR_LANES_(int2, std::int32_t, 2)
GPURT_VECTOR_LANES_(int4, std::int32_t, 4)
GPURT_VECTOR_LANES_(uint2, std::uint32_t, 2)
GPURT_VECTOR_LANES_(uint4, std::uint32_t, 4)
#undef GPURT_VECTOR_LANES_
template <class T>
constexpr ValueType value_type_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same<U, bool>::value) {
    return {ValueKind::boolean, false, false, static_cast<std::uint8_t>(sizeof(U))};
  } else if constexpr (std::is_enum<U>::value) {
    return value_type_of<std::underlying_type_t<U>>();
  } else if constexpr (std::is_integral<U>::value) {
    return {ValueKind::integer, std::is_signed<U>::value, std::is_same<U, char>::value,
            static_cast<std::uint8_t>(sizeof(U))};
  } else if constexpr (std::is_same<U, half>::value || std::is_same<U, bfloat16>::value) {
    return {ValueKind::floating, true, false, 2, 0, std::is_same<U, bfloat16>::value};
  } else if constexpr (std::is_floating_point<U>::value) {
    return {ValueKind::floating, true, false, static_cast<std::uint8_t>(sizeof(U))};
  } else if constexpr (vector_lanes<U>::value != 0) {
    ValueType v = value_type_of<typename vector_lanes<U>::element>();
    v.bytes = static_cast<std::uint8_t>(sizeof(U));
    v.lanes = vector_lanes<U>::value;
    return v;
  } else {
    return {ValueKind::other, false, false, static_cast<std::uint8_t>(sizeof(U) < 256 ? sizeof(U) : 0)};
  }
}
}  // namespace detail

enum class CopyDirection { host_to_device = 0, device_to_host = 1, device_to_device = 2 };

// A 1-, 2- or 3-dimensional extent. Unused dimensions are 1.
struct Dim3 {
  std::size_t x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(std::size_t x_, std::size_t y_ = 1, std::size_t z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr std::size_t volume() const { return x * y * z; }
  constexpr std::size_t operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
  friend constexpr bool operator==(const Dim3& a, const Dim3& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }
  friend constexpr bool operator!=(const Dim3& a, const Dim3& b) { return !(a == b); }
};
std::string to_string(const Dim3& d);

enum class DeviceType { gpu, cpu, accelerator, other };
const char* to_string(DeviceType t) noexcept;

// The languages a device's backend can build programs from.
enum class SourceLanguage {
  portable,  // gpurt's kernel dialect (docs/kernel-language.md), built by every backend
  opencl_c,  // OpenCL C source (OpenCL backend)
  cuda_cpp,  // CUDA C++ source compiled by NVRTC (CUDA backend)
  ptx,       // PTX assembly text (CUDA backend)
  cubin,     // a CUDA binary (cubin or fatbin) for this device (CUDA backend)
};
const char* to_string(SourceLanguage l) noexcept;

// How a build may evaluate floating-point expressions (BuildOptions::float_math; kernel-language.md,
// "Floating-point contraction").
enum class FloatMath {
  // The compilers' default: a*b+c may be fused into one fma (one rounding instead of two) wherever
  // the compiler chooses - NVRTC's --fmad=true, OpenCL C's FP_CONTRACT ON. Faster, and usually more
  // accurate, but results may differ in the last bits from a CPU that rounds each operation.
  contract,
  // Every operation rounded on its own, as written (NVRTC --fmad=false, OpenCL
  // "#pragma OPENCL FP_CONTRACT OFF"): +, -, *, / and sqrt give the bits a CPU computing in float
  // without contraction gives (/ and sqrt on OpenCL where the device has correctly rounded ones,
  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT). fma() where the source calls it is still fused.
  exact,
  // Fast, relaxed math (NVRTC --use_fast_math, OpenCL -cl-fast-relaxed-math): contraction, fast
  // approximate division, square root and transcendentals, and no care for NaN, infinities, signed
  // zero or subnormals (flushed to zero).
  fast,
};
const char* to_string(FloatMath m) noexcept;

// Access advice for shared memory (Device::advise; api-guide.md, "Shared memory"): hints about how
// a range will be used, which change how fast, never what, work computes. CUDA: cuMemAdvise.
enum class MemoryAdvice {
  read_mostly,         // mostly read: each processor that reads it may keep a copy of its own
                       // (CU_MEM_ADVISE_SET_READ_MOSTLY); a write drops the copies
  prefer_device,       // keep it in the device's memory (CU_MEM_ADVISE_SET_PREFERRED_LOCATION)
  prefer_host,         // keep it in host memory, the device reaching it there
  accessed_by_device,  // the device will use it: keep it mapped for the device wherever it lies,
                       // so a first access faults nothing (CU_MEM_ADVISE_SET_ACCESSED_BY)
};
const char* to_string(MemoryAdvice a) noexcept;

struct DeviceProperties {
  std::string backend;         // "cuda" or "opencl"
  std::size_t index = 0;       // position within the backend's device list (selector "backend:index")
  std::string name;
  std::string vendor;
  std::string platform;        // OpenCL platform name; "CUDA" for the CUDA backend
  std::string platform_version;  // OpenCL platform version ("OpenCL 3.0 PoCL 3.1 ..."), CUDA version
  DeviceType type = DeviceType::other;
  std::string driver_version;
  std::string architecture;    // "sm_90", or the OpenCL device version string
  std::uint64_t global_memory = 0;     // bytes
  std::uint64_t max_allocation = 0;    // largest single buffer, bytes
  unsigned compute_units = 0;
  std::size_t max_group_size = 0;      // work-items (threads) per group, all dimensions together
  Dim3 max_group_dims;                 // per-dimension limit on the group size
  Dim3 max_groups;                     // per-dimension limit on the number of groups
  std::size_t max_local_memory = 0;    // local (shared) memory per group, bytes
  unsigned simd_width = 0;             // warp / preferred work-group multiple
  bool fp64 = false;
  bool fp16 = false;
  bool int32_atomics = false;          // 32-bit integer atomics on global and local memory
  bool float_atomic_add = false;       // gpurt_atomic_add_float on global memory is the hardware's add (false: a
                                       // compare-and-swap loop, correct but slow under contention); says
                                       // nothing of the _local word or of _f64
  bool int64_atomics = false;          // the dialect's 64-bit integer atomics build and run, on global
                                       // and local memory (docs/kernel-language.md, "Atomics"); false:
                                       // a kernel using one fails to build, naming int64 atomics
  bool sub_groups = false;             // the dialect's sub-group operations are native (warps, OpenCL
                                       // sub-groups, inline PTX); false: every work-item is its own
                                       // sub-group (docs/kernel-language.md, "Sub-groups")
  bool sub_group_shuffle = false;      // shuffles are native; false where sub_groups is true: each is a
                                       // loop of one broadcast per lane (cl_khr_subgroups alone)
  std::vector<std::uint32_t> sub_group_sizes;  // sizes a portable kernel's full sub-groups may have
                                       // ({32} on CUDA, {1} where single-item); empty: unknown
  bool shared_memory = false;          // Device::alloc_shared works: one allocation the host and kernels
                                       // both reach (CUDA managed memory, OpenCL buffer SVM)
  bool shared_memory_concurrent = false;  // the host may touch shared memory while kernels run (bytes
                                       // no running work touches); false: only between the work
  bool shared_memory_after_finish = false;  // the host may touch shared memory only after finish()
                                       // of every queue whose work used it (OpenCL coarse-grained
                                       // SVM, which gpurt maps there), not after an event's wait
                                       // alone nor inside a host function (api-guide.md)
  bool tensor_cores = false;           // matrix units for 16x8x16 bf16 / 16x8x8 tf32 multiply-accumulate
                                       // (CUDA compute capability 8.0 or later); lib::matmul_tf32/bf16 use them
  std::size_t view_alignment = 1;      // a buffer view passed to a kernel must start on a multiple
                                       // of this many bytes (OpenCL sub-buffer alignment)
  std::string pci_bus_id;              // "0000:19:00.0" where the backend tells, else empty
  std::string uuid;                    // 32 hex digits where the backend tells, else empty
  std::vector<SourceLanguage> languages;  // what Device::build accepts
};

// Why a backend cannot be used. `available` means it can.
enum class BackendStatus {
  available,
  plugin_not_found,         // no plugin library in any searched directory
  plugin_invalid,           // a file was found but is not a usable gpurt plugin of this version, or was
                            // refused before loading because it or its directory could be changed by
                            // another user (README, GPURT_PLUGIN_PATH); `reason` says which
  vendor_library_missing,   // the plugin needs a vendor library (libcuda.so.1, libOpenCL.so.1) that is absent
  no_device,                // the backend works but sees no device
  init_failed,              // the vendor library refused to initialise
  disabled_by_environment,  // GPURT_DISABLE_BACKENDS names it
};
const char* to_string(BackendStatus s) noexcept;

// A backend: a plugin libgpurt_<name>.so found in the plugin directories (README, "Backends").
struct BackendInfo {
  std::string name;                   // the <name> of its plugin file: "cuda", "opencl"
  BackendStatus status = BackendStatus::plugin_not_found;
  std::string reason;                 // one sentence a person can act on; empty when available
  std::string native_text;            // dlerror() text or the driver's code and name
  std::string plugin_path;            // the library that was loaded or tried
  std::vector<std::string> searched;  // directories searched for the plugin, in order
  std::string version;                // backend and driver version when available
  std::size_t device_count = 0;
  std::vector<std::string> notes;     // parts left out (a platform whose devices failed), and why
  // What the plugin declares about itself (empty when it could not be loaded):
  std::string description;            // one line ("NVIDIA GPUs through the CUDA driver API")
  std::string install_hint;           // what to install for it to work (also read from a plugin whose
                                      // vendor library is missing, which cannot be loaded)
  std::vector<SourceLanguage> languages;  // what its devices may build
  int priority = 0;                   // default-device preference among devices of one type; higher first
  bool available() const { return status == BackendStatus::available; }
};

}  // namespace gpurt
