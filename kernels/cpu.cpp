// CPU-device variants of the library's calls: launch shapes and the per-queue scratch of reduce and
// scan (cpu.hpp says how the variants are chosen and shaped).
#include "cpu.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "embedded_kernels.hpp"
#include "gpurt/device.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/program.hpp"

namespace gpurt::lib::cpu {

namespace {

// Work-items per compute unit for the streaming kernels. Measured on PoCL (2 cores, axpy on 1 M
// floats, best of 15): 2, 4, 8 and 16 per unit alike (0.09 ms, against 0.12 ms for the naive
// kernel); 1 per unit leaves the call waiting on its slowest core, and more, smaller chunks let a
// core that is busy elsewhere hand its share to the others.
constexpr std::size_t chunks_per_unit = 8;
// The smallest chunk worth a work-item of its own (elements), and the most chunks in a call (the
// scratch holds one partial result per chunk).
constexpr std::size_t min_chunk = 8192;
constexpr std::size_t max_chunks = 256;

template <class T> const char* type_name();
template <> const char* type_name<std::int32_t>() { return "int"; }
template <> const char* type_name<std::uint32_t>() { return "uint"; }
template <> const char* type_name<float>() { return "float"; }
template <> const char* type_name<double>() { return "double"; }

// A kernel of the CPU sources, built once per (device, source, element type, defines) for the process.
Kernel cpu_kernel(const Device& dev, const char* source_name, const char* source, const char* type, const char* name,
                  const char* define = nullptr, long long value = 0) {
  static std::mutex mutex;
  static std::map<std::tuple<Device, std::string, std::string, std::string>, Kernel> kernels;
  std::string variant = type ? type : "";
  if (define) variant += std::string(" ") + define + "=" + std::to_string(value);
  const auto key = std::make_tuple(dev, std::string(source_name), std::string(name), variant);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernels.find(key);
    if (it != kernels.end()) return it->second;
  }
  BuildOptions options;
  if (type) options.defines.push_back({"GPURT_T", type});
  if (define) options.defines.push_back({define, std::to_string(value)});
  const Kernel k =
      dev.build({SourceLanguage::portable, source, std::string(source_name) + ".gpurt"}, options).kernel(name);
  std::lock_guard<std::mutex> lock(mutex);
  return kernels.emplace(key, k).first->second;
}

template <class T>
Kernel stream_kernel(const Queue& q, const char* name, int reduce_op = 0) {
  return cpu_kernel(q.device(), "cpu_stream", embedded::cpu_stream, type_name<T>(), name, "GPURT_REDUCE_OP", reduce_op);
}

Kernel matrix_kernel(const Queue& q, const char* name, long long filter_size = 0) {
  return cpu_kernel(q.device(), "cpu_matrix", embedded::cpu_matrix, nullptr, name,
                    filter_size ? "GPURT_FSIZE" : nullptr, filter_size);
}

// The split of n elements into contiguous chunks: `items` work-items of `chunk` elements (a
// multiple of 16, so that chunks start on vector boundaries), the last one shorter.
struct Chunks {
  std::size_t items;
  std::size_t chunk;
};

Chunks chunks_of(const Queue& q, std::size_t n) {
  const std::size_t units = std::max<std::size_t>(1, q.device().properties().compute_units);
  const std::size_t wanted = std::min({units * chunks_per_unit, max_chunks, (n + min_chunk - 1) / min_chunk});
  const std::size_t items = std::max<std::size_t>(1, wanted);
  const std::size_t chunk = ((n + items - 1) / items + 15) / 16 * 16;
  return {(n + chunk - 1) / chunk, chunk};
}

LaunchConfig items_config(std::size_t items) { return LaunchConfig(Dim3(items), Dim3(1)); }

// Whether a call that reads and writes `bytes` in all stores around the caches (cpu_stream.gpurt:
// GPURT_STORE_LOOP). Measured on PoCL with binary(add) (AMD EPYC VM, 2 cores, 32 MiB of cache per
// core complex as PoCL reports it): plain stores 10 % faster at 24 MiB, non-temporal stores 20-25 %
// faster from 48 MiB (0.71 against 0.85 ms at 4 M floats, 18 against 22 ms at 64 M). The host's
// own cache size is no guide (a VM reports the whole socket's 320 MiB), so the line is fixed.
constexpr std::size_t nontemporal_bytes = std::size_t(32) << 20;
int nontemporal(std::size_t bytes) { return bytes > nontemporal_bytes ? 1 : 0; }

// The partial results of reduce and scan on one queue (max_chunks values of up to 8 bytes), made
// on the queue's first such call and owned by the queue (Queue::keep_until_destroyed), so that
// later calls allocate nothing. `mutex` is held while a call enqueues its two launches, which keeps
// calls from several threads on one queue whole.
struct Partials {
  std::mutex mutex;
  Buffer<std::uint64_t> words;
};

std::shared_ptr<Partials> partials_of(Queue& q) {
  static std::mutex mutex;
  static std::map<std::uint64_t, std::weak_ptr<Partials>> registry;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = registry.find(q.id());
  if (it != registry.end())
    if (std::shared_ptr<Partials> p = it->second.lock()) return p;
  for (auto e = registry.begin(); e != registry.end();) e = e->second.expired() ? registry.erase(e) : std::next(e);
  auto p = std::make_shared<Partials>();
  p->words = q.device().alloc<std::uint64_t>(max_chunks);
  q.keep_until_destroyed(p);
  registry[q.id()] = p;
  return p;
}

template <class T>
bool usable(const Queue& q) {
  const Device dev = q.device();  // held: g++ 13 cannot tell the properties outlive a temporary handle
  const DeviceProperties& p = dev.properties();
  // double without fp64: the caller's path reports it.
  return p.type == DeviceType::cpu && (sizeof(T) < 8 || p.fp64);
}

}  // namespace

