// Block shapes of the tensor-core kernels (kernels/cuda/matmul_tensor.cu), shared with their host
// side (kernels/library.cpp): plain C++, no CUDA headers. The host launches
// ceil(M / bm) * ceil(N / bn) groups of threads() work-items with shared_bytes() of dynamic local memory.
#pragma once

namespace gpurt_tensor {

struct BlockShape {
  int bm, bn, bk;          // block of C, and the k-depth of one pipeline stage
  int warps_m, warps_n;    // warp grid over the block
  int stages;              // depth of the cp.async pipeline
  int elem_bytes;          // 4 (fp32 read as TF32) or 2 (bf16)
  const char* kernel;      // the kernel's name in matmul_tensor.cu
  constexpr int threads() const { return warps_m * warps_n * 32; }
  constexpr int vec() const { return 16 / elem_bytes; }   // elements per 16-byte copy
  constexpr int lda() const { return bk + vec(); }        // padded rows: no bank conflicts
  constexpr int ldb() const { return bn + vec(); }
  constexpr int stage_elems() const { return bm * lda() + bk * ldb(); }
  constexpr int shared_bytes() const { return stages * stage_elems() * elem_bytes; }
};

// The fastest of the shapes measured on the H200 (docs/bench/approaches.md); each warp holds a
// 64 x 64 part of C. The host takes the first whose shared memory the device offers: the deeper
// k-tile needs 151-153 KiB (sm_80, sm_90); the other 79-80 KiB (also sm_86, sm_89 with 99 KiB).
constexpr BlockShape tf32_shapes[2] = {{128, 256, 32, 2, 4, 3, 4, "gpurt_matmul_tf32_k32"},
                                       {128, 256, 16, 2, 4, 3, 4, "gpurt_matmul_tf32_k16"}};
constexpr BlockShape bf16_shapes[2] = {{128, 256, 64, 2, 4, 3, 2, "gpurt_matmul_bf16_k64"},
                                       {128, 256, 32, 2, 4, 3, 2, "gpurt_matmul_bf16_k32"}};

constexpr bool same_name(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// Shared memory of the Hopper wgmma kernels (128 x bn blocks, `stages` buffers of 128-byte-deep
// k-tiles of A and B, plus 1 KiB to align them to the 1024 bytes the 128-byte swizzle needs).
constexpr int wgmma_shared_bytes(int bn, int stages) { return stages * (128 + bn) * 128 + 1024; }

// Every kernel in matmul_tensor.cu, for the tuner (bench/tune/tune_tensor.cpp): name, input
// element size, block of C (one group of `threads` per bm x bn block, numbered in one dimension),
// dynamic shared memory, and whether it needs sm_90a (Hopper's wgmma; elsewhere it traps).
struct Variant {
  const char* kernel;
  int elem_bytes;  // 4: fp32 read as TF32; 2: bf16
  int bm, bn, threads, shared_bytes;
  bool sm90a;
  // Whether it reads B^T (N x K, rounded to TF32) that the pre-pass gpurt_tf32_round_bt writes
  // first (one group of 256 per 32 x 32 tile of B, ceil(N / 32) * ceil(K / 32) groups), and A
  // rounded to TF32 by the pre-pass gpurt_tf32_round (groups of 256 items, a grid-stride loop over
  // the M x K elements; its arguments: A, the copy, the element count as a 64-bit integer).
  bool transposed_b = false;
};
constexpr const char* round_bt_kernel = "gpurt_tf32_round_bt";
constexpr const char* round_kernel = "gpurt_tf32_round";
constexpr Variant variants[] = {
    {tf32_shapes[0].kernel, 4, 128, 256, tf32_shapes[0].threads(), tf32_shapes[0].shared_bytes(), false},
    {tf32_shapes[1].kernel, 4, 128, 256, tf32_shapes[1].threads(), tf32_shapes[1].shared_bytes(), false},
    {"gpurt_matmul_tf32_mma_s3", 4, 128, 256, 256, wgmma_shared_bytes(256, 3), false},  // mma.sync, ldmatrix
    {"gpurt_matmul_tf32_mma_s4", 4, 128, 256, 256, wgmma_shared_bytes(256, 4), false},
    {"gpurt_matmul_tf32_wgmma_n128_s5", 4, 128, 128, 256, wgmma_shared_bytes(128, 5), true},
    {"gpurt_matmul_tf32_wgmma_n128_s3_x2", 4, 128, 128, 256, wgmma_shared_bytes(128, 3), true},  // 2 groups per SM
    {"gpurt_matmul_tf32_wgmma_n256_s3", 4, 128, 256, 256, wgmma_shared_bytes(256, 3), true},
    {"gpurt_matmul_tf32_wgmma_n256_s4", 4, 128, 256, 256, wgmma_shared_bytes(256, 4), true},
    {"gpurt_matmul_tf32_wgmma_bt_n256_s3", 4, 128, 256, 256, wgmma_shared_bytes(256, 3), true, true},
    {"gpurt_matmul_tf32_wgmma_bt_n256_s4", 4, 128, 256, 256, wgmma_shared_bytes(256, 4), true, true},
    {"gpurt_matmul_tf32_wgmma_bt_n128_s4", 4, 128, 128, 256, wgmma_shared_bytes(128, 4), true, true},
    {bf16_shapes[0].kernel, 2, 128, 256, bf16_shapes[0].threads(), bf16_shapes[0].shared_bytes(), false},
    {bf16_shapes[1].kernel, 2, 128, 256, bf16_shapes[1].threads(), bf16_shapes[1].shared_bytes(), false},
    {"gpurt_matmul_bf16_mma_s3", 2, 128, 256, 256, wgmma_shared_bytes(256, 3), false},  // mma.sync, ldmatrix
    {"gpurt_matmul_bf16_mma_s4", 2, 128, 256, 256, wgmma_shared_bytes(256, 4), false},
    {"gpurt_matmul_bf16_wgmma_n128_s5", 2, 128, 128, 256, wgmma_shared_bytes(128, 5), true},
    {"gpurt_matmul_bf16_wgmma_n128_s3_x2", 2, 128, 128, 256, wgmma_shared_bytes(128, 3), true},
    {"gpurt_matmul_bf16_wgmma_n256_s3", 2, 128, 256, 256, wgmma_shared_bytes(256, 3), true},
    {"gpurt_matmul_bf16_wgmma_n256_s4", 2, 128, 256, 256, wgmma_shared_bytes(256, 4), true},
    {"gpurt_matmul_bf16_wgmma_n256_s4_swap", 2, 128, 256, 256, wgmma_shared_bytes(256, 4), true},
};

// The variant named `kernel`, or nullptr.
constexpr const Variant* find_variant(const char* kernel) {
  for (const Variant& v : variants)
    if (same_name(v.kernel, kernel)) return &v;
  return nullptr;
}

// The Hopper (sm_90a) kernel the library runs on devices whose architecture is "sm_90" (compute
// capability 9.0 exactly: sm_90a code runs nowhere else), per precision; nullptr: the mma.sync
// shapes above, as on every other device. Measured on the H200 by gpurt-tune-tensor
// (docs/bench/approaches.md, "tensor-core kernels"): bf16 wgmma n256_s3 0.614 x cuBLAS;
// TF32 wgmma reading B^T after the pre-passes 0.545 (B transposed through registers: at most 0.23).
// A variant that reads B^T runs after the two pre-passes (the library keeps their output as the
// queue's scratch). Switching is this one line: a name from `variants` (sm90a) or nullptr.
struct HopperChoice {
  const char* tf32;
  const char* bf16;
};
constexpr HopperChoice hopper = {"gpurt_matmul_tf32_wgmma_bt_n256_s3", "gpurt_matmul_bf16_wgmma_n256_s3"};
constexpr bool names_variant(const char* kernel, int elem_bytes) {
  for (const Variant& v : variants)
    if (same_name(v.kernel, kernel)) return v.elem_bytes == elem_bytes;
  return false;
}
static_assert(!hopper.tf32 || names_variant(hopper.tf32, 4), "hopper.tf32 names a TF32 variant");
static_assert(!hopper.bf16 || names_variant(hopper.bf16, 2), "hopper.bf16 names a bf16 variant");

}  // namespace gpurt_tensor
