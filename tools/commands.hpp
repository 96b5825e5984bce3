// The subcommands of the gpurt command-line tool.
#pragma once

#include <string>
#include <vector>

namespace gpurt::tool {

int run_info(bool json);

struct BuildCommand {
  std::string file;
  std::string device;    // selector; empty for the default device
  std::string language;  // opencl|cuda|ptx|cubin; empty to follow the extension
  std::vector<std::string> defines;
  std::vector<std::string> flags;
};
int run_build(const BuildCommand& cmd);

struct ConformanceCommand {
  std::string suite;                 // path of gpurt_conformance; empty: next to this tool
  std::vector<std::string> devices;  // selectors; empty: every device and unavailable backend
  std::string case_filter;           // regular expression on case names
  unsigned jobs = 0;                 // parallel runs; 0: one per core
  bool json = false;
};
int run_conformance(const ConformanceCommand& cmd);

struct BenchCommand {
  std::vector<std::string> devices;  // selectors; empty: the default device
  bool quick = false;
  std::string json, csv, svg, markdown;  // output files; empty: not written
  std::string render;                // a saved --json file to re-render instead of measuring
  std::string command_line;          // recorded in the JSON
};
int run_bench(const BenchCommand& cmd);

}  // namespace gpurt::tool
