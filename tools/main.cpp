// The gpurt command-line tool: `gpurt info`, `gpurt build FILE`, `gpurt conformance`, `gpurt bench`,
// `gpurt --version`.
//
// Every way out goes through one mapping to the documented exit codes (commands.hpp exit_code):
// CLI11's parse errors and UsageError are usage errors (2), as is gpurt::Error of category
// invalid_argument (a selector that matches nothing, a file of an unknown language); any other
// gpurt::Error, std::exception or unknown exception is an error (3). Each is reported on standard
// error with the subcommand's name; nothing escapes main.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "gpurt/error.hpp"

namespace {

using namespace gpurt::tool;

constexpr const char* exit_codes_text =
    "Exit codes (the same for every subcommand):\n"
    "  0  success\n"
    "  1  the command ran and found failures (conformance: a case failed)\n"
    "  2  usage error: an unknown subcommand or option, a missing or wrong argument, an invalid -c\n"
    "     regular expression, a device selector that is malformed or matches no device, a malformed\n"
    "     GPURT_* variable, an input file that is missing, not a regular file, over 64 MiB or not\n"
    "     what the command reads, an output file that cannot be created\n"
    "  3  error while doing the work: a compile error, an unavailable backend, a device error, a\n"
    "     failed write, anything unexpected\n"
    "The message is printed on standard error.";

// Runs `body`, reporting anything it throws under `name` ("gpurt build") with its exit code.
template <typename Body>
int guarded(const std::string& name, Body&& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << name << ": usage error: " << e.what() << "\n(" << name << " --help lists the options)\n";
    return exit_code::usage;
  } catch (const gpurt::Error& e) {
    std::string what = e.what();
    if (what.rfind("gpurt: ", 0) == 0) what.erase(0, 7);
    const bool usage = e.category() == gpurt::ErrorCategory::invalid_argument;
    std::cerr << name << (usage ? ": usage error: " : ": error: ") << what << "\n";
    return usage ? exit_code::usage : exit_code::error;
  } catch (const std::bad_alloc&) {
    std::cerr << name << ": error: out of host memory\n";
    return exit_code::error;
  } catch (const std::exception& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    return exit_code::error;
  } catch (...) {
    std::cerr << name << ": error: an unknown exception (please report it)\n";
    return exit_code::error;
  }
}

