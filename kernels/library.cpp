// Host side of the kernel library: size checks, program builds (once per device and type), and
// launch shapes. The kernels themselves are kernels/*.gpurt, embedded at build time. Written
// against gpurt's public API alone, as any application would be (no core/src header).
#include "gpurt/library.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu.hpp"
#include "library_support.hpp"
#include "cuda/matmul_tensor.h"
#include "embedded_kernels.hpp"
#include "vendor/vendor.hpp"
#include "gpurt/device.hpp"
#include "gpurt/error.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/program.hpp"
#include "gpurt/types.hpp"

namespace gpurt::lib {

using namespace support;

namespace {

template <class T>
ShapedKernel elementwise_kernel(Queue& q, const char* name) {
  return shaped_kernel(q.device(), "elementwise", embedded::elementwise, type_name<T>(), name, 0);
}

// The library's scratch on one queue, so that a call allocates and clears nothing: the queue owns
// it (Queue::keep_until_destroyed) and frees it when it goes, after its work; the library finds it
// again through a registry of weak references keyed by Queue::id(), which keeps no queue alive.
// The queue runs in order, so one call's kernels are done with it before the next call's start;
// `mutex` is held (by a ScratchLease) while a call enqueues work that uses it, which keeps calls
// from several threads on one queue whole.
struct Scratch {
  std::mutex mutex;
  // Word 0: reduce's ticket counter, zero between calls (the kernel's last group resets it);
  // then the groups' partial results.
  Buffer<std::uint64_t> reduce;
  // Word 0: scan's ticket counter (only grows), word 1 spare, then the tiles' status words.
  Buffer<std::uint64_t> scan;
  std::uint32_t scan_tickets = 0;  // the counter's value once the scans enqueued so far have run
  std::uint32_t scan_epoch = 0;    // the last enqueued scan's epoch; 0: none since the buffer was zeroed
  // matmul_tf32 on sm_90 (the wgmma kernel reading B^T): A rounded to TF32, and B^T rounded.
  Buffer<float> tf32_a, tf32_bt;
  // histogram's counters on GPU devices (two per word), copied into counts at the end of each call.
  Buffer<std::uint64_t> histogram;
};

// The queue's Scratch, made (and handed to the queue) on its first library call that needs one.
// Entries of queues that are gone are dropped whenever a new one is added.
std::shared_ptr<Scratch> scratch_of(Queue& q) {
  static std::mutex mutex;
  static std::map<std::uint64_t, std::weak_ptr<Scratch>> registry;
  const std::uint64_t id = q.id();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = registry.find(id);
  if (it != registry.end())
    if (std::shared_ptr<Scratch> s = it->second.lock()) return s;
  for (auto e = registry.begin(); e != registry.end();) e = e->second.expired() ? registry.erase(e) : std::next(e);
  auto s = std::make_shared<Scratch>();
  q.keep_until_destroyed(s);
  registry[id] = s;
  return s;
}

class ScratchLease {
 public:
  explicit ScratchLease(Queue& q) : scratch_(scratch_of(q)), lock_(scratch_->mutex) {}
  Scratch* operator->() const { return scratch_.get(); }

 private:
  std::shared_ptr<Scratch> scratch_;
  std::unique_lock<std::mutex> lock_;
};

// Makes `b` at least `words` long: a new buffer, zeroed on the queue before it replaces `b` (so a
// refused fill leaves the old one in place), the old one living until the queue's work is done.
// Returns whether it replaced the buffer.
bool ensure_scratch(Queue& q, Buffer<std::uint64_t>& b, std::size_t words) {
  if (b.size() >= words) return false;
  Buffer<std::uint64_t> fresh = q.device().alloc<std::uint64_t>(std::max(words, 2 * b.size()));
  q.fill(fresh, std::uint64_t{0});
  if (!b.empty()) q.keep_until_finished(std::make_shared<const Buffer<std::uint64_t>>(std::move(b)));
  b = std::move(fresh);
  return true;
}

template <class T>
T identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return T(0);
    case ReduceOp::min: return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                     : std::numeric_limits<T>::max();
    case ReduceOp::max: return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                     : std::numeric_limits<T>::lowest();
  }
  return T(0);
}

// The scan's work-group size: a power of two up to 256 that the device allows (a build-time
// constant of the kernel, which sizes its local arrays by it).
std::size_t scan_group(const Device& dev) {
  std::size_t g = 1;
  while (g * 2 <= std::min<std::size_t>(256, dev.properties().max_group_size)) g *= 2;
  return g;
}

// The scan's load form (GPURT_SCAN_BATCH in scan.gpurt): 1 issues a work-item's loads all at once,
// 0 the earlier load-store loop (the default until the H200 rows of gpurt-tune-kernels --only scan
// say the batched rows are faster; both pass the library conformance cases on PoCL).
constexpr long long scan_batch = 0;

