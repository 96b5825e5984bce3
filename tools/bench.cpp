// `gpurt bench`: the command's side - its options checked, the output files named and checked before
// anything is measured, the devices chosen, progress shown - around bench/: the measurements
// (bench::run, runner.hpp), the check of saved runs (check.hpp) and the rendering (render.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "check.hpp"
#include "commands.hpp"
#include "gpurt/gpurt.hpp"
#include "render.hpp"
#include "runner.hpp"

namespace gpurt::tool {

namespace {

// The hand-written record of approaches (bench/approaches.md beside the markdown file): its text,
// empty when absent.
std::string approaches_text(const std::string& markdown) {
  const auto slash = markdown.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : markdown.substr(0, slash);
  // README: "Files the tool reads ... must be regular files ... of at most 64 MiB; they are checked
  // before they are read" - this one too (a FIFO there blocked the tool, /dev/zero ran it out of
  // memory). None there: no causes to show.
  const std::string path = dir + "/bench/approaches.md";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
  return read_input_file(path, "the record of approaches (docs/bench/approaches.md) beside the --markdown file");
}

std::string per_device_path(const std::string& path, const std::string& selector, bool several) {
  if (!several) return path;
  std::string tag = selector;
  for (char& c : tag)
    if (c == ':') c = '_';
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path + "-" + tag : path.substr(0, dot) + "-" + tag + path.substr(dot);
}


// Writes the outputs the command asks for: the table of each run (to standard output, or to
// standard error when an output file is "-"), an SVG per run, CSV, Markdown and the JSON document.
void write_outputs(const BenchCommand& cmd, const nlohmann::json& doc) {
  const nlohmann::json& runs = doc["runs"];
  const bool several = runs.size() > 1;
  std::ostream& table = cmd.json == "-" || cmd.csv == "-" || cmd.svg == "-" || cmd.markdown == "-" ? std::cerr : std::cout;
  for (const auto& r : runs) {
    bench::render::print_table(r, table);
    if (!cmd.svg.empty())
      write_output(per_device_path(cmd.svg, r["device"]["selector"].get<std::string>(), several), "the SVG chart",
                   [&](std::ostream& os) { bench::render::write_svg(r, os); });
  }
  if (!cmd.json.empty())  // device names need not be UTF-8: invalid bytes become U+FFFD
    write_output(cmd.json, "the JSON results", [&](std::ostream& os) {
      os << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    });
  if (!cmd.csv.empty()) write_output(cmd.csv, "the CSV results", [&](std::ostream& os) { bench::render::write_csv(runs, os); });
  if (!cmd.markdown.empty())
    write_output(cmd.markdown, "the Markdown results", [&](std::ostream& os) {
      const std::string approaches = cmd.markdown == "-" ? std::string() : approaches_text(cmd.markdown);
      bench::render::write_markdown(doc, bench::render::gap_causes(approaches), os);
      bench::render::append_approaches(approaches, os);
    });
}

// Refuses, before anything is measured or written, outputs that would collide on standard output.
void check_outputs(const BenchCommand& cmd, std::size_t runs) {
  int to_stdout = 0;
  for (const std::string* o : {&cmd.json, &cmd.csv, &cmd.svg, &cmd.markdown}) to_stdout += *o == "-";
  if (to_stdout > 1) throw UsageError("only one of --json, --csv, --svg and --markdown may be '-' (standard output)");
  if (cmd.svg == "-" && runs > 1)
    throw UsageError("--svg - draws one device's chart and there are " + std::to_string(runs) +
                     " devices; give --svg a file name (one file per device) or one device");
}

}  // namespace

int run_bench(const BenchCommand& cmd) {
  if (!cmd.render.empty()) {  // re-render saved runs without measuring, several files' runs joined
    if (!cmd.devices.empty() || cmd.quick || cmd.trials_given)
      throw UsageError("--render re-renders a saved run; -d, --quick and --trials measure");
    if (!cmd.sections.empty()) throw UsageError("--render re-renders a saved run; --sections measures");
    nlohmann::json doc{{"command", ""}, {"runs", nlohmann::json::array()}};
    std::string commands;
    for (const std::string& file : cmd.render) {
      nlohmann::json one;
      const std::string what = "'" + file + "' is not a gpurt bench --json file: ";
      try {
        one = nlohmann::json::parse(read_input_file(file, "a gpurt bench --json file"));
      } catch (const nlohmann::json::exception& e) {
        throw UsageError(what + "it is not JSON (" + e.what() + ")");
      }
      try {
        bench::render::check_bench_document(one);
      } catch (const bench::render::InvalidDocument& e) {
        throw UsageError(what + e.what());
      }
      commands += (commands.empty() ? "" : "; ") + one["command"].get<std::string>();
      for (auto& r : one["runs"]) doc["runs"].push_back(std::move(r));
    }
    doc["command"] = cmd.render.size() > 1 ? commands + " (the runs of " + std::to_string(cmd.render.size()) + " files, joined by gpurt bench --render)" : commands;
    check_outputs(cmd, doc["runs"].size());
    try {
      write_outputs(cmd, doc);
    } catch (const nlohmann::json::exception& e) {  // a field the check above does not cover
      throw UsageError("the files given to --render hold a field gpurt bench cannot read: " + std::string(e.what()));
    }
    return exit_code::ok;
  }
  if (cmd.trials_given && (cmd.trials < 1 || cmd.trials > 1000))
    throw UsageError("--trials " + std::to_string(cmd.trials) +
                     " is out of range: give 1 to 1000 trials per row (each row reports their median and min..max)");
  check_outputs(cmd, std::max<std::size_t>(cmd.devices.size(), 1));
  if (!cmd.sections.empty() && (!cmd.csv.empty() || !cmd.svg.empty() || !cmd.markdown.empty()))
    throw UsageError("--sections measures part of a run, which --csv, --svg and --markdown cannot draw: "
                     "write it with --json (and read the table on the terminal)");
  for (const std::string& s : cmd.sections)
    if (std::find(bench::section_names().begin(), bench::section_names().end(), s) == bench::section_names().end()) {
      std::string names;
      for (const std::string& n : bench::section_names()) names += (names.empty() ? "" : ", ") + n;
      throw UsageError("--sections " + s + " names no section of gpurt bench; give some of: " + names);
    }
  std::vector<Device> devs;
  if (cmd.devices.empty()) devs.push_back(default_device());
  for (const std::string& sel : cmd.devices) devs.push_back(device(sel));
  // README exit codes: "2 usage error: ... an output file that cannot be created" - said now, not
  // after minutes of measuring (the measurements would be lost).
  if (cmd.svg != "-")
    for (const Device& d : devs)
      check_output_creatable(per_device_path(cmd.svg, d.selector(), devs.size() > 1), "the SVG chart");
  check_output_creatable(cmd.json, "the JSON results");
  check_output_creatable(cmd.csv, "the CSV results");
  check_output_creatable(cmd.markdown, "the Markdown results");
  const bool tty = ::isatty(2);
  nlohmann::json runs = nlohmann::json::array();
  for (const Device& d : devs) {
    bench::Options opt;
    opt.quick = cmd.quick;
    opt.trials = cmd.trials_given ? cmd.trials : 0;  // 0: the default
    opt.sections = cmd.sections;
    // Each line starts with the seconds since this device's run began (which section takes how long).
    const auto started = std::chrono::steady_clock::now();
    opt.progress = [&, started](const std::string& what) {
      char at[32];
      std::snprintf(at, sizeof at, "%7.1f s ", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      if (tty) std::cerr << "\r\033[K[" << d.selector() << "] " << at << what << std::flush;
      else std::cerr << "[" << d.selector() << "] " << at << what << "\n";
    };
    for (const Device& other : devs)
      if (other != d) opt.partners.push_back(other);
    try {
      runs.push_back(bench::run(d, opt));
    } catch (const Error& e) {
      // A device the bench has no raw baseline for (the mock) still serves, when other devices are
      // selected, as the other end of their copies between devices; alone it is an error.
      if (devs.size() < 2 || e.category() != ErrorCategory::unsupported) throw;
      std::cerr << "[" << d.selector() << "] no rows of its own (" << e.message()
                << "); measured only as the other end of copies between devices\n";
    }
    if (tty) std::cerr << "\r\033[K";
  }
  write_outputs(cmd, nlohmann::json{{"command", cmd.command_line}, {"runs", runs}});
  return exit_code::ok;
}

}  // namespace gpurt::tool
