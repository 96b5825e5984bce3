// The library's row-wise calls: softmax_rows and layer_norm_rows (kernels/rows.gpurt; library.hpp
// says what each computes).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "embedded_kernels.hpp"
#include "gpurt/buffer.hpp"
#include "gpurt/error.hpp"
#include "gpurt/library.hpp"
#include "gpurt/native.hpp"
#include "gpurt/types.hpp"
#include "library_support.hpp"

namespace gpurt::lib {

using namespace support;

namespace {

// The element type's GPURT_ROWS_STORAGE (kernels/rows.gpurt).
template <class T> constexpr long long storage_of();
template <> constexpr long long storage_of<float>() { return 0; }
template <> constexpr long long storage_of<half>() { return 1; }
template <> constexpr long long storage_of<bfloat16>() { return 2; }

struct RowsShape {
  Kernel kernel;
  LaunchConfig config;
};

// Rows of up to 32 x the sub-group size (1,024 columns on CUDA and NVIDIA's OpenCL, 32 on a device
// of single-item sub-groups) go to the `_in_registers` kernel: a sub-group per row, each lane
// holding per_lane columns (the least power of two that covers the row: one program each), 128
// work-items a group (whole sub-groups). Only where the device reports one sub-group size, which
// is then the size the kernel runs with. Longer rows: one group per row at a time, as many groups
// as rows up to what the device runs at once (the kernels loop over the rows beyond); 256
// work-items a group, fewer for short rows (down to 32: a group's items stride over the row, so
// short rows leave most of a large group idle). The group size is a build-time constant (it sizes
// the collectives' scratch): one program each.
// `vec`: for 16-bit elements, the most neighbouring columns (2, 4 or 8) the register kernel may
// move as one 4-, 8- or 16-byte access (GPURT_ROWS_VEC: the row length and every matrix's element
// offset are multiples of it; 1 for none); rows of exactly w x per_lane columns skip the row-end
// tests (GPURT_ROWS_EXACT).
template <class T>
RowsShape rows_shape(const Queue& q, const char* group_kernel, const char* register_kernel, std::size_t rows,
                     std::size_t cols, std::size_t vec) {
  const Device dev = q.device();
  const DeviceProperties& p = dev.properties();
  const std::size_t w = p.sub_group_sizes.size() == 1 ? p.sub_group_sizes[0] : 0;
  if (w != 0 && cols <= 32 * w) {
    long long per_lane = static_cast<long long>(vec);
    while (static_cast<std::size_t>(per_lane) * w < cols) per_lane *= 2;
    const bool exact = static_cast<std::size_t>(per_lane) * w == cols;
    const std::size_t group = std::max<std::size_t>(w, 128);
    const ShapedKernel k = shaped_kernel(q.device(), "rows", embedded::rows, nullptr, register_kernel, 0,
                                         {{"GPURT_ROWS_GROUP", static_cast<long long>(group)},
                                          {"GPURT_ROWS_STORAGE", storage_of<T>()},
                                          {"GPURT_ROWS_PER_LANE", per_lane},
                                          {"GPURT_ROWS_VEC", static_cast<long long>(vec)},
                                          {"GPURT_ROWS_EXACT", exact ? 1 : 0}});
    const std::size_t items = std::min(group, k.group);
    if (items % w == 0) {
      const std::size_t per_group = items / w;
      const std::size_t groups = std::max<std::size_t>(
          1, std::min({(rows + per_group - 1) / per_group, k.wave * 8, static_cast<std::size_t>(p.max_groups.x)}));
      return {k.kernel, LaunchConfig(Dim3(groups), Dim3(items))};
    }
  }
  std::size_t group = 32;
  while (group < 256 && group < cols) group *= 2;
  const ShapedKernel k = shaped_kernel(q.device(), "rows", embedded::rows, nullptr, group_kernel, 0,
                                       {{"GPURT_ROWS_GROUP", static_cast<long long>(group)},
                                        {"GPURT_ROWS_STORAGE", storage_of<T>()}});
  const std::size_t items = std::min(group, k.group);  // k.group: the most the kernel allows, a power of two
  const std::size_t groups =
      std::max<std::size_t>(1, std::min({rows, k.wave * 8, static_cast<std::size_t>(p.max_groups.x)}));
  return {k.kernel, LaunchConfig(Dim3(groups), Dim3(items))};
}

// Where the first element of `b` lies on the device, modulo 16 bytes: on CUDA the native pointer
// (an imported CUdeviceptr may start anywhere), elsewhere the view's offset in its allocation
// (OpenCL allocations start at CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128 bytes; a backend without
// native buffers: its own allocations, taken as aligned alike).
template <class T>
std::size_t start_mod16(const Buffer<T>& b) {
  std::uint64_t start = b.offset_bytes();
  try {
    const NativeHandle h = native_handle(b);
    if (h.backend == "cuda") start += h.handle;
  } catch (const Error&) {
  }
  return static_cast<std::size_t>(start % 16);
}

// The widest access (in elements: 8, 4, 2, or 1 for none) that a row of `cols` 16-bit elements
// and every matrix's start allow (kernels/rows.gpurt, GPURT_ROWS_VEC); 1 for float.
template <class T, class... Buffers>
std::size_t rows_vec(std::size_t cols, const Buffers&... matrices) {
  if (sizeof(T) != 2) return 1;
  const std::size_t starts[] = {start_mod16(matrices)...};
  for (std::size_t vec : {8, 4, 2}) {
    bool ok = cols % vec == 0;
    for (std::size_t o : starts) ok = ok && o % (vec * sizeof(T)) == 0;
    if (ok) return vec;
  }
  return 1;
}

template <class T>
void check_rows(Queue& q, const char* call, const Buffer<T>& in, const Buffer<T>& out, std::size_t rows,
                std::size_t cols) {
  const std::size_t elements = matrix_elements(q, call, "in", {"rows", rows}, {"cols", cols});
  require_size(q, call, "in", in.size(), elements);
  require_size(q, call, "out", out.size(), elements);
  // Each work-item writes only the columns it read, after its group read the whole row: in place
  // (the same view) is safe; a shifted overlap would let one row's writes reach another's reads.
  check_overlap(q, call, "out", out, "in", in, InPlace::allowed);
}

template <class T>
void softmax_rows_of(Queue& q, const Buffer<T>& in, const Buffer<T>& out, std::size_t rows, std::size_t cols) {
  require_valid(q, "softmax_rows", {{"in", in.valid()}, {"out", out.valid()}});
  check_rows(q, "softmax_rows", in, out, rows, cols);
  if (rows == 0 || cols == 0) return;
  const std::size_t vec = rows_vec<T>(cols, in, out);
  const RowsShape s = rows_shape<T>(q, "gpurt_softmax_rows", "gpurt_softmax_rows_in_registers", rows, cols, vec);
  q.launch(s.kernel, s.config, in, out, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols));
}

template <class T>
void layer_norm_rows_of(Queue& q, const Buffer<T>& in, const Buffer<T>& gamma, const Buffer<T>& beta, const Buffer<T>& out,
                        std::size_t rows, std::size_t cols, float epsilon) {
  require_valid(q, "layer_norm_rows",
                {{"in", in.valid()}, {"gamma", gamma.valid()}, {"beta", beta.valid()}, {"out", out.valid()}});
  check_rows(q, "layer_norm_rows", in, out, rows, cols);
  require_size(q, "layer_norm_rows", "gamma", gamma.size(), cols);
  require_size(q, "layer_norm_rows", "beta", beta.size(), cols);
  check_overlap(q, "layer_norm_rows", "out", out, "gamma", gamma, InPlace::rejected);
  check_overlap(q, "layer_norm_rows", "out", out, "beta", beta, InPlace::rejected);
  if (!std::isfinite(epsilon) || epsilon < 0.0f) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(epsilon));
    bad(q, "layer_norm_rows", std::string("epsilon must be a finite number >= 0 (1e-5 is usual), got ") + text);
  }
  if (rows == 0 || cols == 0) return;
  const std::size_t vec = rows_vec<T>(cols, in, out, gamma, beta);
  const RowsShape s =
      rows_shape<T>(q, "gpurt_layer_norm_rows", "gpurt_layer_norm_rows_in_registers", rows, cols, vec);
  q.launch(s.kernel, s.config, in, gamma, beta, out, static_cast<std::uint64_t>(rows),
           static_cast<std::uint64_t>(cols), epsilon);
}

}  // namespace