template <class T>
void scan_impl(Queue& q, const Buffer<T>& in, const Buffer<T>& out, std::size_t n, int exclusive) {
  const std::size_t group = scan_group(q.device());
  const std::size_t tile = group * (128 / sizeof(T));  // GROUP x ITEMS in scan.gpurt
  const ShapedKernel k = shaped_kernel(q.device(), "scan", embedded::scan, type_name<T>(), "gpurt_scan", 0,
                                      {{"GPURT_SCAN_GROUP", static_cast<long long>(group)}, {"GPURT_SCAN_BATCH", scan_batch}});
  const std::size_t tiles = (n + tile - 1) / tile;
  if (tiles > std::min<std::size_t>(q.device().properties().max_groups.x, 0x7fffffff))
    bad(q, "scan", std::to_string(n) + " elements need " + std::to_string(tiles) + " groups, more than the device's " +
                       std::to_string(q.device().properties().max_groups.x) + "; scan in parts");
  // The queue's scan state: the ticket counter, a spare word, and sizeof(T)/4 status words per
  // tile. It is zeroed only when new and when the epoch runs out (the kernel ignores status words
  // of other epochs), so a scan normally enqueues one launch and nothing else.
  ScratchLease scratch(q);
  if (ensure_scratch(q, scratch->scan, 2 + tiles * (sizeof(T) / 4))) {
    scratch->scan_tickets = 0;
    scratch->scan_epoch = 0;
  } else if (scratch->scan_epoch >= (1u << 30) - 1) {  // flags are epoch * 4 + 1 or 2, in 32 bits
    q.fill(scratch->scan, std::uint64_t{0});
    scratch->scan_tickets = 0;
    scratch->scan_epoch = 0;
  }
  const std::uint32_t epoch = scratch->scan_epoch + 1, base = scratch->scan_tickets;
  q.launch(k.kernel, LaunchConfig(Dim3(tiles), Dim3(group)), in, out, static_cast<std::uint64_t>(n), exclusive,
           scratch->scan, base, epoch);
  scratch->scan_epoch = epoch;  // only once the launch is enqueued: a refused launch takes no tickets
  scratch->scan_tickets = base + static_cast<std::uint32_t>(tiles);
}

}  // namespace

template <class T>
void fill(Queue& q, const Buffer<T>& dst, Scalar<T> value) {
  require_valid(q, "fill", {{"dst", dst.valid()}});
  if (!dst.empty() && cpu::fill<T>(q, dst, value)) return;  // CPU devices: kernels/cpu.hpp
  q.fill(dst, value);  // the queue's fill engine (cuMemsetD*; a fill kernel on OpenCL GPUs)
}

template <class T>
void copy(Queue& q, const Buffer<T>& src, const Buffer<T>& dst) {
  require_valid(q, "copy", {{"src", src.valid()}, {"dst", dst.valid()}});
  require_size(q, "copy", "the destination", dst.size(), src.size());
  check_overlap(q, "copy", "dst", dst, "src", src, InPlace::allowed);
  if (src.empty()) return;
  if (cpu::copy<T>(q, src, dst)) return;  // CPU devices: kernels/cpu.hpp (their copy command runs on one thread)
  q.copy(src, dst);  // the device's copy engine: nothing written in the dialect beats it on a GPU
}

template <class T>
void axpy(Queue& q, Scalar<T> a, const Buffer<T>& x, const Buffer<T>& y) {
  require_valid(q, "axpy", {{"x", x.valid()}, {"y", y.valid()}});
  require_type<T>(q, "axpy");
  require_size(q, "axpy", "y", y.size(), x.size());
  check_overlap(q, "axpy", "y", y, "x", x, InPlace::allowed);
  if (x.empty()) return;
  if (cpu::axpy<T>(q, a, x, y)) return;  // CPU devices: kernels/cpu.hpp
  const ShapedKernel k = elementwise_kernel<T>(q, "gpurt_axpy");
  q.launch(k.kernel, stride_config(q, k, x.size()), a, x, y, static_cast<std::uint64_t>(x.size()));
}

template <class T>
void binary(Queue& q, BinaryOp op, const Buffer<T>& a, const Buffer<T>& b, const Buffer<T>& out) {
  require_valid(q, "binary", {{"a", a.valid()}, {"b", b.valid()}, {"out", out.valid()}});
  require_type<T>(q, "binary");
  require_size(q, "binary", "b", b.size(), a.size());
  require_size(q, "binary", "out", out.size(), a.size());
  check_overlap(q, "binary", "out", out, "a", a, InPlace::allowed);
  check_overlap(q, "binary", "out", out, "b", b, InPlace::allowed);
  if (a.empty()) return;
  if (cpu::binary(q, op, a, b, out)) return;  // CPU devices: kernels/cpu.hpp
  const ShapedKernel k = elementwise_kernel<T>(q, "gpurt_binary");
  q.launch(k.kernel, stride_config(q, k, a.size()), a, b, out, static_cast<std::uint64_t>(a.size()),
           static_cast<int>(op));
}

