// gpurt::lib: the built-in kernel library, written once in the portable dialect (kernels/*.gpurt)
// and run on every backend.
//
// Using it: include this header (gpurt/gpurt.hpp does not) and link the library - in CMake
// find_package(gpurt CONFIG REQUIRED COMPONENTS lib) (or add_subdirectory(gpurt)) and
// target_link_libraries(app PRIVATE gpurt::lib), which brings gpurt::gpurt with it; with pkg-config,
// `pkg-config --cflags --libs gpurt-lib` (libgpurt-lib, then libgpurt). The library is built on
// gpurt's public API alone, as an application would be.
//
// Every call enqueues on `queue` and returns without waiting, except the reduce() that returns the
// value and therefore blocks. Programs are built on first use per device and element type (and
// come from the compile cache after that). Sizes are checked first: a mismatch throws
// Error(invalid_argument) and enqueues nothing; double on a device without fp64 throws
// Error(unsupported) from every call that computes (axpy, binary, reduce, scan; with or without
// elements), while fill and copy, which only move bytes, take double on every device. Element
// types: std::int32_t, std::uint32_t, float, double unless stated.
//
// Views: every buffer argument may be a view at any element offset. Aliasing: two arguments
// overlap when they are views of one allocation (through view() or as<U>()) whose bytes
// intersect. Inputs may overlap each other freely; an output may overlap an input only where its
// comment says so - as exactly the same view (same offset, same size) for copy, axpy, binary and
// scan, anywhere in the input for reduce's result - and any other overlap throws
// Error(invalid_argument) and enqueues nothing.
// Matrix dimensions (transpose, the matmuls, conv2d) are at most 2^31 each (softmax_rows and
// layer_norm_rows take any rows x cols whose product fits in 64 bits); larger dimensions,
// products of dimensions beyond 64 bits, and grids of more groups than the device launches throw
// Error(invalid_argument) and enqueue nothing.
//
// Scratch memory: reduce and scan keep device memory for each queue they run on (reduce's partial
// results, scan's tile states; histogram, on devices other than CPUs, keeps its counters there too,
// zeroed on each call and copied into counts at its end), so that once a call has run on a queue at
// a size, later calls of that size or smaller allocate and clear nothing; so does matmul_tf32 on
// sm_90 devices (H100, H200: (m + n) x k floats, A rounded to TF32 and B transposed and rounded,
// which its Hopper kernel reads; where that memory cannot be allocated it runs the tensor-core
// kernel that needs none, as on other GPUs, with the same results' bound). The queue owns it
// (Queue::keep_until_destroyed):
// it is freed when the queue is destroyed, after the queue's work has completed, and a queue made
// later starts with none. Threads: library calls may be made from several threads at once, on one
// queue or several; each call's work is enqueued whole, in some order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpurt/buffer.hpp"
#include "gpurt/device.hpp"
#include "gpurt/queue.hpp"
#include "gpurt/types.hpp"

