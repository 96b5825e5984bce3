// gpurt::Device: one compute device of one backend (a CUDA GPU, an OpenCL GPU or CPU).
//
// A Device is a cheap handle; devices live as long as the process. Obtain one from
// gpurt::devices(), gpurt::default_device() or gpurt::device("opencl:pocl"). A default-constructed
// Device is not valid() and every call on it throws Error(invalid_argument).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/detail/access.hpp"
#include "gpurt/types.hpp"

namespace gpurt {

namespace detail {
struct DeviceState;
}

template <class T> class Buffer;
template <class T> class HostBuffer;
class Queue;
class Program;

struct QueueOptions {
  enum class Timing { enabled, disabled };
  // enabled: Event elapsed times work on this queue (OpenCL profiling, timed CUDA events).
  Timing timing = Timing::enabled;
};

struct BuildOptions {
  std::vector<std::string> flags;  // passed to the compiler as given ("-cl-fast-relaxed-math")
  // NAME, VALUE pairs, given to the compiler as "#define NAME VALUE" lines ahead of the source (never
  // as options, so a value such as "1 -DOTHER" or "unsigned int" stays one value); an empty value
  // defines NAME as 1, as -DNAME does. Device::build throws invalid_argument for a name that is not
  // a C identifier, for a switch of the portable prelude (GPURT_SUB_GROUPS_SINGLE_ITEM,
  // GPURT_ATOMICS_COMPARE_AND_SWAP, GPURT_OPENCL_*: the prelude is read before these lines; pass such
  // a switch in flags), and for a value with a line break or NUL, ending in a backslash, or opening a
  // /* comment it does not close. Source languages only: a ptx or cubin build with defines throws
  // invalid_argument.
  std::vector<std::pair<std::string, std::string>> defines;
  // How floating-point expressions may be evaluated (gpurt/types.hpp FloatMath): contract (the
  // compilers' default), exact (no contraction: bit-for-bit what a CPU computes without fma) or
  // fast. Source languages only: a ptx or cubin build with another than contract throws
  // invalid_argument; a plugin that cannot honour it throws unsupported.
  FloatMath float_math = FloatMath::contract;
};

struct ProgramSource {
  SourceLanguage language = SourceLanguage::portable;
  std::string text;  // source text; for cubin, the binary bytes
  // How build logs refer to it (the file name in #line directives). Any text: quotes, backslashes
  // and question marks are escaped, control characters (line breaks) become '_', and each byte
  // that is not part of valid UTF-8 reaches the compiler as the four characters \xHH, so a name
  // can never end the string or the line it is placed in, and every compiler takes it.
  std::string name = "program";
};

struct MemoryUsage {
  std::uint64_t free_bytes = 0;   // as the driver reports it; 0 when free_known is false
  std::uint64_t total_bytes = 0;
  bool free_known = true;         // false where the backend cannot tell (OpenCL)
  std::uint64_t gpurt_bytes = 0;  // device memory this process holds in gpurt buffers now (through
                                  // this Device and any Device imported over the same native device)
  std::uint64_t gpurt_buffers = 0;
  std::uint64_t pooled_bytes = 0;  // of gpurt_bytes: memory Queue::alloc buffers gave back that none
                                   // uses now, kept for the next Queue::alloc (Device::trim_pool);
                                   // never more than gpurt_bytes
};

class Device {
 public:
  Device() = default;

  const DeviceProperties& properties() const;
  const std::string& name() const { return properties().name; }
  const std::string& backend() const { return properties().backend; }
  // "opencl:0": the selector that names exactly this device.
  std::string selector() const;
  // "opencl:0 (pthread-haswell-AMD EPYC 7B13)": for messages.
  std::string description() const;

