// The rendering of `gpurt bench` results: the table of a run, CSV, the SVG chart of transfer
// bandwidth against size and the Markdown document (docs/PERFORMANCE.md is its output), each from a
// JSON document that check.hpp has checked. The CLI (tools/bench.cpp) chooses the files.
#include "render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>
#include <string>

#include "render_dialect.hpp"
#include "render_graph.hpp"
#include "render_library.hpp"

namespace gpurt::bench::render {

namespace {

std::string fmt(double v, int precision = 3) {
  std::ostringstream os;
  os << std::setprecision(precision) << std::fixed << v;
  return os.str();
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 30)) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

// The default thread counts of a bench JSON: one number (before 2026-11-30) or one per direction.
std::string default_threads_text(const nlohmann::json& d) {
  if (d.is_number()) return std::to_string(d.get<unsigned>()) + " threads";
  return std::to_string(d["host_to_device"].get<unsigned>()) + " threads up, " +
         std::to_string(d["device_to_host"].get<unsigned>()) + " down";
}

// " [min..max]" of row[key + "_min"], row[key + "_max"]; empty for a file from before the spreads
// (2026-11-30) or a row without them.
std::string spread_text(const nlohmann::json& row, const std::string& key, int precision) {
  const std::string lo = key + "_min", hi = key + "_max";
  if (!row.contains(lo) || !row.contains(hi)) return "";
  return " [" + fmt(row[lo].get<double>(), precision) + ".." + fmt(row[hi].get<double>(), precision) + "]";
}

// The number of trials of a run, or 0 for a file from before the method was recorded.
int trials_of(const nlohmann::json& run) {
  return run.contains("method") ? run["method"]["trials"].get<int>() : 0;
}

// The lowest per-trial ratio of the launch_scaling rows of `layout` (1e9 without rows).
double lowest_scaling_ratio(const nlohmann::json& run, const std::string& layout) {
  double lowest = 1e9;
  if (run.contains("launch_scaling"))
    for (const auto& t : run["launch_scaling"]["rows"])
      if (t["layout"] == layout) lowest = std::min(lowest, t["ratio"].get<double>());
  return lowest;
}

// The interop rows: cuBLAS on gpurt buffers and stream against cuBLAS on its own, and copies
// between two GPUs through Queue::copy against the native peer copy; each may say why it was skipped.
void print_interop(const nlohmann::json& in, std::ostream& os) {
  os << "\ninterop                                          gpurt       raw      gpurt/raw\n";
  const auto& g = in["cublas_sgemm"];
  if (g.contains("skipped"))
    os << "  cuBLAS SGEMM on gpurt buffers and stream: skipped (" << g["skipped"].get<std::string>() << ")\n";
  else
    os << "  cuBLAS SGEMM " << g["n"].get<std::size_t>() << "^3, gpurt buffers+stream (GFLOP/s)" << std::setw(8)
       << fmt(g["gpurt"].get<double>(), 0) << std::setw(10) << fmt(g["raw"].get<double>(), 0) << std::setw(11)
       << fmt(g["ratio"].get<double>()) << "   (raw: its own cuMemAlloc buffers and stream)\n";
  const auto& p = in["peer_copy"];
  if (p.is_object())
    os << "  peer copy GPU to GPU: skipped (" << p["skipped"].get<std::string>() << ")\n";
  else
    for (const auto& t : p)
      os << "  peer copy " << std::left << std::setw(8) << size_text(t["bytes"].get<std::uint64_t>()) << std::right
         << " to " << std::left << std::setw(8) << t["peer"].get<std::string>() << std::right << "(GB/s)" << std::setw(10)
         << fmt(t["gpurt"].get<double>(), 1) << std::setw(10) << fmt(t["raw"].get<double>(), 1) << std::setw(11)
         << fmt(t["ratio"].get<double>()) << (t["peer_access"].get<bool>() ? "" : "   (no peer access)") << "\n";
  if (!in.contains("relayed_copy")) return;  // a file from before the row existed
  const auto& rc = in["relayed_copy"];
  if (rc.is_object())
    os << "  copy between backends: skipped (" << rc["skipped"].get<std::string>() << ")\n";
  else
    for (const auto& t : rc)
      os << "  relayed copy " << size_text(t["bytes"].get<std::uint64_t>()) << " " << t["from"].get<std::string>()
         << " -> " << t["to"].get<std::string>() << " (GB/s)" << std::setw(8) << fmt(t["gpurt"].get<double>(), 1)
         << std::setw(10) << fmt(t["slower_link"].get<double>(), 1) << std::setw(11) << fmt(t["ratio"].get<double>())
         << "   (raw: the slower pinned host link it crosses)\n";
}

}  // namespace