template <class T>
void reduce(Queue& q, ReduceOp op, const Buffer<T>& in, const Buffer<T>& result) {
  require_valid(q, "reduce", {{"in", in.valid()}, {"result", result.valid()}});
  require_type<T>(q, "reduce");
  require_size(q, "reduce", "result", result.size(), 1);
  // result may lie inside `in`: the last group writes it after every group has read its slice.
  const T id = identity<T>(op);
  if (in.empty()) {
    q.fill(result, id);
    return;
  }
  if (cpu::reduce(q, op, in, result, id)) return;  // CPU devices: kernels/cpu.hpp
  // One program per operation and index width: 32-bit indices while n and the grid allow them.
  const std::size_t n = in.size();
  const bool narrow = n < (std::size_t(1) << 31);
  const ShapedKernel k =
      shaped_kernel(q.device(), "reduce", embedded::reduce, type_name<T>(), "gpurt_reduce", sizeof(T),
                    {{"GPURT_REDUCE_OP", static_cast<int>(op)}, {"GPURT_INDEX", 0, narrow ? "uint32_t" : "uint64_t"}});
  LaunchConfig cfg = stride_config(q, k, n, k.group * sizeof(T));
  if (narrow)  // the kernel's index arithmetic reaches n + 8 x the grid's work-items
    cfg.groups.x = std::max<std::size_t>(1, std::min(cfg.groups.x, (std::size_t(1) << 28) / k.group));
  ScratchLease scratch(q);
  ensure_scratch(q, scratch->reduce, 1 + (cfg.groups.x * sizeof(T) + 7) / 8);
  q.launch(k.kernel, cfg, in, result, static_cast<std::uint64_t>(n), id, scratch->reduce);
}

template <class T>
T reduce(Queue& q, ReduceOp op, const Buffer<T>& in) {
  require_valid(q, "reduce", {{"in", in.valid()}});
  require_type<T>(q, "reduce");
  if (in.empty()) return identity<T>(op);
  Buffer<T> result = q.device().alloc<T>(1);
  reduce(q, op, in, result);
  return q.read(result)[0];
}

template <class T>
void scan(Queue& q, const Buffer<T>& in, const Buffer<T>& out, ScanKind kind) {
  require_valid(q, "scan", {{"in", in.valid()}, {"out", out.valid()}});
  require_type<T>(q, "scan");
  require_size(q, "scan", "out", out.size(), in.size());
  check_overlap(q, "scan", "out", out, "in", in, InPlace::allowed);  // a group reads its whole tile, then writes it
  if (in.empty()) return;
  if (cpu::scan(q, in, out, kind == ScanKind::exclusive)) return;  // CPU devices: kernels/cpu.hpp
  scan_impl(q, in, out, in.size(), kind == ScanKind::exclusive ? 1 : 0);
}

void transpose(Queue& q, const Buffer<float>& in, const Buffer<float>& out, std::size_t rows, std::size_t cols) {
  require_valid(q, "transpose", {{"in", in.valid()}, {"out", out.valid()}});
  const std::size_t elements = matrix_elements(q, "transpose", "in", {"rows", rows}, {"cols", cols});
  check_dimensions(q, "transpose", {{"rows", rows}, {"cols", cols}});
  require_size(q, "transpose", "in", in.size(), elements);
  require_size(q, "transpose", "out", out.size(), elements);
  // A group writes the tile that another group reads: no overlap, not even in place.
  check_overlap(q, "transpose", "out", out, "in", in, InPlace::rejected);
  if (rows == 0 || cols == 0) return;
  if (cpu::transpose(q, in, out, rows, cols)) return;  // CPU devices: kernels/cpu.hpp
  // One group per tile x tile block; tile x by work-items each move tile / by rows of it, through a
  // local tile padded by `pad` columns (transpose.gpurt; gpurt-tune-kernels tries other shapes).
  // H200 (gpurt-tune-kernels, 8192^2): 64 x 64 tiles moved by 64 x 4 items, 0.95 (CUDA) and 0.96
  // (NVIDIA OpenCL) of the copy bandwidth; the former 32 x 32 by 32 x 8 made 0.87-0.88.
  constexpr std::size_t tile = 64, by = 4, pad = 1;
  const Dim3 tiles = matrix_groups(q, "transpose", Dim3(cols, rows), Dim3(tile, tile));
  const Kernel k = shaped_kernel(q.device(), "transpose", embedded::transpose, nullptr, "gpurt_transpose", 0,
                                 {{"GPURT_TR_TILE", static_cast<long long>(tile)},
                                  {"GPURT_TR_BY", static_cast<long long>(by)},
                                  {"GPURT_TR_PAD", static_cast<long long>(pad)}})
                       .kernel;
  q.launch(k, LaunchConfig(tiles, Dim3(tile, by)), in, out, static_cast<std::uint32_t>(rows),
           static_cast<std::uint32_t>(cols));
}