int run(int argc, char** argv) {
  CLI::App app{"gpurt: a portable GPU compute runtime over CUDA and OpenCL"};
  app.require_subcommand(0, 1);
  app.footer(exit_codes_text);
  bool version = false;
  app.add_flag("--version", version,
               "print gpurt's version, the plugin ABI version and each backend's driver and compiler versions");

  bool json = false;
  CLI::App* info = app.add_subcommand("info", "list backends (with the reason when unavailable) and devices");
  info->add_flag("--json", json, "print JSON for scripts");

  BuildCommand build_cmd;
  CLI::App* build = app.add_subcommand("build", "compile a kernel file for a device and list its kernels");
  build->add_option("file", build_cmd.file, "kernel source (.gpurt, .cl, .cu, .ptx, .cubin), a regular file of at most 64 MiB")
      ->required();
  build->add_option("-d,--device", build_cmd.device, "device selector, e.g. cuda:0 or opencl:pocl");
  build->add_option("-l,--language", build_cmd.language, "portable, opencl, cuda, ptx or cubin");
  build->add_option("-D,--define", build_cmd.defines, "NAME or NAME=VALUE");
  build->add_option("-f,--flag", build_cmd.flags, "a compiler flag, passed as given");

  ConformanceCommand conf;
  CLI::App* conformance =
      app.add_subcommand("conformance", "run the conformance suite on this machine's devices and print a matrix");
  conformance->add_option("-d,--device", conf.devices, "device selectors (default: all, and unavailable backends)")
      ->delimiter(',');
  conformance->add_option("-c,--case", conf.case_filter,
                          "only cases whose name matches this regular expression (ECMAScript, case-insensitive)");
  conformance->add_option("-j,--jobs", conf.jobs, "runs at a time (default: one per core)");
  conformance->add_option("--suite", conf.suite, "the gpurt_conformance binary (default: next to gpurt, or ../libexec/gpurt when installed)");
  conformance->add_flag("--json", conf.json, "print JSON");
  conformance->add_option("--junit", conf.junit,
                          "also write JUnit XML (one testsuite per device) to this file, as CI dashboards read it "
                          "('-': print it instead of the table)");

  BenchCommand bench_cmd;
  CLI::App* bench = app.add_subcommand("bench", "measure gpurt against the raw vendor API in the same run");
  bench->add_option("-d,--device", bench_cmd.devices, "device selectors (default: the default device)")->delimiter(',');
  bench->add_flag("--quick", bench_cmd.quick, "a short run (fewer sizes and repetitions)");
  CLI::Option* trials = bench->add_option("--trials", bench_cmd.trials,
                    "trials per row, gpurt and raw alternating; each row reports the median and min..max "
                    "(default 7, 3 with --quick; 1 to 1000)");
  bench->add_option("--sections", bench_cmd.sections,
                    "measure only these sections, by their JSON names (launch, launch_scaling, alloc, transfers, "
                    "staging_threads, build, kernels, kernel_baselines, matmul, interop, graph, dialect); the run's JSON and "
                    "tables then hold only those")
      ->delimiter(',');
  bench->add_option("--json", bench_cmd.json, "write the results as JSON to this file ('-': standard output)");
  bench->add_option("--csv", bench_cmd.csv, "write the results as CSV to this file ('-': standard output)");
  bench->add_option("--svg", bench_cmd.svg,
                    "draw transfer bandwidth against size to this SVG file ('-': standard output, one device)");
  bench->add_option("--markdown", bench_cmd.markdown, "write the results as Markdown to this file ('-': standard output)");
  bench->add_option("--render", bench_cmd.render,
                    "re-render saved --json files (each at most 64 MiB; several: their runs joined, e.g. one file "
                    "per device) instead of measuring");
  for (int i = 0; i < argc; ++i) bench_cmd.command_line += (i ? " " : "") + std::string(argv[i]);

  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) sub->footer(exit_codes_text);

  // The first word that is not an option names the subcommand (gpurt itself takes no option values).
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    if (app.get_subcommands([&](const CLI::App* s) { return s->get_name() == argv[i]; }).empty())
      throw UsageError(std::string("'") + argv[i] + "' is not a gpurt subcommand; use info, build, conformance or bench");
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help and friends
    std::string name = "gpurt";
    for (CLI::App* sub : {info, build, conformance, bench})
      if (*sub) name += " " + sub->get_name();
    return guarded(name, [&]() -> int { throw UsageError(e.what()); });
  }
  if (version) return guarded("gpurt --version", run_version);
  if (*info) return guarded("gpurt info", [&] { return run_info(json); });
  if (*build) return guarded("gpurt build", [&] { return run_build(build_cmd); });
  if (*conformance) return guarded("gpurt conformance", [&] { return run_conformance(conf); });
  bench_cmd.trials_given = trials->count() > 0;
  if (*bench) return guarded("gpurt bench", [&] { return run_bench(bench_cmd); });
  throw UsageError("a subcommand is required: info, build, conformance or bench (or --version, --help)");
}

}  // namespace

int main(int argc, char** argv) {
  const int rc = guarded("gpurt", [&] { return run(argc, argv); });
  // README exit codes: "3 error while doing the work: ... a failed write" - standard output too
  // (`gpurt info --json > out.json` on a full disk left a cut-off file and exited 0). Buffered output
  // fails only when flushed, so flush it here and look.
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed && rc != exit_code::usage) {
    const int err = errno;
    std::cerr << "gpurt: error: writing to standard output failed"
              << (err != 0 ? std::string(" (") + std::strerror(err) + ")" : std::string()) << "\n";
    return exit_code::error;
  }
  return rc;
}
