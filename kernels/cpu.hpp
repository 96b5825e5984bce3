// CPU-device variants of the library's calls (kernels/cpu_stream.gpurt, kernels/cpu_matrix.gpurt).
// Internal to libgpurt-lib: library.cpp checks a call's arguments, then gives it to the function of
// the same name here, which enqueues the CPU variant and returns true when the queue's device is a
// CPU (DeviceProperties::type == DeviceType::cpu), or enqueues nothing and returns false so that
// the caller launches its GPU shapes.
//
// How the variants are shaped (measured on PoCL, 2 cores, 10 M floats: lib::axpy 3.3 ms as a
// grid-stride wave of two 256-item groups against 2.0 ms as 8 contiguous chunks; 1 M floats in
// cache: 0.09 ms against 0.12 ms for a naive kernel of one work-item per element): one work-item
// per group, each owning a contiguous chunk of the elements (or a band of rows) and running plain
// loops the compiler vectorizes; about `chunks_per_unit` work-items per compute unit so that the
// device's threads balance; no local memory (a CPU's local memory is ordinary memory, and barriers
// split the compiler's work-item loops). The choice depends only on the device's type and measured
// properties (compute units, fp64), never on its backend's name.
// The variants' kernels are named after their call as the GPU kernels are (gpurt_axpy, or
// gpurt_<call>_<pass> for a call made in passes: gpurt_reduce_chunks then gpurt_reduce_finish;
// gpurt_scan_totals then gpurt_scan_chunks; gpurt_histogram_chunks then gpurt_histogram_merge), so
// a trace reads alike on every device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpurt/buffer.hpp"
#include "gpurt/library.hpp"
#include "gpurt/queue.hpp"

namespace gpurt::lib::cpu {

// Whether `device` takes the CPU variants (DeviceProperties::type == DeviceType::cpu).
bool runs_on(const Device& device);

// Each is called after the library's checks (sizes, overlap) with non-empty buffers.
template <class T> bool copy(Queue& q, const Buffer<T>& src, const Buffer<T>& dst);  // the queue's copy is one thread
template <class T> bool fill(Queue& q, const Buffer<T>& dst, T value);
template <class T> bool axpy(Queue& q, T a, const Buffer<T>& x, const Buffer<T>& y);
template <class T> bool binary(Queue& q, BinaryOp op, const Buffer<T>& a, const Buffer<T>& b, const Buffer<T>& out);
// result[0] = the fold of `in` starting from `identity`; result may lie inside `in`.
template <class T> bool reduce(Queue& q, ReduceOp op, const Buffer<T>& in, const Buffer<T>& result, T identity);
template <class T> bool scan(Queue& q, const Buffer<T>& in, const Buffer<T>& out, bool exclusive);
bool transpose(Queue& q, const Buffer<float>& in, const Buffer<float>& out, std::size_t rows, std::size_t cols);
bool conv2d(Queue& q, const Buffer<float>& in, const Buffer<float>& filter, const Buffer<float>& out, std::size_t width,
            std::size_t height, std::size_t filter_size);
// counts (not empty, not overlapping in) = the histogram of a non-empty `in`.
bool histogram(Queue& q, const Buffer<std::uint32_t>& in, const Buffer<std::uint32_t>& counts);
// m, n, k > 0.
bool matmul(Queue& q, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c, std::size_t m,
            std::size_t n, std::size_t k);

}  // namespace gpurt::lib::cpu