void print_table(const nlohmann::json& r, std::ostream& os) {
  const auto& d = r["device"];
  os << "\n== " << d["selector"].get<std::string>() << " " << d["name"].get<std::string>() << " — driver "
     << d["driver"].get<std::string>() << ", " << d["backend_version"].get<std::string>() << "; raw API: "
     << d["raw_api"].get<std::string>() << "; " << r["date"].get<std::string>() << " on " << r["host"].get<std::string>()
     << (r["quick"].get<bool>() ? " (quick)" : "") << "\n";
  if (trials_of(r) > 0)
    os << "\neach row: median [min..max] of " << trials_of(r)
       << " trials, gpurt and raw alternating; gpurt/raw: median [min..max] of the per-trial ratios\n";
  if (r.contains("launch")) {  // a run of some --sections holds only those
    os << "\n" << std::left << std::setw(24) << "launch" << std::right << std::setw(11) << "gpurt" << std::setw(29) << "raw"
       << std::setw(26) << "gpurt/raw" << "\n";
    for (const char* k : {"async_us", "sync_us", "enqueue_four_args_us"}) {
      const auto& v = r["launch"][k];
      os << "  " << std::left << std::setw(22) << k << std::right << std::setw(8) << fmt(v["gpurt"].get<double>(), 2)
         << " us" << std::left << std::setw(18) << spread_text(v, "gpurt", 2) << std::right << std::setw(8)
         << fmt(v["raw"].get<double>(), 2) << " us" << std::left << std::setw(18) << spread_text(v, "raw", 2)
         << std::right << std::setw(8) << fmt(v["ratio"].get<double>()) << spread_text(v, "ratio", 3) << "\n";
    }
    if (r["launch"].contains("launches_per_trial"))
      os << "  (async_us: " << r["launch"]["launches_per_trial"].get<std::size_t>()
         << " empty 1x1 launches on one queue, one wait, per trial)\n";
    if (r["launch"].contains("async_us_tracing_on") && r["launch"]["async_us_tracing_on"].get<double>() > 0)
      os << "  async_us with a trace running " << fmt(r["launch"]["async_us_tracing_on"].get<double>(), 2)
         << " us (the rows above run with tracing off)\n";
  }
  if (r.contains("launch_scaling")) {
    os << "\nlaunch rate by host threads (launches/s, all threads together)\n"
       << std::setw(44) << "gpurt" << std::setw(13) << "raw" << std::setw(10) << "gpurt/raw" << "\n";
    for (const auto& t : r["launch_scaling"]["rows"])
      os << "  " << std::left << std::setw(17) << t["layout"].get<std::string>() << std::right << std::setw(3)
         << t["threads"].get<unsigned>() << " threads" << std::setw(14) << fmt(t["gpurt"].get<double>(), 0)
         << std::setw(13) << fmt(t["raw"].get<double>(), 0) << std::setw(10) << fmt(t["ratio"].get<double>())
         << spread_text(t, "ratio", 3) << "\n";
  }
  if (r.contains("alloc")) {
    os << "\nallocation (us per allocate + free)        gpurt       raw  gpurt/raw\n";
    for (const auto& t : r["alloc"]["rows"])
      os << "  " << std::left << std::setw(38)
         << (size_text(t["bytes"].get<std::uint64_t>()) + (t["first_use"].get<bool>() ? ", then a 4-byte write" : ""))
         << std::right << std::setw(9) << fmt(t["gpurt"].get<double>(), 2) << std::setw(10)
         << fmt(t["raw"].get<double>(), 2) << std::setw(10) << fmt(t["ratio"].get<double>())
         << spread_text(t, "ratio", 3) << "\n";
  }
  if (r.contains("queue_alloc")) {
    const auto& a = r["queue_alloc"];
    os << "\nqueue-ordered temporaries (us per step: allocate " << size_text(a["bytes"].get<std::uint64_t>())
       << " + fill + free, " << a["steps_per_trial"].get<std::size_t>() << " steps)\n"
       << "  Queue::alloc " << fmt(a["queue_alloc_us"].get<double>(), 2) << ", Device::alloc "
       << fmt(a["plain_alloc_us"].get<double>(), 2) << " (" << fmt(a["plain_over_queue"].get<double>(), 1) << " x)";
    if (a["raw_us"].is_number())
      os << ", raw queue-ordered " << fmt(a["raw_us"].get<double>(), 2) << " (Queue::alloc / raw "
         << fmt(a["queue_over_raw"].get<double>()) << ")";
    os << "\n  allocation and free alone: Queue::alloc " << fmt(a["queue_alloc_only_us"].get<double>(), 2)
       << ", Device::alloc " << fmt(a["plain_alloc_only_us"].get<double>(), 2) << " ("
       << fmt(a["plain_over_queue_alloc_only"].get<double>(), 1) << " x)\n";
  }
  if (r.contains("registered")) {
    const auto& g = r["registered"];
    os << "\nregistered host memory (a std::vector pinned in place by Device::register_host, against a HostBuffer)\n";
    if (g.contains("skipped")) {
      os << "  not measured: " << g["skipped"].get<std::string>() << "\n";
    } else {
      for (const auto& row : g["rows"])
        os << "  " << size_text(row["bytes"].get<std::uint64_t>()) << ": register+unregister "
           << fmt(row["register_us"].get<double>(), 1) << " us; upload " << fmt(row["upload_registered_gbps"].get<double>(), 1)
           << " GB/s vs " << fmt(row["upload_pinned_gbps"].get<double>(), 1) << " ("
           << fmt(row["upload_ratio"].get<double>()) << "), download " << fmt(row["download_registered_gbps"].get<double>(), 1)
           << " vs " << fmt(row["download_pinned_gbps"].get<double>(), 1) << " (" << fmt(row["download_ratio"].get<double>())
           << ")\n";
      os << "  target: " << g["target"].get<std::string>() << "\n";
    }
  }
  if (r.contains("transfers")) {
    os << "\ntransfers (GB/s)             size       gpurt       raw      gpurt/raw\n";
    for (const auto& t : r["transfers"]) {
      os << "  " << std::left << std::setw(17) << t["direction"].get<std::string>() << std::setw(9)
         << t["memory"].get<std::string>() << std::right << std::setw(9) << size_text(t["bytes"].get<std::uint64_t>())
         << std::setw(10) << fmt(t["gpurt"].get<double>(), 2) << std::setw(10) << fmt(t["raw"].get<double>(), 2)
         << std::setw(10) << fmt(t["ratio"].get<double>()) << spread_text(t, "ratio", 3) << "\n";
    }
  }
  if (r.contains("staging_threads")) {
    const auto& st = r["staging_threads"];
    os << "\nstaged pageable copies by host copy threads (GB/s; default " << default_threads_text(st["default_threads"])
       << ")\n";
    for (const auto& t : st["rows"])
      os << "  " << std::setw(3) << t["threads"].get<unsigned>() << " threads, " << size_text(t["bytes"].get<std::uint64_t>())
         << ":  host_to_device " << fmt(t["host_to_device"].get<double>(), 2) << ", device_to_host "
         << fmt(t["device_to_host"].get<double>(), 2) << "\n";
  }
  if (r.contains("build")) {
    const auto& b = r["build"];
    os << "\nprogram build (three tiny kernels): raw cold " << fmt(b["raw_cold_ms"].get<double>(), 1) << " ms, gpurt cold "
       << fmt(b["gpurt_cold_ms"].get<double>(), 1) << " ms (" << b["gpurt_cold_path"].get<std::string>()
       << "), gpurt from cache " << fmt(b["gpurt_cached_ms"].get<double>(), 2) << " ms ("
       << b["gpurt_cached_path"].get<std::string>() << ")\n";
  }
  if (r.contains("kernels")) {
    os << "\nlibrary kernels (device time)   GB/s     of copy bandwidth (" << fmt(r["copy_bandwidth_gbps"].get<double>(), 1)
       << " GB/s, read + write)\n";
    for (const auto& k : r["kernels"])
      os << "  " << std::left << std::setw(26) << k["name"].get<std::string>() << std::right << std::setw(10)
         << fmt(k["gbps"].get<double>(), 1) << std::setw(10) << fmt(k["fraction_of_copy"].get<double>()) << "\n";
  }
  if (r.contains("matmul")) {
    const auto& m = r["matmul"];
    print_matmul_rows(m, os);
    if (!m.contains("rows")) {  // a run without matmul rows
      os << "  matmul fp32 " << m["n"].get<std::size_t>() << "^3: " << fmt(m["gflops"].get<double>(), 1) << " GFLOP/s";
      if (!m["vendor_blas_gflops"].is_null())
        os << ", vendor SGEMM " << fmt(m["vendor_blas_gflops"].get<double>(), 1) << " GFLOP/s, ratio "
           << fmt(m["ratio_to_vendor_blas"].get<double>());
      else if (m.contains("vendor_blas_note"))
        os << " (no vendor SGEMM: " << m["vendor_blas_note"].get<std::string>() << ")";
      if (m.contains("max_error")) os << "; largest error vs fp64 " << fmt(m["max_error"].get<double>(), 8) << " of sum|a*b|";
      os << "\n";
      if (m.contains("tensor"))
        for (const auto& t : m["tensor"]) {
          os << "  matmul " << t["precision"].get<std::string>() << " (portable) " << t["n"].get<std::size_t>()
             << "^3: " << fmt(t["gflops"].get<double>(), 1) << " GFLOP/s";
          if (t.contains("vendor_blas_gflops"))
            os << ", cuBLAS same precision " << fmt(t["vendor_blas_gflops"].get<double>(), 1) << " GFLOP/s, ratio "
               << fmt(t["ratio_to_vendor_blas"].get<double>());
          os << "; largest error vs fp64 " << fmt(t["max_error"].get<double>(), 6) << " of sum|a*b|\n";
        }
      if (m.contains("tensor_note")) os << "  tensor-core matmul: " << m["tensor_note"].get<std::string>() << "\n";
    }
  }
  if (r.contains("interop")) print_interop(r["interop"], os);
  if (r.contains("graph")) print_graph_rows(r["graph"], os);
  if (r.contains("dialect")) print_dialect_rows(r["dialect"], os);
}

