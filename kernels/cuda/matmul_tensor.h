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

}  // namespace gpurt_tensor
