// The gpurt command-line tool: `gpurt info [--json]`.
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
  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return gpurt::tool::run_info(json);
  } catch (const gpurt::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
