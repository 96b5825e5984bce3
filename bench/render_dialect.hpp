// How `gpurt bench` shows its dialect rows (bench/dialect_rows.hpp: portable kernels using the
// dialect's sub-group words and vector types against their native twins): the table, CSV lines
// and Markdown. Each takes a run's "dialect" object as check.hpp's check_bench_document has
// checked it.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace gpurt::bench::render {

void print_dialect_rows(const nlohmann::json& dialect, std::ostream& os);
// CSV lines in bench's columns: device,section,name,bytes,gpurt,raw,ratio,unit (gpurt: the
// portable kernel's GB/s, raw: the native twin's).
void write_dialect_csv(const std::string& device, const nlohmann::json& dialect, std::ostream& os);
// The device's section: a table of the rows.
void write_dialect_markdown(const nlohmann::json& dialect, std::ostream& os);

}  // namespace gpurt::bench::render