namespace {
// That `buffer` is a valid handle of the queue's device (api-guide.md: "a buffer of another device ...
// and a moved-from handle are invalid_argument errors naming the call"). A launch checks this for
// its arguments; a matmul checks it itself, since the vendor path hands the native handles to the
// vendor library and a call with nothing to compute launches nothing at all.
template <class T>
void check_buffer(const Queue& q, const char* call, const char* name, const Buffer<T>& buffer) {
  if (!buffer.valid())
    bad(q, call, std::string(name) + " is not a valid Buffer (default-constructed or moved-from); pass a buffer "
                     "allocated on " + q.device().description());
  const Device where = buffer.device();
  if (where != q.device())
    bad(q, call, std::string(name) + " is a buffer on " + where.description() + ", not on the queue's device " +
                     q.device().description() + "; copy it to this device first");
}

// The checks every matrix multiply makes first: the dimensions and their products, the sizes of
// a, b and c, that each is a buffer of the queue's device, and that c overlaps neither input (its
// groups write c while others still read a and b).
template <class In, class Out>
void check_matmul(const Queue& q, const char* call, const Buffer<In>& a, const Buffer<In>& b, const Buffer<Out>& c,
                  std::size_t m, std::size_t n, std::size_t k) {
  check_buffer(q, call, "a", a);
  check_buffer(q, call, "b", b);
  check_buffer(q, call, "c", c);
  const std::size_t a_elements = matrix_elements(q, call, "a", {"m", m}, {"k", k});
  const std::size_t b_elements = matrix_elements(q, call, "b", {"k", k}, {"n", n});
  const std::size_t c_elements = matrix_elements(q, call, "c", {"m", m}, {"n", n});
  check_dimensions(q, call, {{"m", m}, {"n", n}, {"k", k}});
  require_size(q, call, "a", a.size(), a_elements);
  require_size(q, call, "b", b.size(), b_elements);
  require_size(q, call, "c", c.size(), c_elements);
  check_overlap(q, call, "c", c, "a", a, InPlace::rejected);
  check_overlap(q, call, "c", c, "b", b, InPlace::rejected);
}
}  // namespace

namespace {
// The portable fp32 product (kernels/matmul.gpurt); sizes checked, m, n > 0.
void portable_matmul(Queue& q, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c, std::size_t m,
                     std::size_t n, std::size_t k) {
  // One group of (bn / tn) x (bm / tm) items per bm x bn block of c; the kernel's other choices
  // (MM_BK, MM_VEC, MM_DB) are its defaults, timed against the alternatives by gpurt-tune-matmul.
  // H200 (gpurt-tune-matmul, 4096^3): 128 x 256 blocks, 8 x 16 per item, registers uncapped (MM_MINB 1)
  // 0.90 x cuBLAS SGEMM on CUDA, the same GFLOP/s on NVIDIA OpenCL; 128 x 128 was 0.76-0.80.
  constexpr long long bm = 128, bn = 256, tm = 8, tn = 16;
  const Dim3 blocks = matrix_groups(q, "matmul", Dim3(n, m), Dim3(bn, bm));
  if (k == 0) {
    q.fill(c, 0.0f);
    return;
  }
  if (cpu::matmul(q, a, b, c, m, n, k)) return;  // CPU devices: kernels/cpu.hpp
  const Kernel kern = shaped_kernel(q.device(), "matmul", embedded::matmul, nullptr, "gpurt_matmul", 0,
                                    {{"MM_BM", bm}, {"MM_BN", bn}, {"MM_TM", tm}, {"MM_TN", tn}, {"MM_MINB", 1}})
                          .kernel;
  q.launch(kern, LaunchConfig(blocks, Dim3(bn / tn, bm / tm)), a, b, c,
           static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k));
}

// The products of kernels/matmul_mixed.gpurt: fp64, and TF32/bf16 where the tensor-core kernels do
// not run (`kernel` and `input`, GPURT_MM_INPUT, name the variant); sizes checked.
template <class In, class Out>
void mixed_matmul(Queue& q, const char* call, const char* kernel, long long input, const Buffer<In>& a,
                  const Buffer<In>& b, const Buffer<Out>& c, std::size_t m, std::size_t n, std::size_t k) {
  if (m == 0 || n == 0) return;
  // One 16x16 group per 64x64 block of c.
  const Dim3 blocks = matrix_groups(q, call, Dim3(n, m), Dim3(64, 64));
  if (k == 0) {
    q.fill(c, Out(0));
    return;
  }
  const Kernel kern = shaped_kernel(q.device(), "matmul_mixed", embedded::matmul_mixed, nullptr, kernel, 0,
                                    {{"GPURT_MM_INPUT", input}})
                          .kernel;
  q.launch(kern, LaunchConfig(blocks, Dim3(16, 16)), a, b, c, static_cast<std::uint32_t>(m),
           static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k));
}

// The portable fp64 product; sizes checked, m, n > 0.
void portable_matmul(Queue& q, const Buffer<double>& a, const Buffer<double>& b, const Buffer<double>& c,
                     std::size_t m, std::size_t n, std::size_t k) {
  mixed_matmul(q, "matmul", "gpurt_matmul_fp64", 0, a, b, c, m, n, k);
}
}  // namespace

#ifdef GPURT_HAVE_TENSOR_FATBIN
namespace embedded {
extern const unsigned char matmul_tensor_fatbin[];
extern const std::size_t matmul_tensor_fatbin_size;
}  // namespace embedded
#endif