  // Device memory for `count` elements of T; contents undefined. Throws out_of_device_memory
  // when the device cannot hold it, including when it would take the bytes gpurt holds on the
  // device (memory_usage().gpurt_bytes) past the device's memory, on every backend (drivers
  // that over-commit, like PoCL's, would accept it). Zero elements gives an empty buffer with
  // no native allocation. The memory is resident on the device when alloc returns, on every
  // backend (api-guide.md, "When memory becomes resident").
  template <class T> Buffer<T> alloc(std::size_t count) const;
  // Page-locked host memory for `count` elements, fast to copy to and from this device. Throws
  // out_of_host_memory when the host cannot provide it.
  template <class T> HostBuffer<T> alloc_host(std::size_t count) const;
  // Shared memory for `count` elements of T (api-guide.md, "Shared memory"): a Buffer like
  // alloc's - views, kernels, copies, fills, graphs, the library - whose bytes the host also reaches
  // through Buffer::host_data() (CUDA managed memory; OpenCL buffer SVM: where it is coarse-grained,
  // as on NVIDIA's OpenCL, properties().shared_memory_after_finish says when the host may). Contents
  // undefined. Counted in memory_usage() like alloc's. Throws unsupported (naming the device) where
  // properties().shared_memory is false, and out_of_device_memory for more than the driver says is
  // free, before the driver sees the request (asking for more can hang an NVIDIA GPU).
  template <class T> Buffer<T> alloc_shared(std::size_t count) const;
  // Access advice for the bytes of `view`, shared memory of this device (api-guide.md, "Shared
  // memory"): set (or, with set false, withdrawn) for the range from now on, for every queue; not
  // ordered on any queue and never needed for correctness (CUDA cuMemAdvise; prefer_device and
  // prefer_host replace each other). Returns true where the device took it, false where it has no
  // such advice (OpenCL, CUDA without concurrent managed access): nothing changes then. Throws
  // invalid_argument for a buffer that is not shared memory or of another device, and for an advice
  // that is not one of MemoryAdvice's values. An empty view: nothing, true.
  template <class T> bool advise(const Buffer<T>& view, MemoryAdvice advice, bool set = true) const;
  // Registered host memory (api-guide.md, "Registered host memory"): pins the application's own
  // `count` elements at `ptr` (a std::vector's data(), say) in place and returns a HostBuffer over
  // them - no copy, the memory stays the application's. While any handle to it lives, every copy
  // from or to memory inside it is a pinned copy: direct and asynchronous, so the memory must stay
  // valid and unchanged (uploads) or unread (downloads) until the copy has completed, as for
  // HostBuffer - whether the copy names the HostBuffer or a raw pointer or range inside it - and a
  // handle must live until then too: the last handle unregisters it at once, whatever is in
  // flight. Free the memory only after that (freeing registered memory is undefined, as in CUDA).
  // Throws invalid_argument for a null pointer with count > 0 and for a range overlapping a
  // registration, a HostBuffer or shared memory gpurt knows (register each range once; of two
  // threads registering overlapping ranges at once, one is refused), unsupported (naming the
  // device) where the backend cannot pin memory in place (OpenCL GPU devices), and the driver's error where it
  // refuses (CUDA: memory it cannot lock, a limit reached). Pinning takes time (the driver locks
  // every page): register long-lived buffers once, not per copy. Pages the process may only read
  // (a mapped file opened read-only, constant data) are registered read-only where the device
  // allows, and a download into them is then invalid_argument.
  template <class T> HostBuffer<T> register_host(T* ptr, std::size_t count) const;
  // Const memory: registered for uploads only (read-only where the device allows). The
  // HostBuffer<const T> is a source of copies and recordings; a download into it does not compile,
  // and one into a raw pointer inside it is invalid_argument.
  template <class T> HostBuffer<const T> register_host(const T* ptr, std::size_t count) const;

  Queue create_queue(QueueOptions options = {}) const;

  // Compiles `source` for this device; blocks until done. Throws build_failed with the compiler's
  // log and options, or unsupported when the backend does not take that language.
  Program build(const ProgramSource& source, const BuildOptions& options = {}) const;

  MemoryUsage memory_usage() const;
  // Releases to the driver the memory that Queue::alloc buffers gave back and no buffer uses now
  // (memory_usage().pooled_bytes: the pools of every Device on this native device, imported ones
  // included); returns the bytes released. Allocations that would otherwise fail for want of
  // device memory do this themselves first. May wait as freeing device memory does (CUDA's
  // cuMemFree waits for the device's work), and for a release another thread began.
  std::uint64_t trim_pool() const;

  // true for a device from gpurt::devices(), default_device(), device(...) or another handle's
  // device(); false when default-constructed. Every handle type (Device, Buffer, HostBuffer, Queue,
  // Event, Program, Kernel) has valid() with this meaning; empty() is kept for "zero elements" on
  // Buffer and HostBuffer, as on std containers.
  bool valid() const { return state_ != nullptr; }
  [[deprecated("Device::empty() meant a null handle; use !valid() (empty() means zero elements on buffers)")]]
  bool empty() const { return state_ == nullptr; }
  friend bool operator==(const Device& a, const Device& b) { return a.state_ == b.state_; }
  friend bool operator!=(const Device& a, const Device& b) { return a.state_ != b.state_; }
  // A strict total order of devices by identity (not by any property), consistent with ==, so that
  // a Device can key a std::map or std::set. Devices live as long as the process, so such a key
  // never dangles.
  friend bool operator<(const Device& a, const Device& b) {
    return std::less<const detail::DeviceState*>()(a.state_, b.state_);
  }

 private:
  friend struct detail::Access;
  explicit Device(detail::DeviceState* state) : state_(state) {}
  detail::DeviceState* state() const { return state_; }  // null for an empty handle
  detail::DeviceState* state_ = nullptr;
};

}  // namespace gpurt
