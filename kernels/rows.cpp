// The library's row-wise calls: softmax_rows and layer_norm_rows (kernels/rows.gpurt; library.hpp
// says what each computes).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "embedded_kernels.hpp"
#include "gpurt/library.hpp"
#include "gpurt/types.hpp"
#include "library_support.hpp"

namespace gpurt::lib {

using namespace support;

namespace {

// One group per row at a time: as many groups as rows, up to what the device runs at once (the
// kernels loop over the rows beyond); 256 work-items a group, fewer for short rows (down to 32:
// a group's items stride over the row, so short rows leave most of a large group idle).
struct RowsShape {
  Kernel kernel;
  LaunchConfig config;
};

// The element type's GPURT_ROWS_STORAGE (kernels/rows.gpurt).
template <class T> constexpr long long storage_of();
template <> constexpr long long storage_of<float>() { return 0; }
template <> constexpr long long storage_of<half>() { return 1; }
template <> constexpr long long storage_of<bfloat16>() { return 2; }

template <class T> RowsShape rows_shape(const Queue& q, const char* name, std::size_t rows, std::size_t cols) {
  std::size_t group = 32;
  while (group < 256 && group < cols) group *= 2;
  // The group size is a build-time constant (it sizes the collectives' scratch): one program each.
  const ShapedKernel k =
      shaped_kernel(q.device(), "rows", embedded::rows, nullptr, name, 0, {{"GPURT_ROWS_GROUP", static_cast<long long>(group)}, {"GPURT_ROWS_STORAGE", storage_of<T>()}});
  const std::size_t items = std::min(group, k.group);  // k.group: the most the kernel allows, a power of two
  const std::size_t groups = std::max<std::size_t>(
      1, std::min({rows, k.wave * 8, static_cast<std::size_t>(q.device().properties().max_groups.x)}));
  return {k.kernel, LaunchConfig(Dim3(groups), Dim3(items))};
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
  const RowsShape s = rows_shape<T>(q, "gpurt_softmax_rows", rows, cols);
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
  const RowsShape s = rows_shape<T>(q, "gpurt_layer_norm_rows", rows, cols);
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
