// The gpurt command-line tool: `gpurt info [--json]`, `gpurt build FILE`.
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

  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return gpurt::tool::run_info(json);
    if (*build) return gpurt::tool::run_build(build_cmd);
  } catch (const gpurt::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
