// The matmul rows of `gpurt bench`: every precision (fp32, TF32, bf16, and fp64 where the
// device has it), three shapes (square, tall-skinny, small) and both implementations of lib::matmul
// (portable: Options{off}; vendor: Options{on}, skipped with the reason where it cannot run), each
// against the raw vendor BLAS at the same precision in the same run (RawBaseline::gemm_gflops:
// cuBLAS on CUDA, CLBlast on OpenCL), trials taken in turn.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpurt/gpurt.hpp"
#include "raw/baseline.hpp"

namespace gpurt::bench {

struct MatmulBench {
  const Device& device;
  Queue& queue;  // untimed, like the raw baseline's queue
  RawBaseline& raw;
  bool quick = false;
  int trials = 3;
  std::function<void(const std::string&)> say;
};

// The run's "matmul" object: "rows" (one per precision x shape x implementation; docs/PERFORMANCE.md
// and bench/check.cpp say what each holds) and, derived from the rows, the keys of the runs
// without matmul rows: n, gflops, milliseconds, vendor_blas_gflops (null without one), ratio_to_vendor_blas
// or vendor_blas_note, max_error, and "tensor" (the TF32 and bf16 portable rows of the square shape).
nlohmann::json measure_matmul_rows(const MatmulBench& b);

}  // namespace gpurt::bench
