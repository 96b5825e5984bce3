// How `gpurt bench` shows its results, from a JSON document that check.hpp has checked (a run just
// measured, or saved runs given to --render): the table of one run, CSV lines of all runs, the SVG
// chart of one run's transfer bandwidth against size, and the Markdown document (docs/PERFORMANCE.md
// is this output). Each writes to a stream; which files they go to is the CLI's (tools/bench.cpp).
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "render_library.hpp"

namespace gpurt::bench::render {

// One run ("runs[i]") as the table the command prints.
void print_table(const nlohmann::json& run, std::ostream& os);
// Every run as CSV (device,section,name,bytes,gpurt,raw,ratio,unit,spread...).
void write_csv(const nlohmann::json& runs, std::ostream& os);
// One run's transfer bandwidth against size, pageable and pinned, gpurt and raw.
void write_svg(const nlohmann::json& run, std::ostream& os);
// The whole document: how rows are measured, the targets, the library table (with the measured
// causes of its gaps), then one section per run.
void write_markdown(const nlohmann::json& doc, const GapCauses& causes, std::ostream& os);
// The hand-written record of approaches (docs/bench/approaches.md) after the document, less its
// "- gap <selector> <row>: <cause>" lines, which the library section shows beside their figures.
void append_approaches(const std::string& approaches_text, std::ostream& os);

}  // namespace gpurt::bench::render