bool runs_on(const Device& device) { return device.properties().type == DeviceType::cpu; }

template <class T>
bool copy(Queue& q, const Buffer<T>& src, const Buffer<T>& dst) {
  if (!usable<T>(q)) return false;
  // A copy between devices is the queue's (Queue::copy relays it); a kernel takes only this device's.
  if (src.device() != q.device() || dst.device() != q.device()) return false;
  if (src.offset_bytes() == dst.offset_bytes() && src.overlaps(dst)) return true;  // dst is src itself
  const Chunks c = chunks_of(q, src.size());
  q.launch(stream_kernel<T>(q, "gpurt_copy"), items_config(c.items), src, dst,
           static_cast<std::uint64_t>(src.size()), static_cast<std::uint64_t>(c.chunk),
           nontemporal(2 * src.size() * sizeof(T)));
  return true;
}

template <class T>
bool fill(Queue& q, const Buffer<T>& dst, T value) {
  if (!usable<T>(q)) return false;
  const Chunks c = chunks_of(q, dst.size());
  q.launch(stream_kernel<T>(q, "gpurt_fill"), items_config(c.items), dst, value,
           static_cast<std::uint64_t>(dst.size()), static_cast<std::uint64_t>(c.chunk),
           nontemporal(dst.size() * sizeof(T)));
  return true;
}

template <class T>
bool axpy(Queue& q, T a, const Buffer<T>& x, const Buffer<T>& y) {
  if (!usable<T>(q)) return false;
  const Chunks c = chunks_of(q, x.size());
  q.launch(stream_kernel<T>(q, "gpurt_axpy"), items_config(c.items), a, x, y,
           static_cast<std::uint64_t>(x.size()), static_cast<std::uint64_t>(c.chunk));
  return true;
}

template <class T>
bool binary(Queue& q, BinaryOp op, const Buffer<T>& a, const Buffer<T>& b, const Buffer<T>& out) {
  if (!usable<T>(q)) return false;
  const Chunks c = chunks_of(q, a.size());
  q.launch(stream_kernel<T>(q, "gpurt_binary"), items_config(c.items), a, b, out,
           static_cast<std::uint64_t>(a.size()), static_cast<std::uint64_t>(c.chunk), static_cast<int>(op),
           nontemporal(3 * a.size() * sizeof(T)));
  return true;
}

template <class T>
bool reduce(Queue& q, ReduceOp op, const Buffer<T>& in, const Buffer<T>& result, T identity) {
  if (!usable<T>(q)) return false;
  const Chunks c = chunks_of(q, in.size());
  const int code = static_cast<int>(op);  // 0 sum, 1 min, 2 max, as GPURT_REDUCE_OP
  const Kernel chunks = stream_kernel<T>(q, "gpurt_reduce_chunks", code);
  const Kernel finish = stream_kernel<T>(q, "gpurt_reduce_finish", code);
  const std::shared_ptr<Partials> p = partials_of(q);
  std::lock_guard<std::mutex> lock(p->mutex);
  q.launch(chunks, items_config(c.items), in, static_cast<std::uint64_t>(in.size()),
           static_cast<std::uint64_t>(c.chunk), identity, p->words);
  q.launch(finish, items_config(1), p->words, static_cast<std::uint32_t>(c.items), identity, result);
  return true;
}

template <class T>
bool scan(Queue& q, const Buffer<T>& in, const Buffer<T>& out, bool exclusive) {
  if (!usable<T>(q)) return false;
  const Chunks c = chunks_of(q, in.size());
  const Kernel sums = stream_kernel<T>(q, "gpurt_scan_totals", 0);
  const Kernel chunks = stream_kernel<T>(q, "gpurt_scan_chunks", 0);
  const std::shared_ptr<Partials> p = partials_of(q);
  std::lock_guard<std::mutex> lock(p->mutex);
  q.launch(sums, items_config(c.items), in, static_cast<std::uint64_t>(in.size()), static_cast<std::uint64_t>(c.chunk),
           p->words);
  q.launch(chunks, items_config(c.items), in, out, static_cast<std::uint64_t>(in.size()),
           static_cast<std::uint64_t>(c.chunk), exclusive ? 1 : 0, p->words);
  return true;
}