namespace {

// The spread columns of a CSV line (gpurt_min .. trials): empty for a row without them.
std::string csv_spread(const nlohmann::json& row, const std::string& base = "raw") {
  std::string out;
  const std::string keys[] = {"gpurt_min", "gpurt_max", base + "_min", base + "_max", "ratio_min", "ratio_max", "trials"};
  for (const std::string& k : keys) out += "," + (row.contains(k) ? row[k].dump() : std::string());
  return out;
}

}  // namespace

void write_csv(const nlohmann::json& runs, std::ostream& os) {
  os << "device,section,name,bytes,gpurt,raw,ratio,unit,gpurt_min,gpurt_max,raw_min,raw_max,ratio_min,ratio_max,"
        "trials\n";
  const std::string no_spread = ",,,,,,,";
  for (const auto& r : runs) {
    const std::string dev = r["device"]["selector"];
    for (const char* k : {"async_us", "sync_us", "enqueue_four_args_us"}) {
      const auto& v = r["launch"][k];
      os << dev << ",launch," << k << ",," << v["gpurt"] << "," << v["raw"] << "," << v["ratio"] << ",us"
         << csv_spread(v) << "\n";
    }
    if (r.contains("launch_scaling"))
      for (const auto& t : r["launch_scaling"]["rows"])
        os << dev << ",launch_scaling," << t["layout"].get<std::string>() << "_" << t["threads"] << "_threads,,"
           << t["gpurt"] << "," << t["raw"] << "," << t["ratio"] << ",launches/s" << csv_spread(t) << "\n";
    if (r.contains("alloc"))
      for (const auto& t : r["alloc"]["rows"])
        os << dev << ",alloc," << (t["first_use"].get<bool>() ? "alloc_write_free" : "alloc_free") << ","
           << t["bytes"] << "," << t["gpurt"] << "," << t["raw"] << "," << t["ratio"] << ",us" << csv_spread(t) << "\n";
    for (const auto& t : r["transfers"])
      os << dev << ",transfer," << t["direction"].get<std::string>() << "_" << t["memory"].get<std::string>() << ","
         << t["bytes"] << "," << t["gpurt"] << "," << t["raw"] << "," << t["ratio"] << ",GB/s" << csv_spread(t)
         << "\n";
    for (const auto& k : r["kernels"])
      os << dev << ",kernel," << k["name"].get<std::string>() << "," << k["bytes"] << "," << k["gbps"] << ",,"
         << k["fraction_of_copy"] << ",GB/s" << no_spread << "\n";
    os << dev << ",build,cold,," << r["build"]["gpurt_cold_ms"] << "," << r["build"]["raw_cold_ms"] << ",,ms"
       << no_spread << "\n";
    os << dev << ",build,cached,," << r["build"]["gpurt_cached_ms"] << ",,,ms" << no_spread << "\n";
    if (r.contains("interop")) {
      const auto& g = r["interop"]["cublas_sgemm"];
      if (!g.contains("skipped"))
        os << dev << ",interop,cublas_sgemm_" << g["n"] << ",," << g["gpurt"] << "," << g["raw"] << "," << g["ratio"]
           << ",GFLOP/s" << csv_spread(g) << "\n";
      if (r["interop"]["peer_copy"].is_array())
        for (const auto& t : r["interop"]["peer_copy"])
          os << dev << ",interop,peer_copy_to_" << t["peer"].get<std::string>() << "," << t["bytes"] << "," << t["gpurt"]
             << "," << t["raw"] << "," << t["ratio"] << ",GB/s" << csv_spread(t) << "\n";
      if (r["interop"].contains("relayed_copy") && r["interop"]["relayed_copy"].is_array())
        for (const auto& t : r["interop"]["relayed_copy"])
          os << dev << ",interop,relayed_copy_" << t["from"].get<std::string>() << "_to_" << t["to"].get<std::string>()
             << "," << t["bytes"] << "," << t["gpurt"] << "," << t["slower_link"] << "," << t["ratio"] << ",GB/s"
             << csv_spread(t, "slower_link") << "\n";
    }
    write_matmul_csv(dev, r["matmul"], os);
    if (r.contains("graph")) write_graph_csv(dev, r["graph"], os);
    if (r.contains("dialect")) write_dialect_csv(dev, r["dialect"], os);
  }
}

