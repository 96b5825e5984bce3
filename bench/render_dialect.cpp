// The dialect rows of `gpurt bench` as a table, CSV and Markdown (see render_dialect.hpp).
#include "render_dialect.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>

#include "render_number.hpp"

namespace gpurt::bench::render {

void print_dialect_rows(const nlohmann::json& d, std::ostream& os) {
  if (d.contains("skipped")) {
    os << "\ndialect rows: skipped: " << d["skipped"].get<std::string>() << "\n";
    return;
  }
  os << "\ndialect (portable kernel against its " << d["native"].get<std::string>() << " twin, "
     << d["elements"].get<std::size_t>() << " elements, device time of " << d["launches_per_trial"].get<int>()
     << " launches a trial)\n";
  os << std::left << std::setw(16) << "row" << std::right << std::setw(14) << "portable GB/s" << std::setw(13)
     << "native GB/s" << std::setw(26) << "portable/native time" << "\n";
  for (const auto& r : d["rows"]) {
    os << std::left << std::setw(16) << r["name"].get<std::string>() << std::right;
    if (r.contains("wrong")) {
      os << "  WRONG: " << r["wrong"].get<std::string>() << "\n";
      continue;
    }
    os << std::setw(14) << num(r["portable_gbps"], 1) << std::setw(13) << num(r["native_gbps"], 1) << std::setw(10)
       << num(r["ratio"], 3) << " [" << num(r["ratio_low"], 3) << ".." << num(r["ratio_high"], 3) << "]\n";
  }
}

void write_dialect_csv(const std::string& device, const nlohmann::json& d, std::ostream& os) {
  if (d.contains("skipped")) return;
  const double elements = d["elements"].get<double>();
  for (const auto& r : d["rows"]) {
    if (r.contains("wrong")) continue;
    const double bytes = r["name"] == "float4_copy" ? 8.0 * elements : 4.0 * elements;
    os << device << ",dialect," << r["name"].get<std::string>() << "," << static_cast<long long>(bytes) << ","
       << r["portable_gbps"] << "," << r["native_gbps"] << "," << r["ratio"] << ",GB/s\n";
  }
}

void write_dialect_markdown(const nlohmann::json& d, std::ostream& os) {
  if (d.contains("skipped")) return;
  os << "\n| dialect row (portable against " << d["native"].get<std::string>()
     << ") | portable GB/s | native GB/s | portable / native time |\n| --- | --- | --- | --- |\n";
  for (const auto& r : d["rows"]) {
    if (r.contains("wrong")) {
      os << "| " << r["name"].get<std::string>() << " | WRONG: " << r["wrong"].get<std::string>() << " | | |\n";
      continue;
    }
    os << "| " << r["name"].get<std::string>() << ": " << r["what"].get<std::string>() << " | "
       << num(r["portable_gbps"], 1) << " | " << num(r["native_gbps"], 1) << " | " << num(r["ratio"], 3) << " ["
       << num(r["ratio_low"], 3) << ".." << num(r["ratio_high"], 3) << "] |\n";
  }
}

}  // namespace gpurt::bench::render