namespace {
// Whether the device runs the tensor-core kernels: it has tensor cores, its backend loads the
// prebuilt binary they come in (SourceLanguage::cubin), this build has that binary (nvcc was
// found), and the device offers the local memory of their smaller shape. Asked of the device's
// capabilities, never of its backend's name. Elsewhere matmul_tf32/bf16 run matmul_mixed.gpurt.
bool runs_tensor_kernels(const Device& dev) {
  const DeviceProperties& p = dev.properties();
#ifdef GPURT_HAVE_TENSOR_FATBIN
  const bool built = true;
#else
  const bool built = false;
#endif
  return built && p.tensor_cores &&
         std::find(p.languages.begin(), p.languages.end(), SourceLanguage::cubin) != p.languages.end() &&
         static_cast<std::size_t>(std::max(gpurt_tensor::tf32_shapes[1].shared_bytes(),
                                           gpurt_tensor::bf16_shapes[1].shared_bytes())) <= p.max_local_memory;
}

// The tensor-core kernel `name` for the queue's device.
Kernel tensor_kernel(Queue& q, const char* name) {
  const Device dev = q.device();
#ifdef GPURT_HAVE_TENSOR_FATBIN
  const std::string_view fatbin(reinterpret_cast<const char*>(embedded::matmul_tensor_fatbin),
                                embedded::matmul_tensor_fatbin_size);
  return shaped_kernel(dev, "matmul_tensor.fatbin", fatbin, nullptr, name, 0, {}, SourceLanguage::cubin).kernel;
#else
  fail(ErrorCategory::unsupported, dev, name,
       "this gpurt was built without the CUDA toolkit's nvcc, which compiles the tensor-core kernels; "
       "rebuild with the toolkit installed, or use lib::matmul");
#endif
}

// The launch of one tensor-core kernel: its name, block of c, work-items and shared memory, and
// whether it reads A and B^T rounded to TF32 by the pre-passes (matmul_tensor.h).
struct TensorLaunch {
  const char* kernel;
  std::size_t bm, bn, threads, shared;
  bool transposed_b;
};

// The kernel tensor_matmul runs on `dev`: on a device of architecture sm_90 (compute capability
// 9.0, where the fatbin's sm_90a code runs) the Hopper kernel of gpurt_tensor::hopper when there
// is one for this precision and the device offers its shared memory; otherwise the deepest k-tile
// of the mma.sync shapes whose shared memory the device offers (matmul_tensor.h).
// `hopper_allowed` false: the mma.sync shape even on sm_90 (when the B^T kernel's scratch cannot be had).
template <class In>
TensorLaunch tensor_launch(const Device& dev, bool hopper_allowed = true) {
  const DeviceProperties& p = dev.properties();
  const char* hopper = sizeof(In) == 4 ? gpurt_tensor::hopper.tf32 : gpurt_tensor::hopper.bf16;
  if (hopper && hopper_allowed && p.architecture == "sm_90") {
    const gpurt_tensor::Variant* v = gpurt_tensor::find_variant(hopper);
    if (v && static_cast<std::size_t>(v->shared_bytes) <= p.max_local_memory)
      return {v->kernel,      std::size_t(v->bm),           std::size_t(v->bn), std::size_t(v->threads),
              std::size_t(v->shared_bytes), v->transposed_b};
  }
  const auto& shapes = sizeof(In) == 4 ? gpurt_tensor::tf32_shapes : gpurt_tensor::bf16_shapes;
  const gpurt_tensor::BlockShape& s =
      static_cast<std::size_t>(shapes[0].shared_bytes()) <= p.max_local_memory ? shapes[0] : shapes[1];
  return {s.kernel, std::size_t(s.bm), std::size_t(s.bn), std::size_t(s.threads()), std::size_t(s.shared_bytes()), false};
}

// The tensor-core TF32/bf16 product (sizes checked), on a device where runs_tensor_kernels().
template <class In>
void tensor_matmul(Queue& q, const char* name, const Buffer<In>& a, const Buffer<In>& b, const Buffer<float>& c,
                   std::size_t m, std::size_t n, std::size_t k) {
  // One group per shape.bm x shape.bn block of c, numbered in one dimension (the kernels order
  // them in bands for L2).
  const std::size_t offered = q.device().properties().max_local_memory;
  TensorLaunch shape = tensor_launch<In>(q.device());
  const std::size_t groups = ((m + shape.bm - 1) / shape.bm) * ((n + shape.bn - 1) / shape.bn);
  if (groups > q.device().properties().max_groups.x)
    bad(q, name, std::to_string(m) + " x " + std::to_string(n) + " needs " + std::to_string(groups) + " blocks of " +
                     std::to_string(shape.bm) + " x " + std::to_string(shape.bn) +
                     ", more than the device launches at once; split c into row bands");
  const std::size_t shared = shape.shared;
  if (shared > offered)
    fail(ErrorCategory::unsupported, q.device(), name,
         "the tensor-core kernel needs " + std::to_string(shared) + " bytes of local memory per group; " +
             q.device().description() + " offers " + std::to_string(offered) + "; use lib::matmul");
  if (m == 0 || n == 0) {
    tensor_kernel(q, shape.kernel);  // a device that cannot run it says so for every size
    return;
  }
  if (k == 0) {
    tensor_kernel(q, shape.kernel);
    q.fill(c, 0.0f);
    return;
  }
  if constexpr (sizeof(In) == 4) {
    if (shape.transposed_b) {
      // The pre-passes write A and B^T rounded to TF32 into the queue's scratch (kept for later calls);
      // where that memory cannot be had, the mma.sync kernel, which needs none.
      ScratchLease scratch(q);
      bool have = true;
      try {
        // Both made before either replaces the queue's (which lives until the queue's work is done):
        // where one cannot be had, the scratch is left as it was.
        Buffer<float> fresh_a, fresh_bt;
        if (scratch->tf32_a.size() < m * k) fresh_a = q.device().alloc<float>(m * k);
        if (scratch->tf32_bt.size() < n * k) fresh_bt = q.device().alloc<float>(n * k);
        auto replace = [&](Buffer<float>& held, Buffer<float>& fresh) {
          if (!fresh.valid()) return;
          if (!held.empty()) q.keep_until_finished(std::make_shared<const Buffer<float>>(std::move(held)));
          held = std::move(fresh);
        };
        replace(scratch->tf32_a, fresh_a);
        replace(scratch->tf32_bt, fresh_bt);
      } catch (const Error& e) {
        if (e.category() != ErrorCategory::out_of_device_memory) throw;
        have = false;
      }
      if (have) {
        const Kernel round = tensor_kernel(q, gpurt_tensor::round_kernel);
        const Kernel round_bt = tensor_kernel(q, gpurt_tensor::round_bt_kernel);
        const Kernel kern = tensor_kernel(q, shape.kernel);
        const std::size_t elems = m * k, wave = 4 * q.device().properties().compute_units;
        q.launch(round, LaunchConfig(Dim3(std::max<std::size_t>(1, std::min((elems + 255) / 256, wave * 8))), Dim3(256)),
                 a, scratch->tf32_a, static_cast<std::uint64_t>(elems));
        q.launch(round_bt, LaunchConfig(Dim3(((n + 31) / 32) * ((k + 31) / 32)), Dim3(256)), b, scratch->tf32_bt,
                 static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n));
        q.launch(kern, LaunchConfig(Dim3(groups), Dim3(shape.threads), shared), scratch->tf32_a, scratch->tf32_bt, c,
                 static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k));
        return;
      }
      shape = tensor_launch<In>(q.device(), false);
    }
  }
  const std::size_t fallback_groups = ((m + shape.bm - 1) / shape.bm) * ((n + shape.bn - 1) / shape.bn);
  q.launch(tensor_kernel(q, shape.kernel), LaunchConfig(Dim3(fallback_groups), Dim3(shape.threads), shape.shared), a, b,
           c, static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k));
}
}  // namespace