// Bandwidth against transfer size: one line per direction and memory kind, gpurt solid, raw dashed.
void write_svg(const nlohmann::json& r, std::ostream& os) {
  const double W = 900, H = 560, L = 80, R = 230, T = 50, B = 60;
  double ymin = 1e30, ymax = 0, xmin = 1e30, xmax = 0;
  for (const auto& t : r["transfers"]) {
    for (const char* who : {"gpurt", "raw"}) {
      ymax = std::max(ymax, t[who].get<double>());
      ymin = std::min(ymin, std::max(t[who].get<double>(), 1e-3));
    }
    xmin = std::min(xmin, std::log2(t["bytes"].get<double>()));
    xmax = std::max(xmax, std::log2(t["bytes"].get<double>()));
  }
  // Both axes logarithmic: sizes span 4 KiB..1 GiB, bandwidths from under 1 GB/s (small pageable
  // copies) to TB/s (device to device).
  const double ylo = std::floor(std::log10(ymin)), yhi = std::max(ylo + 1, std::ceil(std::log10(ymax)));
  if (xmax <= xmin) xmax = xmin + 1;
  auto X = [&](double bytes) { return L + (std::log2(bytes) - xmin) / (xmax - xmin) * (W - L - R); };
  auto Y = [&](double gbps) { return H - B - (std::log10(std::max(gbps, 1e-3)) - ylo) / (yhi - ylo) * (H - T - B); };
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << L << "\" y=\"28\" font-size=\"16\">Transfer bandwidth, gpurt (solid) vs "
     << r["device"]["raw_api"].get<std::string>() << " (dashed): " << r["device"]["selector"].get<std::string>() << " "
     << r["device"]["name"].get<std::string>() << "</text>\n";
  for (double e = ylo; e <= yhi + 1e-9; e += 1) {
    const double v = std::pow(10.0, e);
    os << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << Y(v) << "\" y2=\"" << Y(v)
       << "\" stroke=\"#ddd\"/><text x=\"" << L - 8 << "\" y=\"" << Y(v) + 4 << "\" text-anchor=\"end\">"
       << (v < 1 ? fmt(v, 2) : fmt(v, 0)) << "</text>\n";
  }
  for (double e = xmin; e <= xmax + 1e-9; e += 2)
    os << "<text x=\"" << X(std::exp2(e)) << "\" y=\"" << H - B + 18 << "\" text-anchor=\"middle\">"
       << size_text(static_cast<std::uint64_t>(std::exp2(e))) << "</text>\n";
  os << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 15 << "\" text-anchor=\"middle\">transfer size</text>\n"
     << "<text transform=\"translate(20," << (T + H - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">GB/s (log scale)</text>\n";
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  std::vector<std::string> series;
  for (const auto& t : r["transfers"]) {
    const std::string key = t["direction"].get<std::string>() + " " + t["memory"].get<std::string>();
    if (std::find(series.begin(), series.end(), key) == series.end()) series.push_back(key);
  }
  for (std::size_t s = 0; s < series.size(); ++s) {
    for (const char* who : {"gpurt", "raw"}) {
      os << "<polyline fill=\"none\" stroke=\"" << colors[s % 6] << "\" stroke-width=\"2\""
         << (std::string(who) == "raw" ? " stroke-dasharray=\"6,4\"" : "") << " points=\"";
      for (const auto& t : r["transfers"])
        if (t["direction"].get<std::string>() + " " + t["memory"].get<std::string>() == series[s])
          os << X(t["bytes"].get<double>()) << "," << Y(t[who].get<double>()) << " ";
      os << "\"/>\n";
    }
    os << "<line x1=\"" << W - R + 15 << "\" x2=\"" << W - R + 45 << "\" y1=\"" << T + 20 + 20 * s << "\" y2=\""
       << T + 20 + 20 * s << "\" stroke=\"" << colors[s % 6] << "\" stroke-width=\"3\"/><text x=\"" << W - R + 52
       << "\" y=\"" << T + 24 + 20 * s << "\">" << series[s] << "</text>\n";
  }
  os << "</svg>\n";
}

namespace {

// The results as Markdown (docs/PERFORMANCE.md is this output, never typed by hand).
// The page's head: what was run and how every row is measured.
void write_method(const nlohmann::json& doc, std::ostream& os) {
  os << "# Performance\n\nGenerated by `gpurt bench --render` from the JSON of this run; do not edit by hand.\n\n"
     << "Command: `" << doc["command"].get<std::string>() << "`\n\n"
     << "How the rows are measured. Launch and transfer figures are host wall time, in the same process on the same "
        "device: in each row gpurt and the raw API take turns, trial by trial (gpurt, raw, gpurt, raw, ...; 7 trials "
        "each unless `--trials N` says otherwise, 3 with `--quick`), each after a warm-up, so that drift (clocks, "
        "other load) affects both alike. The raw side calls the vendor API directly with the same kernels, loops and "
        "sizes: bench/raw/, which loads libcuda, NVRTC, cuBLAS or libOpenCL itself, apart from gpurt's plugins (older "
        "runs made the same calls from inside the plugins). Each side's figure is the median of its "
        "trials, with its spread in brackets: [lowest..highest trial]. The ratio gpurt / raw is the median of the "
        "per-trial ratios (gpurt's trial i against raw's trial i, taken back to back), with their [min..max]: a "
        "range that lies wholly on one side of 1 is a difference the run's own noise does not explain; one that "
        "straddles 1 is not a difference at all. For launch times a ratio above 1 means gpurt is slower; for "
        "bandwidth and launch rates, below 1. Runs without spreads in their JSON (before 2026-11-30) show the ratio of the "
        "two medians. async_us is an independent harness: 100,000 empty 1x1 launches on one queue and "
        "one wait per trial (10,000 with --quick). The launch-rate rows give the aggregate launches per second of "
        "the empty 1x1 kernel from 1, 2, 4, 8 and 16 host threads, each with a queue of its own or all on one "
        "queue, against raw CUDA streams / OpenCL command queues in the same layout: 80,000 launches per trial split "
        "evenly over the threads, released together, every queue waited for once; one harness "
        "(bench/raw/threaded.hpp) times both sides. Kernel figures are device time between timed events: streaming "
        "kernels 5 back-to-back calls per pair on random inputs, median of 7; matrix multiplies in runs without matmul rows median "
        "of 5 single calls on constant inputs (their error is measured on random ones), and in runs with them host "
        "wall time of back-to-back calls to the queue's end, the same on both sides, gpurt's portable and vendor "
        "paths alternating with the vendor BLAS called directly at the same precision, on the same inputs: random "
        "values in [-1, 1) from the H200 runs docs/bench/h200-2026-12-01-*.json on (later runs' matmul timing names its "
        "inputs), 2^-7 everywhere before "
        "(on which cuBLAS's tensor-core GEMMs ran up to 10 % faster than on random data). device_to_device counts bytes copied; "
        "the copy bandwidth the kernels are compared with counts bytes read plus bytes written. On a CPU device (device "
        "type cpu, e.g. PoCL) the rows sized for GPUs are measured smaller, so that a full run ends in minutes: 20,000 "
        "launches for async_us, 16,000 per launch-rate trial, transfers and peer copies up to 256 MiB, the staging "
        "sweep at 64 MiB, "
        "matmul rows at 1024^3 (square) and 4096x64x1024 (tall-skinny), the OpenMP matmul baseline at 2048^3 (4096^3 "
        "before 2026-12-01), 10,000 kernels per recorded-chain figure (docs/bench/approaches.md, \"Row sizes on CPU "
        "devices\"); each run's JSON holds the sizes it used."
     << [&] {
          for (const auto& r : doc["runs"])
            if (!r.contains("method"))
              return " The run rendered here predates the spreads (2026-11-30): 5 trials per row (3 with --quick), async_us over "
                     "20,000 launches (2,000 with --quick), the ratio of the two medians, no spreads and no launch-rate rows.";
          return "";
        }()
     << "\n\n"
     << "Reproduce: `scripts/gpu-check.sh` on the GPU machine runs the command above (by hand: `gpurt bench -d "
        "cuda:0,opencl:1 --trials 7 --json bench.json`, or one device per process: `gpurt bench -d cuda:0 --json "
        "cuda.json`, ...); then `gpurt bench --render <its bench.json or the files of each device> --markdown "
        "docs/PERFORMANCE.md --svg docs/bench/h200.svg`.\n\n";
}

// The targets table: each device's launch, transfer, allocation, matmul and graph targets, met or not.
void write_targets(const nlohmann::json& doc, std::ostream& os) {
  os << "## Targets\n\n| device | target | measured | met |\n| --- | --- | ---: | --- |\n";
  for (const auto& r : doc["runs"]) {
    const std::string sel = r["device"]["selector"];
    const auto& av = r["launch"]["async_us"];
    const auto& sv = r["launch"]["sync_us"];
    const double a = av["ratio"], sy = sv["ratio"];
    os << "| " << sel << " | asynchronous launch ("
       << (r["launch"].contains("launches_per_trial") ? std::to_string(r["launch"]["launches_per_trial"].get<std::size_t>())
                                                      : std::string("many"))
       << " empty launches, one wait) <= 1.05 x raw | " << fmt(a)
       << spread_text(av, "ratio", 3) << " | " << (a <= 1.05 ? "yes" : "no") << " |\n";
    os << "| " << sel << " | synchronous round trip <= 1.05 x raw | " << fmt(sy) << spread_text(sv, "ratio", 3)
       << " | " << (sy <= 1.05 ? "yes" : "no") << " |\n";
    for (const char* layout : {"queue_per_thread", "shared_queue"}) {
      const double lowest = lowest_scaling_ratio(r, layout);
      if (lowest < 1e9)
        os << "| " << sel << " | aggregate launch rate >= 0.9 x raw at 1-16 host threads, " << layout
           << " (lowest ratio) | " << fmt(lowest) << " | " << (lowest >= 0.9 ? "yes" : "no") << " |\n";
    }
    if (r.contains("queue_alloc")) {
      const auto& qa = r["queue_alloc"];
      if (qa["raw_us"].is_number())
        os << "| " << sel << " | queue-ordered temporaries (allocate 1 MiB + fill + free) <= 1.1 x raw "
           << "cuMemAllocAsync/cuMemFreeAsync | " << fmt(qa["queue_over_raw"].get<double>()) << " | "
           << (qa["queue_over_raw"].get<double>() <= 1.1 ? "yes" : "no") << " |\n";
      os << "| " << sel << " | queue-ordered temporaries >= 10 x faster than Device::alloc each step | "
         << fmt(qa["plain_over_queue"].get<double>(), 1) << " | " << (qa["plain_over_queue"].get<double>() >= 10 ? "yes" : "no")
         << " |\n";
      os << "| " << sel << " | the same, allocation and free alone (no fill) | "
         << fmt(qa["plain_over_queue_alloc_only"].get<double>(), 1) << " | "
         << (qa["plain_over_queue_alloc_only"].get<double>() >= 10 ? "yes" : "no") << " |\n";
    }
    double worst = 1e9;
    for (const auto& t : r["transfers"])
      if (t["memory"] == "pinned" && t["bytes"].get<std::uint64_t>() >= (1u << 20)) worst = std::min(worst, t["ratio"].get<double>());
    if (worst < 1e9)
      os << "| " << sel << " | pinned transfers >= 0.97 x raw at every size >= 1 MiB (lowest ratio) | " << fmt(worst)
         << " | " << (worst >= 0.97 ? "yes" : "no") << " |\n";
    // Pageable copies through the transfer engine, per direction.
    for (const char* dir : {"host_to_device", "device_to_host"}) {
      double lowest_raw = 1e9, lowest_pinned = 1e9, lowest_any = 1e9;
      for (const auto& t : r["transfers"]) {
        if (t["direction"] != dir || t["memory"] != "pageable") continue;
        lowest_any = std::min(lowest_any, t["ratio"].get<double>());
        if (t["bytes"].get<std::uint64_t>() < (64u << 20)) continue;
        lowest_raw = std::min(lowest_raw, t["ratio"].get<double>());
        for (const auto& p : r["transfers"])
          if (p["direction"] == dir && p["memory"] == "pinned" && p["bytes"] == t["bytes"])
            lowest_pinned = std::min(lowest_pinned, t["gpurt"].get<double>() / p["gpurt"].get<double>());
      }
      if (lowest_raw >= 1e9) continue;
      os << "| " << sel << " | pageable " << dir << " >= 3 x raw at 64 MiB and above (lowest) | " << fmt(lowest_raw)
         << " | " << (lowest_raw >= 3 ? "yes" : "no") << " |\n";
      os << "| " << sel << " | pageable " << dir << " >= 0.8 x pinned at 64 MiB and above (lowest) | "
         << fmt(lowest_pinned) << " | " << (lowest_pinned >= 0.8 ? "yes" : "no") << " |\n";
      os << "| " << sel << " | pageable " << dir << " never slower than raw (lowest ratio, any size; 3% noise) | "
         << fmt(lowest_any) << " | " << (lowest_any >= 0.97 ? "yes" : "no") << " |\n";
    }
    const std::map<std::string, double> kernel_targets{{"copy", 0.9}, {"fill", 0.9}, {"axpy", 0.9},
                                                       {"reduce_sum", 0.9}, {"transpose", 0.8},
                                                       {"scan_inclusive", 0.7}, {"conv2d_5x5", 0.7}};
    for (const auto& k : r["kernels"]) {  // the run's own targets, else those before it
      const std::string name = k["name"];
      auto it = kernel_targets.find(name);
      if (k.contains("target") ? k["target"].is_null() : it == kernel_targets.end()) continue;
      const double target = k.contains("target") ? k["target"].get<double>() : it->second;
      const double f = k["fraction_of_copy"];
      os << "| " << sel << " | " << name << " >= " << fmt(target, 2) << " x copy bandwidth"
         << (name == "conv2d_5x5" ? " (its traffic floor: read + write once)" : "") << " | " << fmt(f) << " | "
         << (f >= target ? "yes" : "no") << " |\n";
    }
    const auto& m = r["matmul"];
    if (m.contains("ratio_to_vendor_blas") && !m.contains("rows"))  // the matmul rows: in their own section
      os << "| " << sel << " | fp32 matmul 4096^3 >= 0.5 x cuBLAS SGEMM | " << fmt(m["ratio_to_vendor_blas"].get<double>())
         << " | " << (m["ratio_to_vendor_blas"].get<double>() >= 0.5 ? "yes" : "no") << " |\n";
    if (r.contains("graph")) write_graph_targets(sel, r["graph"], os);
  }
  // The portable matmul on OpenCL against CUDA, when both ran on one GPU.
  double cuda_ms = 0, ocl_ms = 0;
  for (const auto& r : doc["runs"]) {
    if (r["device"]["backend"] == "cuda" && !r["quick"].get<bool>()) cuda_ms = r["matmul"]["milliseconds"];
    if (r["device"]["backend"] == "opencl" && r["device"]["name"] == doc["runs"][0]["device"]["name"] &&
        !r["quick"].get<bool>())
      ocl_ms = r["matmul"]["milliseconds"];
  }
  if (cuda_ms > 0 && ocl_ms > 0)
    os << "| both | portable matmul on NVIDIA OpenCL within 10% of its CUDA time (OpenCL / CUDA) | "
       << fmt(ocl_ms / cuda_ms) << " | " << (ocl_ms / cuda_ms <= 1.1 ? "yes" : "no") << " |\n";
}

// One section per device: its charts and every row measured on it.
void write_device_sections(const nlohmann::json& doc, std::ostream& os) {
  for (const auto& r : doc["runs"]) {
    const auto& d = r["device"];
    os << "\n## " << d["selector"].get<std::string>() << ": " << d["name"].get<std::string>() << "\n\n"
       << "Driver " << d["driver"].get<std::string>() << " (" << d["backend_version"].get<std::string>() << "); raw API "
       << d["raw_api"].get<std::string>() << "; " << r["date"].get<std::string>() << "; host " << r["host"].get<std::string>()
       << (r["quick"].get<bool>() ? "; quick mode" : "") << ".\n\n";
    if (!r["quick"].get<bool>())  // the GPU machine's charts (--svg docs/bench/h200.svg); none for a quick CI run
      os << "![transfer bandwidth](bench/h200-" << [&] {
        std::string t = d["selector"].get<std::string>();
        for (char& c : t) if (c == ':') c = '_';
        return t;
      }() << ".svg)\n\n";
    os << "| launch | gpurt | raw | gpurt/raw |\n| --- | ---: | ---: | ---: |\n";
    for (const char* k : {"async_us", "sync_us", "enqueue_four_args_us"}) {
      const auto& v = r["launch"][k];
      os << "| " << k << " | " << fmt(v["gpurt"].get<double>(), 2) << " µs" << spread_text(v, "gpurt", 2) << " | "
         << fmt(v["raw"].get<double>(), 2) << " µs" << spread_text(v, "raw", 2) << " | "
         << fmt(v["ratio"].get<double>()) << spread_text(v, "ratio", 3) << " |\n";
    }
    if (r.contains("launch_scaling")) {
      os << "\n| launch rate (launches/s) | host threads | gpurt | raw | gpurt/raw |\n"
            "| --- | ---: | ---: | ---: | ---: |\n";
      for (const auto& t : r["launch_scaling"]["rows"])
        os << "| " << t["layout"].get<std::string>() << " | " << t["threads"].get<unsigned>() << " | "
           << fmt(t["gpurt"].get<double>(), 0) << spread_text(t, "gpurt", 0) << " | " << fmt(t["raw"].get<double>(), 0)
           << spread_text(t, "raw", 0) << " | " << fmt(t["ratio"].get<double>()) << spread_text(t, "ratio", 3)
           << " |\n";
    }
    os << "\n| transfer | memory | size | gpurt GB/s | raw GB/s | gpurt/raw |\n| --- | --- | ---: | ---: | ---: | ---: |\n";
    for (const auto& t : r["transfers"])
      os << "| " << t["direction"].get<std::string>() << " | " << t["memory"].get<std::string>() << " | "
         << size_text(t["bytes"].get<std::uint64_t>()) << " | " << fmt(t["gpurt"].get<double>(), 2) << " | "
         << fmt(t["raw"].get<double>(), 2) << " | " << fmt(t["ratio"].get<double>()) << spread_text(t, "ratio", 3)
         << " |\n";
    const auto& b = r["build"];
    os << "\nProgram build, three tiny kernels: raw cold " << fmt(b["raw_cold_ms"].get<double>(), 1)
       << " ms; gpurt cold " << fmt(b["gpurt_cold_ms"].get<double>(), 1) << " ms; gpurt from the cache "
       << fmt(b["gpurt_cached_ms"].get<double>(), 2) << " ms (in-process).\n\n";
    os << "| library kernel | GB/s | of copy bandwidth (" << fmt(r["copy_bandwidth_gbps"].get<double>(), 0)
       << " GB/s) |\n| --- | ---: | ---: |\n";
    for (const auto& k : r["kernels"])
      os << "| " << k["name"].get<std::string>() << " | " << fmt(k["gbps"].get<double>(), 1) << " | "
         << fmt(k["fraction_of_copy"].get<double>())
         << (k.contains("target") && k["target"].is_number()
                 ? " (≥ " + fmt(k["target"].get<double>(), 2) + ": " + (k["met"].get<bool>() ? "met)" : "**gap**)")
                 : std::string())
         << " |\n";
    const auto& m = r["matmul"];
    if (m.contains("rows")) write_matmul_markdown(m, os);
    else {  // a run without matmul rows
      os << "\nfp32 matrix multiply " << m["n"].get<std::size_t>() << "³ (portable kernel): "
         << fmt(m["gflops"].get<double>(), 0) << " GFLOP/s";
      if (!m["vendor_blas_gflops"].is_null())
        os << "; vendor SGEMM " << fmt(m["vendor_blas_gflops"].get<double>(), 0) << " GFLOP/s (ratio "
           << fmt(m["ratio_to_vendor_blas"].get<double>()) << ")";
      if (m.contains("max_error")) os << " Largest error against fp64: " << fmt(m["max_error"].get<double>(), 8) << " of sum|a*b|.";
      os << "\n";
      if (m.contains("tensor") && !m["tensor"].empty()) {
        os << "\n| tensor-core matmul " << m["n"].get<std::size_t>() << "³ | GFLOP/s | cuBLAS, same precision | ratio | "
              "largest error vs fp64 (of sum abs(a*b)) |\n| --- | ---: | ---: | ---: | ---: |\n";
        for (const auto& t : m["tensor"])
          os << "| " << t["precision"].get<std::string>() << " | " << fmt(t["gflops"].get<double>(), 0) << " | "
             << (t.contains("vendor_blas_gflops") ? fmt(t["vendor_blas_gflops"].get<double>(), 0) : std::string("-")) << " | "
             << (t.contains("ratio_to_vendor_blas") ? fmt(t["ratio_to_vendor_blas"].get<double>()) : std::string("-"))
             << " | " << fmt(t["max_error"].get<double>(), 7) << " |\n";
      }
    }
    if (r.contains("staging_threads")) {
      const auto& rows = r["staging_threads"]["rows"];  // the size the run used (GPU, CPU device, --quick)
      os << "\nStaged pageable copies of "
         << (!rows.empty() && rows[0].contains("bytes") ? size_text(rows[0]["bytes"].get<std::uint64_t>()) : "256 MiB")
         << " by host copy threads (GB/s; default "
         << default_threads_text(r["staging_threads"]["default_threads"])
         << "):\n\n| threads | host_to_device | device_to_host |\n"
            "| ---: | ---: | ---: |\n";
      for (const auto& t : r["staging_threads"]["rows"])
        os << "| " << t["threads"].get<unsigned>() << " | " << fmt(t["host_to_device"].get<double>(), 2) << " | "
           << fmt(t["device_to_host"].get<double>(), 2) << " |\n";
    }
    if (r.contains("interop")) {
      const auto& in = r["interop"];
      const auto& g = in["cublas_sgemm"];
      os << "\n| interop | gpurt | raw | gpurt/raw |\n| --- | ---: | ---: | ---: |\n";
      if (g.contains("skipped"))
        os << "| cuBLAS SGEMM on gpurt buffers and stream | skipped: " << g["skipped"].get<std::string>() << " | | |\n";
      else
        os << "| cuBLAS SGEMM " << g["n"].get<std::size_t>() << "³ on gpurt buffers and stream (raw: its own "
           << "cuMemAlloc buffers and stream), GFLOP/s | " << fmt(g["gpurt"].get<double>(), 0) << " | "
           << fmt(g["raw"].get<double>(), 0) << " | " << fmt(g["ratio"].get<double>()) << " |\n";
      if (in["peer_copy"].is_object())
        os << "| peer copy GPU to GPU | skipped: " << in["peer_copy"]["skipped"].get<std::string>() << " | | |\n";
      else
        for (const auto& t : in["peer_copy"])
          os << "| Queue::copy " << size_text(t["bytes"].get<std::uint64_t>()) << " to " << t["peer"].get<std::string>()
             << " (raw: cuMemcpyPeerAsync" << (t["peer_access"].get<bool>() ? ", peer access" : ", no peer access")
             << "), GB/s | " << fmt(t["gpurt"].get<double>(), 1) << " | " << fmt(t["raw"].get<double>(), 1) << " | "
             << fmt(t["ratio"].get<double>()) << " |\n";
      if (in.contains("relayed_copy")) {
        if (in["relayed_copy"].is_object())
          os << "| copy between backends | skipped: " << in["relayed_copy"]["skipped"].get<std::string>() << " | | |\n";
        else
          for (const auto& t : in["relayed_copy"])
            os << "| Queue::copy " << size_text(t["bytes"].get<std::uint64_t>()) << " " << t["from"].get<std::string>()
               << " → " << t["to"].get<std::string>()
               << ", relayed through host memory (raw: the slower pinned host link it crosses), GB/s | "
               << fmt(t["gpurt"].get<double>(), 1) << " | " << fmt(t["slower_link"].get<double>(), 1) << " | "
               << fmt(t["ratio"].get<double>()) << " |\n";
      }
    }
    if (r.contains("graph")) write_graph_markdown(r["graph"], os);
    if (r.contains("dialect")) write_dialect_markdown(r["dialect"], os);
    if (r["launch"].contains("async_us_tracing_on"))
      os << "\nWith a trace running (GPURT_TRACE), an asynchronous launch costs "
         << fmt(r["launch"]["async_us_tracing_on"].get<double>(), 2)
         << " µs; the launch rows above ran with tracing off.\n";
  }
}

}  // namespace

void write_markdown(const nlohmann::json& doc, const GapCauses& causes, std::ostream& os) {
  write_method(doc, os);
  write_targets(doc, os);
  write_library_markdown(doc["runs"], causes, os);
  write_device_sections(doc, os);
}

// Appends the record (what was changed, what it was expected to do, and what it did), less its
// "- gap <selector> <row>: <cause>" lines, which the library section shows beside their figures.
void append_approaches(const std::string& text, std::ostream& os) {
  if (text.empty()) return;
  os << "\n";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, 6, "- gap ") != 0) os << line << "\n";
}

}  // namespace gpurt::bench::render
