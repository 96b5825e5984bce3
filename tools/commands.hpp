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

}  // namespace gpurt::tool