// ---- Which implementation a matmul runs (library.hpp: "Matrix multiply").
namespace {
// GPURT_VENDOR_LIBRARIES, read on every call that defers to it (a getenv: cheap beside a matmul).
VendorLibraries environment_choice(const Device& dev, const char* call) {
  const char* v = std::getenv("GPURT_VENDOR_LIBRARIES");
  if (!v || !*v) return VendorLibraries::automatic;
  std::string s(v);
  const auto first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t");
  s = first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
  for (char& ch : s) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  // The rule every GPURT_* switch follows (README, "Environment"; core/src/startup/env.cpp).
  if (s == "auto") return VendorLibraries::automatic;
  if (s == "on" || s == "1" || s == "true") return VendorLibraries::on;
  if (s == "off" || s == "0" || s == "false") return VendorLibraries::off;
  fail(ErrorCategory::invalid_argument, dev, call,
       std::string("GPURT_VENDOR_LIBRARIES='") + v +
           "' is not a setting; expected auto, on or off (on may also be written 1 or true, off 0 or false; in "
           "any case)");
}

Implementation choose(const Device& dev, const char* call, Precision precision, Options options) {
  if (precision == Precision::fp64 && !dev.properties().fp64)
    fail(ErrorCategory::unsupported, dev, call,
         "an fp64 matmul needs fp64, which " + dev.description() + " lacks (DeviceProperties::fp64); use float");
  VendorLibraries choice = options.vendor;
  if (choice == VendorLibraries::from_environment) choice = environment_choice(dev, call);
  if (choice == VendorLibraries::off) return Implementation::portable;
  std::string why;
  if (vendor::covers(dev, precision, why)) return Implementation::vendor;
  if (choice == VendorLibraries::on)
    fail(ErrorCategory::unsupported, dev, call,
         std::string("the vendor library was required (") +
             (options.vendor == VendorLibraries::on ? "Options::vendor = VendorLibraries::on" : "GPURT_VENDOR_LIBRARIES=on") +
             ") but cannot run a " + to_string(precision) + " matmul on " + dev.description() + ": " + why +
             "; install it, or allow the portable kernels (auto or off)");
  return Implementation::portable;
}

// The checks, the choice, then the vendor call or `portable` (m, n > 0 only).
template <class In, class Out, class Portable>
Implementation run_matmul(Queue& q, const char* call, Precision precision, const Buffer<In>& a, const Buffer<In>& b,
                          const Buffer<Out>& c, std::size_t m, std::size_t n, std::size_t k, Options options,
                          Portable&& portable) {
  check_matmul(q, call, a, b, c, m, n, k);
  const Implementation impl = choose(q.device(), call, precision, options);
  if (impl == Implementation::portable) {
    portable();
    return impl;
  }
  if (m == 0 || n == 0) return impl;
  if (k == 0) {
    q.fill(c, Out(0));
    return impl;
  }
  vendor::gemm(q, vendor::GemmArgs{precision, native_handle(a), native_handle(b), native_handle(c), m, n, k});
  return impl;
}
}  // namespace

