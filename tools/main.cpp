// The gpurt command-line tool: `gpurt info`, `gpurt build FILE`, `gpurt conformance`, `gpurt bench`.
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "gpurt/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpurt: a portable GPU compute runtime over CUDA and OpenCL"};
  app.require_subcommand(1);

  bool json = false;
  CLI::App* info = app.add_subcommand("info", "list backends (with the reason when unavailable) and devices");
  info->add_flag("--json", json, "print JSON for scripts");

  gpurt::tool::BuildCommand build_cmd;
  CLI::App* build = app.add_subcommand("build", "compile a kernel file for a device and list its kernels");
  build->add_option("file", build_cmd.file, "kernel source (.gpurt, .cl, .cu, .ptx, .cubin)")->required();
  build->add_option("-d,--device", build_cmd.device, "device selector, e.g. cuda:0 or opencl:pocl");
  build->add_option("-l,--language", build_cmd.language, "portable, opencl, cuda, ptx or cubin");
  build->add_option("-D,--define", build_cmd.defines, "NAME or NAME=VALUE");
  build->add_option("-f,--flag", build_cmd.flags, "a compiler flag, passed as given");

  gpurt::tool::ConformanceCommand conf;
  CLI::App* conformance =
      app.add_subcommand("conformance", "run the conformance suite on this machine's devices and print a matrix");
  conformance->add_option("-d,--device", conf.devices, "device selectors (default: all, and unavailable backends)")
      ->delimiter(',');
  conformance->add_option("-c,--case", conf.case_filter, "only cases whose name matches this regular expression");
  conformance->add_option("-j,--jobs", conf.jobs, "runs at a time (default: one per core)");
  conformance->add_option("--suite", conf.suite, "the gpurt_conformance binary (default: next to gpurt)");
  conformance->add_flag("--json", conf.json, "print JSON");

  gpurt::tool::BenchCommand bench_cmd;
  CLI::App* bench = app.add_subcommand("bench", "measure gpurt against the raw vendor API in the same run");
  bench->add_option("-d,--device", bench_cmd.devices, "device selectors (default: the default device)")->delimiter(',');
  bench->add_flag("--quick", bench_cmd.quick, "a short run (fewer sizes and repetitions)");
  bench->add_option("--json", bench_cmd.json, "write the results as JSON to this file");
  bench->add_option("--csv", bench_cmd.csv, "write the results as CSV to this file");
  bench->add_option("--svg", bench_cmd.svg, "draw transfer bandwidth against size to this SVG file");
  bench->add_option("--markdown", bench_cmd.markdown, "write the results as Markdown to this file");
  bench->add_option("--render", bench_cmd.render, "re-render a saved --json file instead of measuring");
  for (int i = 0; i < argc; ++i) bench_cmd.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return gpurt::tool::run_info(json);
    if (*build) return gpurt::tool::run_build(build_cmd);
    if (*conformance) return gpurt::tool::run_conformance(conf);
    if (*bench) return gpurt::tool::run_bench(bench_cmd);
  } catch (const gpurt::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