namespace gpurt::lib {

enum class BinaryOp { add, subtract, multiply, divide, minimum, maximum };
enum class ReduceOp { sum, min, max };
enum class ScanKind { inclusive, exclusive };

// The scalar parameters (fill's value, axpy's a) take their type from the buffers alone:
// lib::axpy(q, 2.5, x, y) on float buffers converts 2.5 to float.
template <class T> struct NonDeduced { using type = T; };
template <class T> using Scalar = typename NonDeduced<T>::type;

// Every element of `dst` = value (through the device's fill engine, or a fill kernel of chunks on a CPU device).
template <class T> void fill(Queue& queue, const Buffer<T>& dst, Scalar<T> value);
// dst = src (equal sizes; through the device's copy engine, or a copy kernel of chunks on a CPU device). dst
// may be src itself (nothing to do).
template <class T> void copy(Queue& queue, const Buffer<T>& src, const Buffer<T>& dst);
// y = a * x + y (equal sizes). y may be x itself (y = (a + 1) * y).
template <class T> void axpy(Queue& queue, Scalar<T> a, const Buffer<T>& x, const Buffer<T>& y);
// out = a OP b, element by element (equal sizes; out may be a or b itself). divide is defined for
// every pair of operands: for std::int32_t and std::uint32_t, x / 0 = 0 and INT_MIN / -1 = INT_MIN
// (on every device: a CPU would trap on both and end the process); float and double divide as IEEE
// 754 does (x / 0 is an infinity, 0 / 0 NaN). minimum is a < b ? a : b and maximum a > b ? a : b,
// so either gives b where a and b are unordered (a NaN on either side) or equal (-0 and +0).
template <class T>
void binary(Queue& queue, BinaryOp op, const Buffer<T>& a, const Buffer<T>& b, const Buffer<T>& out);
// The sum, minimum or maximum of `in` (blocks). Empty input gives the operation's identity: 0 for
// sum; for min the largest value of T, for max the smallest - +infinity and -infinity for float
// and double, std::numeric_limits<T>::max() and ::lowest() for the integer types. min and max skip
// NaN elements (an input of NaNs only gives the identity); a NaN in a sum makes the sum NaN.
template <class T> T reduce(Queue& queue, ReduceOp op, const Buffer<T>& in);
// The same into result[0] (a one-element buffer), without waiting: the result stays on the device.
// result may be any element of `in` (it is written after all of `in` has been read).
template <class T> void reduce(Queue& queue, ReduceOp op, const Buffer<T>& in, const Buffer<T>& result);
// out[i] = in[0] + ... + in[i] (inclusive) or + in[i-1] (exclusive); equal sizes. out may be in
// itself (in place); any other overlap is rejected.
template <class T> void scan(Queue& queue, const Buffer<T>& in, const Buffer<T>& out, ScanKind kind);

// Row-wise softmax of the rows x cols row-major matrix `in` (float, half or bfloat16; the 16-bit
// types are computed in float, each result rounded once to nearest even when stored): out[r][c] = exp(in[r][c] - m_r) /
// sum_k exp(in[r][k] - m_r), m_r the row's largest element - the textbook formula, with its
// special values: a row holding a NaN or +infinity, and a row of -infinity only, is all NaN; a
// -infinity element is 0 in any other row. in and out hold rows x cols elements each; out may be in
// itself (in place); any other overlap is rejected. Sums are added in an unspecified order (float
// rounding: compare with a tolerance).
void softmax_rows(Queue& queue, const Buffer<float>& in, const Buffer<float>& out, std::size_t rows,
                  std::size_t cols);
void softmax_rows(Queue& queue, const Buffer<half>& in, const Buffer<half>& out, std::size_t rows, std::size_t cols);
void softmax_rows(Queue& queue, const Buffer<bfloat16>& in, const Buffer<bfloat16>& out, std::size_t rows,
                  std::size_t cols);
// Row-wise layer norm: out[r][c] = (in[r][c] - mean_r) / sqrt(var_r + epsilon) * gamma[c] + beta[c],
// mean_r and var_r the row's mean and biased variance (divided by cols, as PyTorch's LayerNorm),
// computed in two passes (the mean of the row shifted by its first element, then the variance from
// the mean: rows of a large mean and a small spread keep their precision; a row whose elements'
// differences overflow float, such as {3e38, -3e38}, gives NaN, and so does a constant row with
// epsilon 0, as the formula's 0 / 0). gamma and beta hold cols elements; epsilon is finite and
// >= 0 (else invalid_argument). out may be in itself (in place); out overlapping gamma or beta, or
// in other than exactly, is rejected. half and bfloat16 matrices take gamma and beta of their own
// type and are computed in float, each result rounded once when stored. A row holding a NaN or an
// infinity is all NaN. Sums are added in an unspecified order (float rounding: compare with a
// tolerance).
void layer_norm_rows(Queue& queue, const Buffer<float>& in, const Buffer<float>& gamma, const Buffer<float>& beta,
                     const Buffer<float>& out, std::size_t rows, std::size_t cols, float epsilon = 1e-5f);
void layer_norm_rows(Queue& queue, const Buffer<half>& in, const Buffer<half>& gamma, const Buffer<half>& beta,
                     const Buffer<half>& out, std::size_t rows, std::size_t cols, float epsilon = 1e-5f);
void layer_norm_rows(Queue& queue, const Buffer<bfloat16>& in, const Buffer<bfloat16>& gamma,
                     const Buffer<bfloat16>& beta, const Buffer<bfloat16>& out, std::size_t rows, std::size_t cols,
                     float epsilon = 1e-5f);

// out (cols x rows) = transpose of in (rows x cols), row-major fp32. Not in place: out must not
// overlap in at all (use a separate buffer).
void transpose(Queue& queue, const Buffer<float>& in, const Buffer<float>& out, std::size_t rows,
               std::size_t cols);

// ---- Matrix multiply: the library's portable kernels, or the vendor's BLAS behind the same call.
//
// Every matmul call can run one of two implementations:
//  - Implementation::portable: the library's own kernels on every device: kernels/matmul.gpurt (fp32),
//    kernels/matmul_mixed.gpurt (fp64, and TF32/bf16 wherever the library's tensor-core kernels do not
//    run; those run on CUDA devices with tensor cores);
//  - Implementation::vendor: the vendor's BLAS on the same buffers and in the queue's order -
//    cuBLAS (libcublas.so.13/.12, found at run time like NVRTC) on CUDA, CLBlast (libclblast.so.1,
//    found at run time) on OpenCL. CLBlast has no TF32 or bf16: those calls are never vendor on OpenCL.
//    The library follows what the device declares, not its backend's name: cuBLAS for a device whose
//    native context (native_handle(device, NativeKind::context)) is a CUcontext, CLBlast for a
//    cl_context; a device with no native context, or another kind, has no vendor library.
// Which one runs is chosen per call by Options::vendor; its default, VendorLibraries::from_environment,
// reads GPURT_VENDOR_LIBRARIES (auto, on or off - on also 1 or true, off also 0 or false, as for every
// GPURT_* switch - in any case, surrounding spaces and tabs ignored; unset or empty means auto; anything else, a blank value included, makes
// the call throw Error(invalid_argument) naming the variable and its value):
//  - automatic (auto): the vendor library when it is present and covers the call, else portable;
//  - on: the vendor library; Error(unsupported) saying why when it is absent or does not cover the
//    call (no TF32/bf16 in CLBlast), and nothing is enqueued;
//  - off: always the portable kernels.
// The choice is visible: each call returns the Implementation it enqueued, matmul_implementation()
// answers without enqueuing, vendor_library() says what was found (and `gpurt info` prints it), and
// a trace shows vendor work as a "lib::matmul (cuBLAS)" span on the queue.
// Precision and tolerance (each path; ref = the exact product of the inputs as given, s_ij = sum over
// p of |a_ip * b_pj|): |c_ij - ref_ij| <= tol * s_ij with tol = (k + 2) * 2^-23 for fp32 and bf16,
// 2^-9 + (k + 2) * 2^-23 for TF32, (k + 2) * 2^-52 for fp64 - the same for both implementations, so
// they agree within 2 * tol * s_ij. docs/api-guide.md, "Kernel library: matrix multiply", says why.
enum class Implementation { portable, vendor };
const char* to_string(Implementation implementation) noexcept;  // "portable", "vendor"
enum class VendorLibraries { from_environment, automatic, on, off };
enum class Precision { fp32, tf32, bf16, fp64 };
const char* to_string(Precision precision) noexcept;  // "fp32", "tf32", "bf16", "fp64"
struct Options {
  VendorLibraries vendor = VendorLibraries::from_environment;
};
// What the device offers for the vendor path: `available` with the library's name
// ("cuBLAS", "CLBlast"), its version and the file it was loaded from, or not available with
// `reason` (what was searched for and why it failed). Loads the library on first use per process.
struct VendorLibraryInfo {
  bool available = false;
  std::string name;     // "cuBLAS", "CLBlast", or empty when the device's native context has none
  std::string version;  // as the library reports it, e.g. "13.0.0"; empty when it does not say
  std::string path;     // the file loaded
  std::string reason;   // why not available (empty when available)
};
VendorLibraryInfo vendor_library(const Device& device);
// The Implementation a matmul of `precision` on `device` would run under `options`, enqueuing
// nothing; throws exactly what the call would for the choice (Error(unsupported) for `on` without a
// covering vendor library, and for fp64 on a device without fp64).
Implementation matmul_implementation(const Device& device, Precision precision, Options options = {});

// c (m x n) = a (m x k) * b (k x n), row-major, in fp32 (fp32 inputs, products and sums: never TF32,
// whatever NVIDIA_TF32_OVERRIDE says). c must not overlap a or b. Every matmul checks first that a, b
// and c are valid buffers of the queue's device (else Error(invalid_argument), even with nothing to
// compute), then the sizes, then the choice of implementation.
Implementation matmul(Queue& queue, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c,
                      std::size_t m, std::size_t n, std::size_t k, Options options = {});
// The same in fp64 (devices with fp64, DeviceProperties::fp64; elsewhere Error(unsupported)).
Implementation matmul(Queue& queue, const Buffer<double>& a, const Buffer<double>& b, const Buffer<double>& c,
                      std::size_t m, std::size_t n, std::size_t k, Options options = {});

// Reduced-precision matrix multiply, c (m x n) = a (m x k) * b (k x n), row-major, fp32 output and
// accumulation. matmul_tf32 reads fp32 and rounds every input to TF32 (10-bit mantissa) on the way
// in (portable: to nearest, ties away from zero, as cvt.rna.tf32.f32; a vendor library may drop the
// low bits instead); matmul_bf16 reads bf16 bit patterns (to_bf16). On CUDA devices with tensor cores
// (compute capability 8.0 or later, gpurt built with nvcc) the portable implementation is the
// library's tensor-core kernels; elsewhere it is a portable kernel that rounds the same way and
// accumulates in fp32, so both calls run on every device. Bound per element: tol * sum |a*b| with
// tol = 2^-9 + (k + 2) * 2^-23 (TF32, against the fp32 inputs) or (k + 2) * 2^-23 (bf16, against the
// bf16 values). c must not overlap a or b.
Implementation matmul_tf32(Queue& queue, const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c,
                           std::size_t m, std::size_t n, std::size_t k, Options options = {});
Implementation matmul_bf16(Queue& queue, const Buffer<std::uint16_t>& a, const Buffer<std::uint16_t>& b,
                           const Buffer<float>& c, std::size_t m, std::size_t n, std::size_t k, Options options = {});
// bf16 conversions on the host: round to nearest even (NaN stays NaN), and back exactly.
std::uint16_t to_bf16(float x);
float from_bf16(std::uint16_t x);
// out = in (width x height, row-major) correlated with a filter_size x filter_size filter (odd,
// at most 15), zero-padded at the borders. out must not overlap in or filter.
void conv2d(Queue& queue, const Buffer<float>& in, const Buffer<float>& filter, const Buffer<float>& out,
            std::size_t width, std::size_t height, std::size_t filter_size);
// counts[v] = number of elements of `in` equal to v, for v < counts.size() (other values are not
// counted). counts is overwritten and must not overlap in. counts holds at least one bin and at most
// as many as fill half the device's local memory (counts.size_bytes() <=
// DeviceProperties::max_local_memory / 2, on every device); otherwise Error(invalid_argument).
void histogram(Queue& queue, const Buffer<std::uint32_t>& in, const Buffer<std::uint32_t>& counts);
// The same for 64-bit keys: a key of 2^32 or more is never counted (it is not truncated into a bin).
// On CPU devices it runs the GPU kernel (the CPU variant takes 32-bit keys).
void histogram(Queue& queue, const Buffer<std::uint64_t>& in, const Buffer<std::uint32_t>& counts);

}  // namespace gpurt::lib
