// `gpurt bench`: gpurt against the raw vendor API on each chosen device, in one run. Prints a
// table; writes JSON, CSV and an SVG chart of transfer bandwidth against size on request.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "gpurt/gpurt.hpp"
#include "runner.hpp"

namespace gpurt::tool {

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

void print_table(const nlohmann::json& r, std::ostream& os) {
  const auto& d = r["device"];
  os << "\n== " << d["selector"].get<std::string>() << " " << d["name"].get<std::string>() << " — driver "
     << d["driver"].get<std::string>() << ", " << d["backend_version"].get<std::string>() << "; raw API: "
     << d["raw_api"].get<std::string>() << "; " << r["date"].get<std::string>() << " on " << r["host"].get<std::string>()
     << (r["quick"].get<bool>() ? " (quick)" : "") << "\n";
  os << "\nlaunch                       gpurt       raw      gpurt/raw\n";
  for (const char* k : {"async_us", "sync_us", "enqueue_four_args_us"}) {
    const auto& v = r["launch"][k];
    os << "  " << std::left << std::setw(26) << k << std::right << std::setw(8) << fmt(v["gpurt"].get<double>(), 2)
       << " us " << std::setw(7) << fmt(v["raw"].get<double>(), 2) << " us " << std::setw(8)
       << fmt(v["ratio"].get<double>()) << "\n";
  }
  os << "\ntransfers (GB/s)             size       gpurt       raw      gpurt/raw\n";
  for (const auto& t : r["transfers"]) {
    os << "  " << std::left << std::setw(17) << t["direction"].get<std::string>() << std::setw(9)
       << t["memory"].get<std::string>() << std::right << std::setw(9) << size_text(t["bytes"].get<std::uint64_t>())
       << std::setw(10) << fmt(t["gpurt"].get<double>(), 2) << std::setw(10) << fmt(t["raw"].get<double>(), 2)
       << std::setw(10) << fmt(t["ratio"].get<double>()) << "\n";
  }
  const auto& b = r["build"];
  os << "\nprogram build (three tiny kernels): raw cold " << fmt(b["raw_cold_ms"].get<double>(), 1) << " ms, gpurt cold "
     << fmt(b["gpurt_cold_ms"].get<double>(), 1) << " ms (" << b["gpurt_cold_path"].get<std::string>()
     << "), gpurt from cache " << fmt(b["gpurt_cached_ms"].get<double>(), 2) << " ms ("
     << b["gpurt_cached_path"].get<std::string>() << ")\n";
  os << "\nlibrary kernels (device time)   GB/s     of copy bandwidth (" << fmt(r["copy_bandwidth_gbps"].get<double>(), 1)
     << " GB/s, read + write)\n";
  for (const auto& k : r["kernels"])
    os << "  " << std::left << std::setw(26) << k["name"].get<std::string>() << std::right << std::setw(10)
       << fmt(k["gbps"].get<double>(), 1) << std::setw(10) << fmt(k["fraction_of_copy"].get<double>()) << "\n";
  const auto& m = r["matmul"];
  os << "  matmul fp32 " << m["n"].get<std::size_t>() << "^3: " << fmt(m["gflops"].get<double>(), 1) << " GFLOP/s";
  if (!m["vendor_blas_gflops"].is_null())
    os << ", vendor SGEMM " << fmt(m["vendor_blas_gflops"].get<double>(), 1) << " GFLOP/s, ratio "
       << fmt(m["ratio_to_vendor_blas"].get<double>());
  else if (m.contains("vendor_blas_note"))
    os << " (no vendor SGEMM: " << m["vendor_blas_note"].get<std::string>() << ")";
  os << "\n";
}

void write_csv(const nlohmann::json& runs, std::ostream& os) {
  os << "device,section,name,bytes,gpurt,raw,ratio,unit\n";
  for (const auto& r : runs) {
    const std::string dev = r["device"]["selector"];
    for (const char* k : {"async_us", "sync_us", "enqueue_four_args_us"}) {
      const auto& v = r["launch"][k];
      os << dev << ",launch," << k << ",," << v["gpurt"] << "," << v["raw"] << "," << v["ratio"] << ",us\n";
    }
    for (const auto& t : r["transfers"])
      os << dev << ",transfer," << t["direction"].get<std::string>() << "_" << t["memory"].get<std::string>() << ","
         << t["bytes"] << "," << t["gpurt"] << "," << t["raw"] << "," << t["ratio"] << ",GB/s\n";
    for (const auto& k : r["kernels"])
      os << dev << ",kernel," << k["name"].get<std::string>() << "," << k["bytes"] << "," << k["gbps"] << ",,"
         << k["fraction_of_copy"] << ",GB/s\n";
    os << dev << ",build,cold,," << r["build"]["gpurt_cold_ms"] << "," << r["build"]["raw_cold_ms"] << ",,ms\n";
    os << dev << ",build,cached,," << r["build"]["gpurt_cached_ms"] << ",,,ms\n";
  }
}

// Bandwidth against transfer size: one line per direction and memory kind, gpurt solid, raw dashed.
void write_svg(const nlohmann::json& r, std::ostream& os) {
  const double W = 900, H = 560, L = 80, R = 230, T = 50, B = 60;
  double ymax = 1, xmin = 1e30, xmax = 0;
  for (const auto& t : r["transfers"]) {
    ymax = std::max({ymax, t["gpurt"].get<double>(), t["raw"].get<double>()});
    xmin = std::min(xmin, std::log2(t["bytes"].get<double>()));
    xmax = std::max(xmax, std::log2(t["bytes"].get<double>()));
  }
  ymax *= 1.1;
  if (xmax <= xmin) xmax = xmin + 1;
  auto X = [&](double bytes) { return L + (std::log2(bytes) - xmin) / (xmax - xmin) * (W - L - R); };
  auto Y = [&](double gbps) { return H - B - gbps / ymax * (H - T - B); };
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << L << "\" y=\"28\" font-size=\"16\">Transfer bandwidth, gpurt (solid) vs "
     << r["device"]["raw_api"].get<std::string>() << " (dashed): " << r["device"]["selector"].get<std::string>() << " "
     << r["device"]["name"].get<std::string>() << "</text>\n";
  for (int i = 0; i <= 5; ++i) {
    const double v = ymax * i / 5;
    os << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << Y(v) << "\" y2=\"" << Y(v)
       << "\" stroke=\"#ddd\"/><text x=\"" << L - 8 << "\" y=\"" << Y(v) + 4 << "\" text-anchor=\"end\">" << fmt(v, 1)
       << "</text>\n";
  }
  for (double e = xmin; e <= xmax + 1e-9; e += 2)
    os << "<text x=\"" << X(std::exp2(e)) << "\" y=\"" << H - B + 18 << "\" text-anchor=\"middle\">"
       << size_text(static_cast<std::uint64_t>(std::exp2(e))) << "</text>\n";
  os << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 15 << "\" text-anchor=\"middle\">transfer size</text>\n"
     << "<text transform=\"translate(20," << (T + H - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">GB/s</text>\n";
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

std::string per_device_path(const std::string& path, const std::string& selector, bool several) {
  if (!several) return path;
  std::string tag = selector;
  for (char& c : tag)
    if (c == ':') c = '_';
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path + "-" + tag : path.substr(0, dot) + "-" + tag + path.substr(dot);
}

}  // namespace

int run_bench(const BenchCommand& cmd) {
  std::vector<Device> devs;
  if (cmd.devices.empty()) devs.push_back(default_device());
  for (const std::string& sel : cmd.devices) devs.push_back(device(sel));
  const bool tty = ::isatty(2);
  nlohmann::json runs = nlohmann::json::array();
  for (const Device& d : devs) {
    bench::Options opt;
    opt.quick = cmd.quick;
    opt.progress = [&](const std::string& what) {
      if (tty) std::cerr << "\r\033[K[" << d.selector() << "] " << what << std::flush;
      else std::cerr << "[" << d.selector() << "] " << what << "\n";
    };
    runs.push_back(bench::run(d, opt));
    if (tty) std::cerr << "\r\033[K";
    print_table(runs.back(), std::cout);
    if (!cmd.svg.empty()) {
      std::ofstream out(per_device_path(cmd.svg, d.selector(), devs.size() > 1));
      write_svg(runs.back(), out);
    }
  }
  nlohmann::json doc{{"command", cmd.command_line}, {"runs", runs}};
  if (!cmd.json.empty()) std::ofstream(cmd.json) << doc.dump(2) << "\n";
  if (!cmd.csv.empty()) {
    std::ofstream out(cmd.csv);
    write_csv(runs, out);
  }
  return 0;
}

}  // namespace gpurt::tool
