// The subcommands of the gpurt command-line tool.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpurt::tool {

// The exit status of every subcommand (README "Command line", `gpurt --help`).
namespace exit_code {
constexpr int ok = 0;
constexpr int failures = 1;  // the command ran and found failures (conformance cases failed)
constexpr int usage = 2;     // the command line is wrong: see the message
constexpr int error = 3;     // gpurt, the system or the tool failed while doing the work
}  // namespace exit_code

// A mistake in the command line or in a file it names (bad option value, unusable input file):
// reported with exit_code::usage. gpurt::Error of category invalid_argument is reported the same way.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest file `gpurt build` and `gpurt bench --render` read.
constexpr std::uint64_t max_input_bytes = 64ull << 20;

// The contents of `path`, which must be a regular file (a symbolic link to one is fine) of at most
// max_input_bytes; `what` says what the file should be ("a kernel source"). Checks with fstat before
// reading, so /dev/zero, a FIFO or a directory is refused, not read. Throws UsageError.
std::string read_input_file(const std::string& path, const std::string& what);

// Throws UsageError ("cannot create 'PATH' for WHAT: why") when `path` (not "-") could not be
// written: its directory is missing or not writable, or it is a symbolic link, a directory, a socket
// or a file not writable. Nothing is created. gpurt bench checks its outputs so before measuring.
void check_output_creatable(const std::string& path, const std::string& what);

// Writes what `fill` prints to `path`, or to standard output when `path` is "-": a new or regular
// file through a temporary file beside it and a rename (never through a link, never truncating a
// file in place), a character device or FIFO directly (a FIFO with no reader is refused). Throws
// UsageError when the file cannot be created (check_output_creatable), std::runtime_error when
// writing it fails.
void write_output(const std::string& path, const std::string& what, const std::function<void(std::ostream&)>& fill);

// `gpurt --version`: gpurt's version, the plugin ABI version and each backend's driver and compiler
// versions (or why it is unavailable).
int run_version();

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
  std::string junit;                 // --junit: JUnit XML to this file ('-': standard output, instead of the table)
};
int run_conformance(const ConformanceCommand& cmd);

struct BenchCommand {
  std::vector<std::string> devices;  // selectors; empty: the default device
  bool quick = false;
  int trials = 0;                        // --trials: per row, gpurt and raw alternating (when trials_given)
  bool trials_given = false;             // --trials was on the command line (any value: -1 is out of range)
  std::string json, csv, svg, markdown;  // output files; empty: not written
  std::vector<std::string> render;   // saved --json files to re-render (runs joined) instead of measuring
  std::vector<std::string> sections;  // --sections: measure only these (bench::Options::sections)
  std::string command_line;          // recorded in the JSON
};
int run_bench(const BenchCommand& cmd);

}  // namespace gpurt::tool