void softmax_rows(Queue& q, const Buffer<float>& in, const Buffer<float>& out, std::size_t rows, std::size_t cols) {
  softmax_rows_of(q, in, out, rows, cols);
}
void softmax_rows(Queue& q, const Buffer<half>& in, const Buffer<half>& out, std::size_t rows, std::size_t cols) {
  softmax_rows_of(q, in, out, rows, cols);
}
void softmax_rows(Queue& q, const Buffer<bfloat16>& in, const Buffer<bfloat16>& out, std::size_t rows,
                  std::size_t cols) {
  softmax_rows_of(q, in, out, rows, cols);
}

void layer_norm_rows(Queue& q, const Buffer<float>& in, const Buffer<float>& gamma, const Buffer<float>& beta,
                     const Buffer<float>& out, std::size_t rows, std::size_t cols, float epsilon) {
  layer_norm_rows_of(q, in, gamma, beta, out, rows, cols, epsilon);
}
void layer_norm_rows(Queue& q, const Buffer<half>& in, const Buffer<half>& gamma, const Buffer<half>& beta,
                     const Buffer<half>& out, std::size_t rows, std::size_t cols, float epsilon) {
  layer_norm_rows_of(q, in, gamma, beta, out, rows, cols, epsilon);
}
void layer_norm_rows(Queue& q, const Buffer<bfloat16>& in, const Buffer<bfloat16>& gamma, const Buffer<bfloat16>& beta,
                     const Buffer<bfloat16>& out, std::size_t rows, std::size_t cols, float epsilon) {
  layer_norm_rows_of(q, in, gamma, beta, out, rows, cols, epsilon);
}

}  // namespace gpurt::lib
