// The kernel-library and matmul rows of `gpurt bench` as a table, CSV and Markdown (see render_library.hpp).
#include "render_library.hpp"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "targets.hpp"

namespace gpurt::bench::render {

namespace {

std::string num(double v, int digits = 3) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

// " [min..max]" of row[key + "_min"], row[key + "_max"].
std::string spread(const nlohmann::json& row, const std::string& key, int digits) {
  return " [" + num(row[key + "_min"].get<double>(), digits) + ".." + num(row[key + "_max"].get<double>(), digits) + "]";
}

std::string shape_text(const nlohmann::json& r) {
  return std::to_string(r["m"].get<std::size_t>()) + "x" + std::to_string(r["n"].get<std::size_t>()) + "x" +
         std::to_string(r["k"].get<std::size_t>());
}

const nlohmann::json& rows_of(const nlohmann::json& run) {
  static const nlohmann::json none = nlohmann::json::array();
  return run.contains("matmul") && run["matmul"].contains("rows") ? run["matmul"]["rows"] : none;
}

// The kernel rows of the table: the bench's name (also the gap key) and how the table shows it.
const std::pair<const char*, const char*> kernel_rows[] = {
    {"copy", "copy"},         {"fill", "fill"},           {"axpy", "axpy"},
    {"binary_add", "binary (add)"}, {"reduce_sum", "reduce (sum)"}, {"scan_inclusive", "scan (inclusive)"},
    {"transpose", "transpose"}, {"conv2d_5x5", "conv2d 5x5"}, {"histogram_256", "histogram (256 bins)"},
    {"softmax_rows_1024", "softmax (rows of 1,024)"}, {"layer_norm_rows_1024", "layer norm (rows of 1,024)"},
    {"softmax_rows_1024_half", "softmax, half (rows of 1,024)"}, {"layer_norm_rows_1024_half", "layer norm, half (rows of 1,024)"},
    {"softmax_rows_1024_bf16", "softmax, bf16 (rows of 1,024)"}, {"layer_norm_rows_1024_bf16", "layer norm, bf16 (rows of 1,024)"}};
const char* precisions[] = {"fp32", "tf32", "bf16", "fp64"};

// One cell of the kernel x device table.
struct Cell {
  std::string text = "-";  // what the table shows
  bool gap = false;        // a target not met
  std::string measured;    // for the gap list: "0.66 of copy bandwidth, target >= 0.85"
  std::string note;        // why it was not measured (skipped), for the notes under the table
};

std::string verdict(double ratio, const nlohmann::json& target, bool higher_is_better = true) {
  if (target.is_null()) return num(ratio) + " (no target)";
  const double t = target.get<double>();
  const bool met = higher_is_better ? ratio >= t : ratio <= t;
  return num(ratio) + " (" + (higher_is_better ? "≥ " : "≤ ") + num(t, 2) + ": " + (met ? "met" : "**gap**") + ")";
}

// The target of a kernel row of a run without matmul rows, which carries none: the library's for the
// device's type (bench/runner.cpp, add_kernel_targets), a GPU's where the run does not say.
nlohmann::json earlier_target(const nlohmann::json& run, const std::string& name) {
  return bench::kernel_target(name, run["device"].value("type", std::string("gpu")) == "cpu");
}

Cell kernel_cell(const nlohmann::json& run, const std::string& name) {
  Cell c;
  for (const auto& k : run["kernels"]) {
    if (k["name"] != name) continue;
    const double f = k["fraction_of_copy"];
    const nlohmann::json target = k.contains("target") ? k["target"] : earlier_target(run, name);
    c.text = verdict(f, target);
    if (!target.is_null() && f < target.get<double>()) {
      c.gap = true;
      c.measured = num(f) + " of copy bandwidth, target ≥ " + num(target.get<double>(), 2);
    }
  }
  return c;
}

// The raw library's GFLOP/s of `precision` at the square shape in another run on a device of the same
// name with cuBLAS (the CUDA run of the GPU an NVIDIA OpenCL run used), or 0 and no selector.
double cublas_elsewhere(const nlohmann::json& runs, const nlohmann::json& run, const std::string& precision,
                        std::string& selector) {
  for (const auto& other : runs) {
    if (&other == &run || other["device"]["name"] != run["device"]["name"]) continue;
    for (const auto& r : rows_of(other))
      if (r["precision"] == precision && r["shape"] == "square" && r.value("raw_library", nlohmann::json()) == "cuBLAS" &&
          r.contains("raw")) {
        selector = other["device"]["selector"];
        return r["raw"];
      }
  }
  return 0;
}

// The portable cell: the square shape against the raw library at the same precision (the issue's
// targets are against cuBLAS: an OpenCL run on a GPU that a CUDA run of the same render measured is
// held against that run's cuBLAS figure).
Cell portable_cell(const nlohmann::json& runs, const nlohmann::json& run, const std::string& precision) {
  Cell c;
  if (rows_of(run).empty()) {  // a run without matmul rows: its square fp32 row and "tensor" rows
    const auto& m = run["matmul"];
    nlohmann::json ratio;
    if (precision == "fp32" && m.contains("ratio_to_vendor_blas")) ratio = m["ratio_to_vendor_blas"];
    if (m.contains("tensor"))
      for (const auto& t : m["tensor"])
        if (t["precision"] == precision && t.contains("ratio_to_vendor_blas")) ratio = t["ratio_to_vendor_blas"];
    if (ratio.is_null()) return c;
    const double target = precision == "fp32" ? 0.75 : 0.5;
    c.text = verdict(ratio, target) + " vs cuBLAS, " + std::to_string(m["n"].get<std::size_t>()) + "³ (older run format)";
    c.gap = ratio.get<double>() < target;
    c.measured = num(ratio.get<double>()) + " x cuBLAS, target ≥ " + num(target, 2);
    return c;
  }
  for (const auto& r : rows_of(run)) {
    if (r["precision"] != precision || r["implementation"] != "portable" || r["shape"] != "square") continue;
    if (r.contains("skipped")) {
      c.text = "skipped";
      c.note = r["skipped"];
      return c;
    }
    const double gflops = r["gpurt"];
    std::string where;
    const double cublas = r.value("raw_library", nlohmann::json()) == "cuBLAS" ? 0 : cublas_elsewhere(runs, run, precision, where);
    if (cublas > 0) {
      const double target = precision == "fp32" ? 0.75 : precision == "fp64" ? 0 : 0.5;
      const double ratio = gflops / cublas;
      c.text = (target > 0 ? verdict(ratio, target) : verdict(ratio, nullptr)) + " vs cuBLAS of " + where;
      c.gap = target > 0 && ratio < target;
      c.measured = num(ratio) + " x cuBLAS (" + where + "'s run), target ≥ " + num(target, 2);
      return c;
    }
    if (!r.contains("ratio")) {
      c.text = num(gflops, 0) + " GFLOP/s, no raw library";
      c.note = r["raw_skipped"];
      return c;
    }
    c.text = verdict(r["ratio"], r["target"]) + " vs " + r["raw_library"].get<std::string>();
    if (r["met"].is_boolean() && !r["met"].get<bool>()) {
      c.gap = true;
      c.measured = num(r["ratio"].get<double>()) + " x " + r["raw_library"].get<std::string>() + ", target ≥ " +
                   num(r["target"].get<double>(), 2);
    }
    return c;
  }
  return c;
}

// The vendor cell: the lowest ratio to the raw library over the shapes (target 0.97 at each).
Cell vendor_cell(const nlohmann::json& run, const std::string& precision) {
  Cell c;
  const nlohmann::json* worst = nullptr;
  std::size_t shapes = 0;
  for (const auto& r : rows_of(run)) {
    if (r["precision"] != precision || r["implementation"] != "vendor") continue;
    if (r.contains("skipped")) {
      c.text = "skipped";
      c.note = r["skipped"];
      continue;
    }
    if (!r.contains("ratio")) {
      c.text = num(r["gpurt"].get<double>(), 0) + " GFLOP/s, no raw library";
      c.note = r["raw_skipped"];
      continue;
    }
    ++shapes;
    if (!worst || r["ratio"].get<double>() < (*worst)["ratio"].get<double>()) worst = &r;
  }
  if (!worst) return c;
  const auto& w = *worst;
  c.note.clear();
  c.text = verdict(w["ratio"], w["target"]) + " vs " + w["raw_library"].get<std::string>() + ", lowest of " +
           std::to_string(shapes) + " shapes (" + w["shape"].get<std::string>() + ")";
  if (w["met"].is_boolean() && !w["met"].get<bool>()) {
    c.gap = true;
    c.measured = num(w["ratio"].get<double>()) + " x " + w["raw_library"].get<std::string>() + " at " + shape_text(w) +
                 ", target ≥ " + num(w["target"].get<double>(), 2);
  }
  return c;
}

std::string column_title(const nlohmann::json& run) {
  const auto& d = run["device"];
  return d["selector"].get<std::string>() + " " + d["name"].get<std::string>() + (run["quick"].get<bool>() ? " (quick)" : "");
}

// One kernel's time against a baseline of the same operation on the same device (CPU
// devices: no library call slower than a naive portable kernel; scan, transpose, conv2d and matmul
// within 2 x an OpenMP loop): from the run's "kernel_baselines" (bench/cpu_rows: "naive" rows and
// "openmp": {"rows": ...}, each row name, library_ms, <base>_ms, library_over_<base>) or from a
// kernel row's own naive_ratio / openmp_ratio.
struct Baseline {
  std::string name, base;  // base: "naive" or "openmp"
  double library_ms = 0, base_ms = 0, ratio = 0, limit = 0;
  std::string spread;  // " [min..max]" of the per-trial ratios, where the run has them
};

std::vector<Baseline> baselines_of(const nlohmann::json& run) {
  std::vector<Baseline> out;
  const double limits[] = {1.0, 2.0};
  const char* bases[] = {"naive", "openmp"};
  for (int b = 0; b < 2; ++b) {
    const std::string base = bases[b];
    for (const auto& k : run["kernels"])
      if (k.contains(base + "_ratio"))
        out.push_back({k["name"], base, k.value("milliseconds", 0.0), k.value(base + "_ms", 0.0),
                       k[base + "_ratio"].get<double>(), k.value(base + "_target", limits[b]), {}});
    if (!run.contains("kernel_baselines") || !run["kernel_baselines"].contains(base)) continue;
    const auto& section = run["kernel_baselines"][base];
    const nlohmann::json& rows = section.is_array() ? section : section.value("rows", nlohmann::json::array());
    for (const auto& r : rows) {
      out.push_back({r["name"], base, r["library_ms"].get<double>(), r[base + "_ms"].get<double>(),
                     r["library_over_" + base].get<double>(), limits[b], {}});
      const std::string sk = "library_over_" + base + "_spread";  // trials in turn (2026-12-01 on)
      if (r.contains(sk) && r[sk].is_array() && r[sk].size() == 2 && r[sk][0].is_number() && r[sk][1].is_number())
        out.back().spread = " [" + num(r[sk][0].get<double>()) + ".." + num(r[sk][1].get<double>()) + "]";
    }
  }
  return out;
}

}  // namespace

void print_matmul_rows(const nlohmann::json& matmul, std::ostream& os) {
  if (!matmul.contains("rows")) return;
  os << "\nmatmul (GFLOP/s, " << (matmul.contains("timing") ? "host wall time" : "") << ")   gpurt             raw"
     << "          gpurt/raw  target\n";
  for (const auto& r : matmul["rows"]) {
    os << "  " << std::left << std::setw(5) << r["precision"].get<std::string>() << std::setw(9)
       << r["implementation"].get<std::string>() << std::setw(16) << shape_text(r) << std::right;
    if (r.contains("skipped")) {
      os << "skipped (" << r["skipped"].get<std::string>() << ")\n";
      continue;
    }
    os << std::setw(10) << num(r["gpurt"].get<double>(), 1);
    if (!r.contains("ratio")) {
      os << "   (no raw library: " << r["raw_skipped"].get<std::string>() << ")\n";
      continue;
    }
    os << std::setw(10) << num(r["raw"].get<double>(), 1) << " " << std::left << std::setw(8)
       << r["raw_library"].get<std::string>() << std::right << std::setw(7) << num(r["ratio"].get<double>())
       << spread(r, "ratio", 3)
       << (r["target"].is_null() ? std::string()
                                 : "  >= " + num(r["target"].get<double>(), 2) + (r["met"].get<bool>() ? " met" : " GAP"))
       << "\n";
  }
}

void write_matmul_csv(const std::string& device, const nlohmann::json& matmul, std::ostream& os) {
  if (!matmul.contains("rows")) return;
  for (const auto& r : matmul["rows"]) {
    if (r.contains("skipped")) continue;
    os << device << ",matmul," << r["precision"].get<std::string>() << "_" << r["implementation"].get<std::string>()
       << "_" << shape_text(r) << ",," << r["gpurt"] << "," << (r.contains("raw") ? r["raw"].dump() : "") << ","
       << (r.contains("ratio") ? r["ratio"].dump() : "") << ",GFLOP/s," << r["gpurt_min"] << "," << r["gpurt_max"]
       << "," << (r.contains("raw_min") ? r["raw_min"].dump() : "") << ","
       << (r.contains("raw_max") ? r["raw_max"].dump() : "") << ","
       << (r.contains("ratio_min") ? r["ratio_min"].dump() : "") << ","
       << (r.contains("ratio_max") ? r["ratio_max"].dump() : "") << "," << r["trials"] << "\n";
  }
}

void write_matmul_markdown(const nlohmann::json& matmul, std::ostream& os) {
  if (!matmul.contains("rows")) return;
  os << "\n| matmul | implementation | m x n x k | gpurt GFLOP/s | raw GFLOP/s | gpurt/raw | target | largest error vs fp64 "
        "(of sum abs(a*b)) |\n| --- | --- | --- | ---: | ---: | ---: | --- | ---: |\n";
  for (const auto& r : matmul["rows"]) {
    os << "| " << r["precision"].get<std::string>() << " | " << r["implementation"].get<std::string>() << " | "
       << shape_text(r) << " (" << r["shape"].get<std::string>() << ") | ";
    if (r.contains("skipped")) {
      os << "skipped: " << r["skipped"].get<std::string>() << " | | | | |\n";
      continue;
    }
    const int digits = r["gpurt"].get<double>() < 100 ? 1 : 0;  // CPU devices: a few GFLOP/s
    os << num(r["gpurt"].get<double>(), digits) << spread(r, "gpurt", digits) << " | ";
    if (r.contains("ratio"))
      os << r["raw_library"].get<std::string>() << " " << num(r["raw"].get<double>(), digits) << spread(r, "raw", digits)
         << " | "
         << num(r["ratio"].get<double>()) << spread(r, "ratio", 3) << " | "
         << (r["target"].is_null() ? std::string("-")
                                   : "≥ " + num(r["target"].get<double>(), 2) + (r["met"].get<bool>() ? ": met" : ": **gap**"));
    else
      os << "not measured: " << r["raw_skipped"].get<std::string>() << " | - | -";
    os << " | " << num(r["max_error"].get<double>(), 8) << " |\n";
  }
  if (matmul.contains("timing")) os << "\nTiming: " << matmul["timing"].get<std::string>() << ".\n";
}

GapCauses gap_causes(const std::string& text) {
  GapCauses causes;
  std::istringstream in(text);
  std::string line;
  const std::string prefix = "- gap ";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    const auto colon = line.find(": ", prefix.size());
    if (colon == std::string::npos) continue;
    causes[line.substr(prefix.size(), colon - prefix.size())] = line.substr(colon + 2);
  }
  return causes;
}