// Each chunk counts into its own row of a scratch buffer (the rows together at most
// histogram_words, so fewer chunks for many bins), then the rows are summed per bin.
bool histogram(Queue& q, const Buffer<std::uint32_t>& in, const Buffer<std::uint32_t>& counts) {
  if (!runs_on(q.device())) return false;
  constexpr std::size_t histogram_words = std::size_t(1) << 20;
  const std::size_t bins = counts.size();
  Chunks c = chunks_of(q, in.size());
  if (c.items * bins > histogram_words) {
    const std::size_t items = std::max<std::size_t>(1, histogram_words / bins);
    c.chunk = ((in.size() + items - 1) / items + 15) / 16 * 16;
    c.items = (in.size() + c.chunk - 1) / c.chunk;
  }
  auto parts = std::make_shared<Buffer<std::uint32_t>>(q.device().alloc<std::uint32_t>(c.items * bins));
  q.launch(stream_kernel<std::uint32_t>(q, "gpurt_histogram_chunks"), items_config(c.items), in,
           static_cast<std::uint64_t>(in.size()), static_cast<std::uint64_t>(c.chunk), *parts,
           static_cast<std::uint32_t>(bins));
  const Chunks merge = chunks_of(q, bins);
  q.launch(stream_kernel<std::uint32_t>(q, "gpurt_histogram_merge"), items_config(merge.items), *parts,
           static_cast<std::uint32_t>(c.items), static_cast<std::uint32_t>(bins),
           static_cast<std::uint64_t>(merge.chunk), counts);
  q.keep_until_finished(std::shared_ptr<const void>(parts));
  return true;
}

bool transpose(Queue& q, const Buffer<float>& in, const Buffer<float>& out, std::size_t rows, std::size_t cols) {
  if (!runs_on(q.device())) return false;
  const std::size_t bands = (rows + 31) / 32;  // TBAND in cpu_matrix.gpurt
  if (bands > q.device().properties().max_groups.x) return false;  // the caller's path says why
  q.launch(matrix_kernel(q, "gpurt_transpose"), items_config(bands), in, out, static_cast<std::uint32_t>(rows),
           static_cast<std::uint32_t>(cols));
  return true;
}

bool conv2d(Queue& q, const Buffer<float>& in, const Buffer<float>& filter, const Buffer<float>& out, std::size_t width,
            std::size_t height, std::size_t filter_size) {
  if (!runs_on(q.device())) return false;
  const std::size_t units = std::max<std::size_t>(1, q.device().properties().compute_units);
  const std::size_t bands = chunks_per_unit * units;
  const std::size_t band = std::max<std::size_t>(1, (height + bands - 1) / bands);
  q.launch(matrix_kernel(q, "gpurt_conv2d", static_cast<long long>(filter_size)),
           items_config((height + band - 1) / band), in, filter, out, static_cast<std::uint32_t>(width),
           static_cast<std::uint32_t>(height), static_cast<std::uint32_t>(band));
  return true;
}

bool matmul(Queue& q, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c, std::size_t m,
            std::size_t n, std::size_t k) {
  if (!runs_on(q.device())) return false;
  const std::size_t blocks = ((m + 3) / 4) * ((n + 63) / 64);  // MR x NB in cpu_matrix.gpurt
  if (blocks > q.device().properties().max_groups.x) return false;  // the caller's path says why
  q.launch(matrix_kernel(q, "gpurt_matmul"), items_config(blocks), a, b, c, static_cast<std::uint32_t>(m),
           static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k));
  return true;
}

#define GPURT_CPU_INSTANTIATE(T)                                                                    \
  template bool copy<T>(Queue&, const Buffer<T>&, const Buffer<T>&);                                \
  template bool fill<T>(Queue&, const Buffer<T>&, T);                                               \
  template bool axpy<T>(Queue&, T, const Buffer<T>&, const Buffer<T>&);                             \
  template bool binary<T>(Queue&, BinaryOp, const Buffer<T>&, const Buffer<T>&, const Buffer<T>&); \
  template bool reduce<T>(Queue&, ReduceOp, const Buffer<T>&, const Buffer<T>&, T);                 \
  template bool scan<T>(Queue&, const Buffer<T>&, const Buffer<T>&, bool);
GPURT_CPU_INSTANTIATE(std::int32_t)
GPURT_CPU_INSTANTIATE(std::uint32_t)
GPURT_CPU_INSTANTIATE(float)
GPURT_CPU_INSTANTIATE(double)
#undef GPURT_CPU_INSTANTIATE

}  // namespace gpurt::lib::cpu
