// `gpurt build FILE`: compile a kernel source for a device and report its kernels or the
// compiler's log. The language follows the file's extension unless --language says otherwise. The
// file must be a regular file of at most 64 MiB (read_input_file).
#include <iostream>

#include "commands.hpp"
#include "gpurt/gpurt.hpp"

namespace gpurt::tool {

namespace {
SourceLanguage language_of(const std::string& path, const std::string& forced) {
  const std::string key = forced.empty() ? path.substr(path.rfind('.') == std::string::npos ? path.size() : path.rfind('.') + 1) : forced;
  if (key == "gpurt" || key == "portable") return SourceLanguage::portable;
  if (key == "cl" || key == "opencl") return SourceLanguage::opencl_c;
  if (key == "cu" || key == "cuda") return SourceLanguage::cuda_cpp;
  if (key == "ptx") return SourceLanguage::ptx;
  if (key == "cubin" || key == "fatbin") return SourceLanguage::cubin;
  if (!forced.empty())
    throw Error(ErrorCategory::invalid_argument,
                "--language '" + forced + "' is not a language gpurt builds; expected portable, opencl, cuda, ptx "
                "or cubin (or the file extensions gpurt, cl, cu, fatbin)");
  throw Error(ErrorCategory::invalid_argument,
              "cannot tell the language of '" + path + "'; name it .gpurt, .cl, .cu, .ptx or .cubin, or "
              "pass --language portable|opencl|cuda|ptx|cubin");
}
}  // namespace

int run_build(const BuildCommand& cmd) {
  const SourceLanguage language = language_of(cmd.file, cmd.language);
  const std::string text = read_input_file(cmd.file, "a kernel source");
  const Device dev = cmd.device.empty() ? default_device() : device(cmd.device);
  BuildOptions options;
  for (const std::string& d : cmd.defines) {
    const auto eq = d.find('=');
    options.defines.emplace_back(d.substr(0, eq), eq == std::string::npos ? "" : d.substr(eq + 1));
  }
  options.flags = cmd.flags;
  const Program p = dev.build({language, text, cmd.file}, options);
  const BuildInfo& info = p.build_info();
  std::cout << cmd.file << ": " << to_string(info.path) << " for " << dev.description() << " in "
            << info.milliseconds << " ms" << (info.note.empty() ? "" : " (" + info.note + ")") << "\n";
  for (const std::string& name : p.kernel_names()) {
    const Kernel k = p.kernel(name);
    std::cout << "  kernel " << name << ": " << k.arg_count() << " parameters, max group "
              << k.max_group_size() << ", suggested group " << k.suggested_group_size() << "\n";
  }
  if (!p.build_log().empty()) std::cout << "--- build log ---\n" << p.build_log() << "\n";
  return exit_code::ok;
}

}  // namespace gpurt::tool