const char* to_string(Implementation implementation) noexcept {
  return implementation == Implementation::vendor ? "vendor" : "portable";
}

const char* to_string(Precision precision) noexcept {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp64: return "fp64";
  }
  return "?";
}

VendorLibraryInfo vendor_library(const Device& device) { return vendor::info(device); }

Implementation matmul_implementation(const Device& device, Precision precision, Options options) {
  return choose(device, "matmul_implementation", precision, options);
}

Implementation matmul(Queue& q, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c, std::size_t m,
                      std::size_t n, std::size_t k, Options options) {
  return run_matmul(q, "matmul", Precision::fp32, a, b, c, m, n, k, options, [&] {
    if (m != 0 && n != 0) portable_matmul(q, a, b, c, m, n, k);
  });
}

Implementation matmul(Queue& q, const Buffer<double>& a, const Buffer<double>& b, const Buffer<double>& c,
                      std::size_t m, std::size_t n, std::size_t k, Options options) {
  return run_matmul(q, "matmul", Precision::fp64, a, b, c, m, n, k, options, [&] {
    if (m != 0 && n != 0) portable_matmul(q, a, b, c, m, n, k);
  });
}

Implementation matmul_tf32(Queue& q, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c,
                           std::size_t m, std::size_t n, std::size_t k, Options options) {
  return run_matmul(q, "matmul_tf32", Precision::tf32, a, b, c, m, n, k, options, [&] {
    if (runs_tensor_kernels(q.device())) tensor_matmul(q, "matmul_tf32", a, b, c, m, n, k);
    else mixed_matmul(q, "matmul_tf32", "gpurt_matmul_tf32_portable", 1, a, b, c, m, n, k);
  });
}

Implementation matmul_bf16(Queue& q, const Buffer<std::uint16_t>& a, const Buffer<std::uint16_t>& b,
                           const Buffer<float>& c, std::size_t m, std::size_t n, std::size_t k, Options options) {
  return run_matmul(q, "matmul_bf16", Precision::bf16, a, b, c, m, n, k, options, [&] {
    if (runs_tensor_kernels(q.device())) tensor_matmul(q, "matmul_bf16", a, b, c, m, n, k);
    else mixed_matmul(q, "matmul_bf16", "gpurt_matmul_bf16_portable", 2, a, b, c, m, n, k);
  });
}

// The host types' conversions (<gpurt/types.hpp>): round to nearest even, NaN kept quiet.
std::uint16_t to_bf16(float x) { return gpurt::bfloat16(x).bits(); }

float from_bf16(std::uint16_t x) { return static_cast<float>(gpurt::bfloat16::from_bits(x)); }

void conv2d(Queue& q, const Buffer<float>& in, const Buffer<float>& filter, const Buffer<float>& out,
            std::size_t width, std::size_t height, std::size_t filter_size) {
  require_valid(q, "conv2d", {{"in", in.valid()}, {"filter", filter.valid()}, {"out", out.valid()}});
  if (filter_size % 2 == 0 || filter_size > 15)
    bad(q, "conv2d", "the filter size must be odd and at most 15, got " + std::to_string(filter_size));
  require_size(q, "conv2d", "filter", filter.size(), filter_size * filter_size);
  const std::size_t elements = matrix_elements(q, "conv2d", "in", {"width", width}, {"height", height});
  check_dimensions(q, "conv2d", {{"width", width}, {"height", height}});
  require_size(q, "conv2d", "in", in.size(), elements);
  require_size(q, "conv2d", "out", out.size(), elements);
  // Groups read a halo that neighbouring groups write: no overlap, not even in place.
  check_overlap(q, "conv2d", "out", out, "in", in, InPlace::rejected);
  check_overlap(q, "conv2d", "out", out, "filter", filter, InPlace::rejected);
  if (width == 0 || height == 0) return;
  if (cpu::conv2d(q, in, filter, out, width, height, filter_size)) return;  // CPU devices: kernels/cpu.hpp
  // One program per filter size: the size is a build-time constant, so the kernel's loops unroll.
  // One GX x GY group per GX x (GY * RY) block of the output; each work-item computes RY rows.
  // Up to 7x7 the kernel reads the input from global memory (measured on the H200, 8192^2 5x5:
  // 64 x 2 x 16 rows the best of 6 shapes, 0.69 of copy bandwidth on both backends); larger filters
  // are compute-bound, read a tile from local memory and unroll into long code: 32 x 4 x 8 rows.
  // On the direct path each work-item may also compute rx outputs side by side (GPURT_CONV_RX).
  const bool direct = filter_size <= 7;
  // H200 (gpurt-tune-kernels, 8192^2 5x5): two outputs side by side per item (rx 2) lift the direct
  // path from 0.72 to 0.81-0.82 of the copy bandwidth on both backends.
  const std::size_t gx = direct ? 64 : 32, gy = direct ? 2 : 4, ry = direct ? 16 : 8, rx = direct ? 2 : 1;
  const Dim3 blocks = matrix_groups(q, "conv2d", Dim3(width, height), Dim3(gx * rx, gy * ry));
  const Kernel k = shaped_kernel(q.device(), "conv2d", embedded::conv2d, nullptr, "gpurt_conv2d", 0,
                                 {{"GPURT_FSIZE", static_cast<long long>(filter_size)},
                                  {"GPURT_CONV_GX", static_cast<long long>(gx)},
                                  {"GPURT_CONV_GY", static_cast<long long>(gy)},
                                  {"GPURT_CONV_RX", static_cast<long long>(rx)},
                                  {"GPURT_CONV_RY", static_cast<long long>(ry)}})
                       .kernel;
  q.launch(k, LaunchConfig(blocks, Dim3(gx, gy)), in,
           filter, out, static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(height));
}

