// The graph rows of `gpurt bench` as a table, CSV and Markdown (see render_graph.hpp).
#include "render_graph.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>

#include "render_number.hpp"

namespace gpurt::bench::render {

namespace {

std::string chain_text(const nlohmann::json& row) {
  const std::string chain = row["chain"];
  const std::string n = std::to_string(row["kernels"].get<std::size_t>());
  return chain == "step" ? "a " + n + "-kernel step" : n + " " + chain + " kernels";
}

// "raw CUDA graph" or "raw enqueues": what the replay is compared with.
std::string versus_text(const nlohmann::json& row) {
  return row["versus"] == "raw_graph" ? "raw CUDA graph" : "raw enqueues";
}

// false when the run found the replay's results differ from the launches' (replay_computes_the_chain).
bool computes(const nlohmann::json& row) {
  return !row.contains("replay_computes_the_chain") || row["replay_computes_the_chain"].get<bool>();
}

bool met(const nlohmann::json& row) { return computes(row) && row["ratio"].get<double>() <= row["target"].get<double>(); }

}  // namespace

void print_graph_rows(const nlohmann::json& graph, std::ostream& os) {
  if (graph.contains("skipped")) {
    os << "\nrecorded chains: skipped (" << graph["skipped"].get<std::string>() << ")\n";
    return;
  }
  os << "\nrecorded chains (us per kernel)  replay  launch  raw stream  raw graph  replay/raw (lowest-highest)\n";
  for (const auto& row : graph["rows"]) {
    os << "  " << std::left << std::setw(30) << chain_text(row) << std::right << std::setw(8)
       << num(row["gpurt_replay_us"], 2) << std::setw(8) << num(row["gpurt_launch_us"], 2) << std::setw(12)
       << num(row["raw_stream_us"], 2) << std::setw(11) << num(row["raw_graph_us"], 2);
    if (row.contains("ratio"))
      os << std::setw(8) << num(row["ratio"], 3) << " (" << num(row["ratio_spread"][0], 2) << "-"
         << num(row["ratio_spread"][1], 2) << ") vs " << versus_text(row) << ", target <= " << num(row["target"], 2);
    if (!computes(row)) os << "  (the replay's results differ from the launches': figures invalid)";
    os << "\n";
  }
  os << "  (" << graph["kernels_per_measurement"].get<std::size_t>() << " kernels per figure, median of "
     << graph["trials"].get<int>() << " trials; replay: Queue::replay of a Recording, launch: Queue::launch)\n";
}

void write_graph_csv(const std::string& device, const nlohmann::json& graph, std::ostream& os) {
  if (graph.contains("skipped")) return;
  for (const auto& row : graph["rows"]) {
    const std::string name = row["chain"].get<std::string>() + "_" + std::to_string(row["kernels"].get<std::size_t>());
    if (row.contains("ratio")) {
      const std::string versus = row["versus"];
      os << device << ",graph,replay_" << name << "_vs_" << versus << ",," << row["gpurt_replay_us"] << ","
         << row[versus + "_us"] << "," << row["ratio"] << ",us per kernel\n";
    }
    const nlohmann::json& raw = row["raw_stream_us"];
    os << device << ",graph,launch_" << name << "_vs_raw_stream,," << row["gpurt_launch_us"] << ","
       << (raw.is_number() ? raw.dump() : "") << ","
       << (raw.is_number() ? nlohmann::json(row["gpurt_launch_us"].get<double>() / raw.get<double>()).dump() : "")
       << ",us per kernel\n";
  }
}

void write_graph_targets(const std::string& device, const nlohmann::json& graph, std::ostream& os) {
  if (graph.contains("skipped")) return;
  for (const auto& row : graph["rows"])
    if (row.contains("ratio"))
      os << "| " << device << " | replay of " << chain_text(row) << " <= " << num(row["target"], 2) << " x "
         << versus_text(row) << " (per kernel) | " << num(row["ratio"], 3) << " | " << (met(row) ? "yes" : "no")
         << " |\n";
}

void write_graph_markdown(const nlohmann::json& graph, std::ostream& os) {
  if (graph.contains("skipped")) {
    os << "\nRecorded chains: skipped (" << graph["skipped"].get<std::string>() << ").\n";
    return;
  }
  os << "\n| recorded chain, µs per kernel | gpurt replay | gpurt launch | raw stream launches | raw CUDA graph | "
        "replay / raw (lowest-highest) | replay / launch |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& row : graph["rows"]) {
    os << "| " << chain_text(row) << " | " << num(row["gpurt_replay_us"], 2) << " | " << num(row["gpurt_launch_us"], 2)
       << " | " << num(row["raw_stream_us"], 2) << " | " << num(row["raw_graph_us"], 2) << " | ";
    if (row.contains("ratio"))
      os << num(row["ratio"], 3) << " vs " << versus_text(row) << " (" << num(row["ratio_spread"][0], 2) << "-"
         << num(row["ratio_spread"][1], 2) << ")";
    os << " | " << num(row["replay_to_launch"], 3) << (computes(row) ? "" : " (replay results differ: invalid)") << " |\n";
  }
  os << "\n" << graph["kernels_per_measurement"].get<std::size_t>() << " kernels per figure, median of "
     << graph["trials"].get<int>() << " trials.\n";
}

}  // namespace gpurt::bench::render