void write_library_markdown(const nlohmann::json& runs, const GapCauses& causes, std::ostream& os) {
  bool any = false;  // the section shows runs without matmul rows only beside one from after
  for (const auto& r : runs) any = any || !rows_of(r).empty();
  if (!any) return;
  os << "\n## The kernel library against the copy bandwidth and the vendor BLAS, per device\n\n"
        "Each cell: the ratio, its target and whether it is met. Kernels: the fraction of the device's copy "
        "bandwidth (bytes read + written per second against the raw API's device-to-device copy, in the same run). "
        "Matmul, portable: the square shape against the raw vendor BLAS at the same precision in the same run "
        "(cuBLAS on CUDA, CLBlast on OpenCL; an OpenCL run on a GPU that a CUDA run here measured is held against "
        "that run's cuBLAS, since the targets are against cuBLAS). Matmul, vendor: gpurt's vendor path against the "
        "same library called directly, the lowest of the three shapes. Each figure is the median of the trials; "
        "the device sections below give every row with its spread.\n\n| kernel |";
  for (const auto& r : runs) os << " " << column_title(r) << " |";
  os << "\n| --- |";
  for (std::size_t i = 0; i < runs.size(); ++i) os << " --- |";
  os << "\n";
  struct Gap {
    std::string key, measured;
  };
  std::vector<Gap> gaps;
  std::vector<std::pair<std::string, std::string>> notes;  // (selector: rows, reason)
  auto row = [&](const std::string& key, const std::string& label, auto&& cell_of) {
    os << "| " << label << " |";
    for (const auto& r : runs) {
      const Cell c = cell_of(r);
      os << " " << c.text << " |";
      const std::string sel = r["device"]["selector"];
      if (c.gap) gaps.push_back({sel + " " + key, c.measured});
      if (!c.note.empty()) {
        auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& n) {
          return n.second == c.note && n.first.compare(0, sel.size() + 1, sel + ":") == 0;
        });
        if (it == notes.end()) notes.push_back({sel + ": " + label, c.note});
        else it->first += ", " + label;
      }
    }
    os << "\n";
  };
  for (const auto& kernel_row : kernel_rows) {
    const char* const name = kernel_row.first;  // C++17: a lambda may not capture a structured binding
    row(name, kernel_row.second, [&](const nlohmann::json& r) { return kernel_cell(r, name); });
  }
  for (const char* p : precisions) {
    row(std::string("matmul_") + p + "_portable", std::string("matmul ") + p + ", portable",
        [&](const nlohmann::json& r) { return portable_cell(runs, r, p); });
    row(std::string("matmul_") + p + "_vendor", std::string("matmul ") + p + ", vendor",
        [&](const nlohmann::json& r) { return vendor_cell(r, p); });
  }
  if (!notes.empty()) {
    os << "\nNot measured:\n\n";
    for (const auto& [what, why] : notes) os << "- " << what << ": " << why << "\n";
  }
  os << "\nGaps and their measured causes (a cause is a line `- gap <selector> <row>: <cause>` in "
        "docs/bench/approaches.md):\n\n";
  std::vector<std::pair<std::string, Baseline>> baselines;  // (selector, baseline)
  for (const auto& r : runs)
    for (const Baseline& bl : baselines_of(r)) {
      baselines.push_back({r["device"]["selector"], bl});
      if (bl.ratio > bl.limit)
        gaps.push_back({r["device"]["selector"].get<std::string>() + " " + bl.name + "_vs_" + bl.base,
                        num(bl.ratio) + " x the " + (bl.base == "naive" ? "naive kernel's" : "OpenMP loop's") +
                            " time, target ≤ " + num(bl.limit, 1)});
    }
  std::stable_sort(gaps.begin(), gaps.end(), [&](const Gap& x, const Gap& y) {  // device by device, as the columns
    auto column = [&](const Gap& g) {
      std::size_t i = 0;
      while (i < runs.size() && g.key.compare(0, runs[i]["device"]["selector"].get<std::string>().size() + 1,
                                             runs[i]["device"]["selector"].get<std::string>() + " ") != 0)
        ++i;
      return i;
    };
    return column(x) < column(y);
  });
  if (gaps.empty()) os << "- none: every target with a figure is met.\n";
  for (const Gap& g : gaps) {
    const auto it = causes.find(g.key);
    os << "- " << g.key << ": " << g.measured << ". Cause: "
       << (it == causes.end() ? std::string("not yet recorded.") : it->second) << "\n";
  }
  if (baselines.empty()) return;
  os << "\nCPU devices: each library call against a naive portable kernel of the same operation (target: library "
        "time ≤ 1 x the naive kernel's) and against a straightforward OpenMP loop on the same cores (target ≤ 2 x; "
        "scan, transpose, conv2d, matmul), in the same run. Against the naive kernel the two take turns trial "
        "by trial (from 2026-12-01 on: the ratio is the median of the per-trial ratios, [min..max] after it; "
        "before, the ratio of the two medians, each side's trials in a block of its own):\n\n"
        "| device | kernel | library ms | baseline | baseline ms | library / baseline |\n"
        "| --- | --- | ---: | --- | ---: | --- |\n";
  for (const auto& [sel, bl] : baselines)
    os << "| " << sel << " | " << bl.name << " | " << num(bl.library_ms, 3) << " | "
       << (bl.base == "naive" ? "naive kernel" : "OpenMP loop") << " | " << num(bl.base_ms, 3) << " | "
       << verdict(bl.ratio, bl.limit, false) << bl.spread << " |\n";
}

}  // namespace gpurt::bench::render