namespace {
// histogram of 32- or 64-bit keys (`key`: the kernel's GPURT_HIST_KEY).
template <class Key>
void histogram_of(Queue& q, const Buffer<Key>& in, const Buffer<std::uint32_t>& counts, const char* key) {
  require_valid(q, "histogram", {{"in", in.valid()}, {"counts", counts.valid()}});
  if (counts.empty()) bad(q, "histogram", "counts is empty; give it one element per bin");
  // The counting runs over all of in while counts may be written: no overlap, not even in place.
  check_overlap(q, "histogram", "counts", counts, "in", in, InPlace::rejected);
  if (counts.size_bytes() > q.device().properties().max_local_memory / 2)
    bad(q, "histogram", std::to_string(counts.size()) + " bins do not fit the device's local memory (" +
                            std::to_string(q.device().properties().max_local_memory) + " bytes); use fewer bins");
  // counts is written by one command alone (library.hpp, "Threads": each call's work is enqueued
  // whole), so that work another thread enqueues on the queue between this call's commands never
  // finds it half done - zeroed, not yet counted.
  if (in.empty()) {
    q.fill(counts, 0u);
    return;
  }
  if constexpr (std::is_same<Key, std::uint32_t>::value)
    if (cpu::histogram(q, in, counts)) return;  // CPU devices: kernels/cpu.hpp (its last launch writes every bin)
  // The bins sit in local memory, so the wave depends on their number. Up to 8 private copies per
  // group (one per warp of a 256-group), as many as fit half the local memory, and 8 loads in
  // flight per work-item (H200, 64M keys: 0.94 CUDA, 0.97 NVIDIA OpenCL of the copy bandwidth; one
  // copy, one load made 0.55) (histogram.gpurt: GPURT_HIST_COPIES, GPURT_HIST_UNROLL).
  std::size_t copies = 8;
  while (copies > 1 && counts.size_bytes() * copies > q.device().properties().max_local_memory / 2) copies /= 2;
  const std::size_t local = counts.size_bytes() * copies;
  const ShapedKernel k = shaped_kernel(q.device(), "histogram", embedded::histogram, nullptr, "gpurt_histogram", 0,
                                       {{"GPURT_HIST_COPIES", static_cast<long long>(copies)}, {"GPURT_HIST_UNROLL", 8},
                                        {"GPURT_HIST_KEY", 0, key}},
                                       SourceLanguage::portable, local);
  // The groups add into the queue's histogram scratch, zeroed first; one copy then moves it into
  // counts. The lease keeps another thread's histogram on this queue from using the scratch between.
  ScratchLease scratch(q);
  ensure_scratch(q, scratch->histogram, (counts.size() + 1) / 2);
  const Buffer<std::uint32_t> bins = scratch->histogram.as<std::uint32_t>().view(0, counts.size());
  q.fill(bins, 0u);
  q.launch(k.kernel, stride_config(q, k, in.size(), local), in, bins, static_cast<std::uint64_t>(in.size()),
           static_cast<std::uint32_t>(counts.size()));
  q.copy(bins, counts);
}
}  // namespace

void histogram(Queue& q, const Buffer<std::uint32_t>& in, const Buffer<std::uint32_t>& counts) {
  histogram_of(q, in, counts, "uint32_t");
}

void histogram(Queue& q, const Buffer<std::uint64_t>& in, const Buffer<std::uint32_t>& counts) {
  histogram_of(q, in, counts, "uint64_t");
}

#define GPURT_LIB_INSTANTIATE(T)                                                         \
  template void fill<T>(Queue&, const Buffer<T>&, Scalar<T>);                            \
  template void copy<T>(Queue&, const Buffer<T>&, const Buffer<T>&);                     \
  template void axpy<T>(Queue&, Scalar<T>, const Buffer<T>&, const Buffer<T>&);          \
  template void binary<T>(Queue&, BinaryOp, const Buffer<T>&, const Buffer<T>&, const Buffer<T>&); \
  template T reduce<T>(Queue&, ReduceOp, const Buffer<T>&);                              \
  template void reduce<T>(Queue&, ReduceOp, const Buffer<T>&, const Buffer<T>&);         \
  template void scan<T>(Queue&, const Buffer<T>&, const Buffer<T>&, ScanKind);
GPURT_LIB_INSTANTIATE(std::int32_t)
GPURT_LIB_INSTANTIATE(std::uint32_t)
GPURT_LIB_INSTANTIATE(float)
GPURT_LIB_INSTANTIATE(double)
#undef GPURT_LIB_INSTANTIATE

}  // namespace gpurt::lib
