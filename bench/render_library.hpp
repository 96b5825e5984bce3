// How `gpurt bench` shows the kernel-library and matmul rows: the matmul rows (bench/matmul_rows.hpp: every
// precision, shape and implementation against the raw vendor BLAS) as a table, CSV and Markdown,
// and the kernel x device table of ratios with each target met or its gap (docs/PERFORMANCE.md).
// Each takes runs as check.hpp's check_bench_document has checked them.
#pragma once

#include <iosfwd>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace gpurt::bench::render {

// The matmul rows of one run's "matmul" object, when it has "rows" (nothing otherwise).
void print_matmul_rows(const nlohmann::json& matmul, std::ostream& os);
// CSV lines in bench's columns (device,section,name,bytes,gpurt,raw,ratio,unit,spread...).
void write_matmul_csv(const std::string& device, const nlohmann::json& matmul, std::ostream& os);
// The device section's table of matmul rows (Markdown).
void write_matmul_markdown(const nlohmann::json& matmul, std::ostream& os);

// The measured causes of gaps, keyed "<selector> <row>" (e.g. "cuda:0 scan_inclusive",
// "cuda:0 matmul_fp32_portable", "opencl:0 axpy_vs_naive"), from lines
// "- gap <selector> <row>: <cause>" of docs/bench/approaches.md (gap_causes() reads them).
using GapCauses = std::map<std::string, std::string>;
GapCauses gap_causes(const std::string& approaches_text);

// The library section: one column per run, one row per kernel and matmul precision x
// implementation, each cell the ratio with its target and met / gap; then each gap with its cause
// from `causes` (or a note that none is recorded yet), and the CPU baselines (naive kernel, OpenMP
// loop) where a run has them. Nothing when no run has library rows; beside one that has, a run
// without matmul rows is shown with the library's targets applied to what it measured (GPU targets where
// the run does not give its device's type; its square fp32 and tensor rows against cuBLAS).
void write_library_markdown(const nlohmann::json& runs, const GapCauses& causes, std::ostream& os);

}  // namespace gpurt::bench::render
