// The subcommands of the gpurt command-line tool.
#pragma once

namespace gpurt::tool {
int run_info(bool json);
}  // namespace gpurt::tool
