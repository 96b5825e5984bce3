// How `gpurt bench` shows its graph rows (bench/graph_rows.hpp: recorded chains of kernels, per
// kernel, replayed against launched and against the raw API): the table, CSV lines and Markdown.
// Each takes a run's "graph" object as check.hpp's check_bench_document has checked it.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace gpurt::bench::render {

void print_graph_rows(const nlohmann::json& graph, std::ostream& os);
// CSV lines in bench's columns: device,section,name,bytes,gpurt,raw,ratio,unit.
void write_graph_csv(const std::string& device, const nlohmann::json& graph, std::ostream& os);
// Lines of the Markdown targets table (| device | target | measured | met |), one per chain.
void write_graph_targets(const std::string& device, const nlohmann::json& graph, std::ostream& os);
// The device's section: a table of the chains.
void write_graph_markdown(const nlohmann::json& graph, std::ostream& os);

}  // namespace gpurt::bench::render
