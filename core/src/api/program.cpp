// gpurt::Program and gpurt::Kernel, and Device::build.
#include "gpurt/program.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "services/build_text.hpp"
#include "services/cache.hpp"
#include "services/dialect.hpp"
#include "gpurt/plugin/signature.hpp"
#include "base/log.hpp"
#include "gpurt/device.hpp"
#include "model/state.hpp"
#include "services/trace.hpp"

namespace gpurt {

namespace {

constexpr const char* build_call = "Device::build";

bool is_text(SourceLanguage l) { return l != SourceLanguage::ptx && l != SourceLanguage::cubin; }

// The device's backend builds this language.
void check_language(const detail::DeviceState* d, const ProgramSource& source) {
  bool accepted = false;
  std::string names;
  for (SourceLanguage l : d->props.languages) {
    accepted = accepted || l == source.language;
    names += std::string(names.empty() ? "" : ", ") + to_string(l);
  }
  if (!accepted)
    throw Error(ErrorCategory::unsupported,
                std::string("the ") + d->props.backend + " backend cannot build " +
                    to_string(source.language) + " programs; " + d->selector +
                    (names.empty() ? " builds no program (its backend declares no language)" : " accepts " + names),
                ErrorDetails{d->props.backend, 0, {}, build_call, d->description, {}, {}});
}

// The text is not empty, holds no NUL (source languages), and gets defines only where it has a
// preprocessor.
void check_source(const detail::DeviceState* d, const ProgramSource& source, const BuildOptions& options) {
  if (source.text.empty())
    detail::invalid("the program source '" + source.name + "' is empty", build_call, d);
  // NVRTC reads a source up to its first NUL and OpenCL compilers skip NULs: the same text would
  // build differently on each backend, or silently lose what follows the NUL.
  if (const std::size_t nul = source.text.find('\0'); nul != std::string::npos && is_text(source.language))
    detail::invalid("the program source '" + source.name + "' contains a NUL byte on line " +
                        std::to_string(1 + std::count(source.text.begin(), source.text.begin() + static_cast<long>(nul), '\n')) +
                        " (byte " + std::to_string(nul) + "); compilers disagree on what follows a NUL "
                        "(NVRTC stops reading there), so remove it from the source",
                    build_call, d);
  // Defines go ahead of the source as #define lines, never into the option string, so a value
  // cannot become another option; the name is escaped before it reaches any #line directive.
  if (!is_text(source.language) && !options.defines.empty())
    detail::invalid(std::string("defines apply to source languages, and a ") + to_string(source.language) +
                        " program has no preprocessor; remove BuildOptions::defines",
                    build_call, d);
  if (!is_text(source.language) && options.float_math != FloatMath::contract)
    detail::invalid(std::string("float_math applies to source languages, and a ") + to_string(source.language) +
                        " program is compiled already; leave BuildOptions::float_math at FloatMath::contract",
                    build_call, d);
  // The prelude's own switches are read before the defines' #define lines: as a define such a
  // switch would change the user's code and not the prelude (kernel-language.md names them).
  if (source.language == SourceLanguage::portable)
    for (const auto& [name, value] : options.defines)
      if (name == "GPURT_SUB_GROUPS_SINGLE_ITEM" || name == "GPURT_ATOMICS_COMPARE_AND_SWAP" ||
          name.rfind("GPURT_OPENCL_", 0) == 0)
        detail::invalid(name + " is a switch of the portable prelude, which is read before the #define lines that "
                               "BuildOptions::defines become; pass it in BuildOptions::flags as \"-D" + name + "\"",
                        build_call, d);
}

// The defines the compiler is given. A source that reads other files is never cached by gpurt, and
// must not be by the driver either: NVIDIA's OpenCL driver keeps its own cache keyed by the text
// alone, and served the old binary after an included header changed (H200, 2026-11-30). A define
// unique to this build makes the text new each time.
std::vector<std::pair<std::string, std::string>> defines_of(const ProgramSource& source, const BuildOptions& options) {
  std::vector<std::pair<std::string, std::string>> defines = options.defines;
  if (is_text(source.language) && (detail::reads_other_files(source.text) ||
                                   std::any_of(options.flags.begin(), options.flags.end(), detail::option_reads_files))) {
    static std::atomic<std::uint64_t> builds{0};
    defines.emplace_back("GPURT_UNCACHED_BUILD",
                         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "u" +
                             std::to_string(++builds));
  }
  return defines;
}

// The program from the compile cache's entry `key`, when it has one that loads; else p->impl stays null.
void load_cached(detail::DeviceState* d, const bridge::ProgramSource& ps, const std::vector<std::string>& flags,
                 const std::string& key, detail::ProgramState& p) {
  BuildInfo& info = p.build_info;
  info.cache_entry = detail::cache_entry_path(key);
  auto payload = detail::cache_load(key);
  if (!payload) return;
  const bridge::Status loaded = d->impl->load_binary(ps, flags, *payload, p.impl);
  if (loaded.ok()) {
    detail::count_cache_hit();
    info.path = BuildPath::loaded_from_cache;
  } else {
    detail::count_cache_corrupt();
    detail::log(detail::LogLevel::warn, "cache", "entry " + info.cache_entry + " did not load (" +
                                                     loaded.message + "); rebuilding it");
    p.impl.reset();
  }
}

// The backend's build, stored in the compile cache under `key` (empty: not cached).
void build_and_store(detail::DeviceState* d, const bridge::ProgramSource& ps, const std::vector<std::string>& flags,
                     const BuildOptions& options, const std::string& key, detail::ProgramState& p) {
  BuildInfo& info = p.build_info;
  bridge::Status built = d->impl->build(ps, flags, p.impl);
  if (built.failed && !options.defines.empty())
    built.build_options += " (defines, given as #define lines ahead of the source: " +
                           detail::defines_as_options(options.defines) + ")";
  detail::check(built, d);
  if (key.empty()) return;
  detail::count_cache_miss();
  std::string binary;
  const bridge::Status got = p.impl->binary(binary);
  std::string why;
  if (got.ok() && detail::cache_store(key, binary, why)) {
    info.path = BuildPath::built_and_cached;
  } else {
    info.note = got.ok() ? "not stored in the compile cache: " +
                               (detail::cache_problem().empty() ? why : detail::cache_problem()) : "the backend gave no binary: " + got.message;
  }
}

// README: "GPURT_LOG=info logs ... builds".
void log_build(const detail::DeviceState* d, const ProgramSource& source, const BuildInfo& info) {
  if (!detail::log_enabled(detail::LogLevel::info)) return;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", info.milliseconds);
  detail::log(detail::LogLevel::info, "build",
              "'" + source.name + "' (" + to_string(source.language) + ") for " + d->description + ": " +
                  to_string(info.path) + " in " + ms + " ms" + (info.note.empty() ? "" : "; " + info.note));
}

}  // namespace

Program Device::build(const ProgramSource& source, const BuildOptions& options) const {
  detail::DeviceState* d = detail::checked_device(*this, build_call);
  detail::Traced trace("build", source.name.c_str(), 0, nullptr, d);
  check_language(d, source);
  check_source(d, source, options);
  const bool text_source = is_text(source.language);
  const std::string line_name = detail::line_directive_name(source.name);
  const std::string prefix = detail::define_lines(defines_of(source, options), line_name, build_call, d);
  const std::vector<std::string>& flags = options.flags;
  const auto start = std::chrono::steady_clock::now();
  bridge::ProgramSource ps{source.language, prefix.empty() ? source.text : prefix + source.text,
                           text_source ? line_name : source.name};
  ps.float_math = options.float_math;
  auto p = std::make_shared<detail::ProgramState>();
  p->device = d;
  p->language = source.language;
  p->signatures = detail::kernel_signatures(source.text, source.language);
  if (source.language == SourceLanguage::portable) {
    const std::string why = detail::unportable_parameters(p->signatures);
    if (!why.empty()) detail::invalid("in the portable program '" + source.name + "', " + why, build_call, d);
  }

  const std::string key = detail::cache_key(*d, ps, flags, p->build_info.note);
  if (!key.empty()) load_cached(d, ps, flags, key, *p);
  if (!p->impl) build_and_store(d, ps, flags, options, key, *p);
  p->build_info.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  log_build(d, source, p->build_info);
  return detail::Access::make<Program>(std::move(p));
}

detail::ProgramState* Program::checked(const char* call) const {
  if (!state_) detail::throw_empty_handle("Program", call);
  return state_.get();
}

Kernel Program::kernel(const std::string& name) const {
  detail::ProgramState* p = checked("Program::kernel");
  // A name with a NUL byte names no kernel: the backends look names up as C strings, which end at
  // the NUL, so "fill_u32\0x" found the kernel fill_u32.
  auto kernel_list = [p] {
    std::string names;
    for (const auto& n : p->impl->kernel_names()) names += (names.empty() ? "" : ", ") + n;
    return names.empty() ? std::string("(none)") : names;
  };
  if (const std::size_t nul = name.find('\0'); nul != std::string::npos) {
    detail::invalid("the program has no kernel named '" + name.substr(0, nul) + "\\0" + "...' (a name of " +
                        std::to_string(name.size()) + " bytes with a NUL byte at byte " + std::to_string(nul) +
                        "; kernel names are identifiers); it has: " + kernel_list(),
                    "Program::kernel", p->device);
  }
  auto k = std::make_shared<detail::KernelState>();
  k->device = p->device;
  k->program = state_;
  const bridge::Status s = p->impl->kernel(name, k->impl);
  if (s.failed) {
    if (s.category == ErrorCategory::invalid_argument) {
      bridge::Status more = s;
      more.message = "the program has no kernel named '" + name + "'; it has: " + kernel_list() +
                     (s.hint.empty() ? "" : ". " + s.hint);
      detail::raise(more, p->device);
    }
    detail::raise(s, p->device);
  }
  k->info = k->impl->info();
  if (k->info.name.empty()) k->info.name = name;  // a plugin without kernel_info (or no name in it)
  bridge::KernelInfo& info = k->info;
  const plugin::KernelDecl* decl = detail::compiled_signature(p->signatures, name, info.params_known, info.params.size());
  if (p->language == SourceLanguage::portable && decl && detail::takes_dynamic_local(*decl) &&
      info.params_known && !info.params.empty()) {
    info.params.back().kind = bridge::ParamKind::local_pointer;
    info.dynamic_local_is_parameter = true;
  }
  // Where the backend gives sizes only (CUDA's cuFuncGetParamInfo) or no type names, the source's
  // own declaration says what each parameter is. A declaration whose parameter count differs from
  // the compiled kernel's (macros, templates) is not used.
  if (decl && info.params_known && decl->params.size() == info.params.size()) {
    for (std::size_t i = 0; i < info.params.size(); ++i) {
      bridge::ParamInfo& pi = info.params[i];
      const plugin::ParamDecl& pd = decl->params[i];
      if (pd.macro_call) continue;
      if (pi.type_name.empty()) pi.type_name = pd.type_name();
      // The dialect's bfloat16 reaches the OpenCL compiler as the prelude's typedef, which a driver
      // may report resolved (a struct, or ushort where a driver flattens it); half and bfloat16 are
      // checked as the kernel spells them.
      if (p->language == SourceLanguage::portable) {
        const plugin::ParamType declared = plugin::describe_type(pd.type_name());
        if (declared.known && declared.value.kind == detail::ValueKind::floating && declared.value.bytes == 2)
          pi.type_name = pd.type_name();
      }
      if (pi.kind == bridge::ParamKind::unknown) {
        const plugin::ParamType t = plugin::describe_type(pd.type_name());
        if (t.known && t.pointer && !pd.has_word("__local") && !pd.has_word("local") && !pd.has_word("GPURT_LOCAL"))
          pi.kind = bridge::ParamKind::global_pointer;
        else if (t.known && !t.pointer && (t.value.bytes == 0 || pi.size == 0 || t.value.bytes == pi.size))
          pi.kind = bridge::ParamKind::scalar;
      }
    }
  }
  if (info.params_known) {
    k->types.reserve(info.params.size());
    for (const bridge::ParamInfo& pi : info.params) {
      plugin::ParamType t = plugin::describe_type(pi.type_name);
      // A spelling that disagrees with the size the driver reports is not trusted.
      if (t.known && !t.pointer && t.value.bytes != 0 && pi.size != 0 && t.value.bytes != pi.size) t = {};
      if (pi.kind == bridge::ParamKind::local_pointer) t = {};
      k->types.push_back(t);
    }
  }
  k->view_alignment = info.view_alignment != 0 ? info.view_alignment : p->device->props.view_alignment;
  return detail::Access::make<Kernel>(std::move(k));
}

std::vector<std::string> Program::kernel_names() const {
  return checked("Program::kernel_names")->impl->kernel_names();
}

const std::string& Program::build_log() const { return checked("Program::build_log")->impl->build_log(); }

const BuildInfo& Program::build_info() const { return checked("Program::build_info")->build_info; }

Device Program::device() const { return detail::Access::make<Device>(checked("Program::device")->device); }

detail::KernelState* Kernel::state(const char* call) const {
  if (!state_) detail::throw_empty_handle("Kernel", call);
  return state_.get();
}

const std::string& Kernel::name() const { return state("Kernel::name")->info.name; }
Device Kernel::device() const { return detail::Access::make<Device>(state("Kernel::device")->device); }

std::size_t Kernel::arg_count() const {
  detail::KernelState* k = state("Kernel::arg_count");
  if (!k->info.params_known)
    throw Error(ErrorCategory::unsupported,
                "the " + k->device->props.backend + " backend cannot tell the parameters of '" +
                    k->info.name + "'",
                ErrorDetails{k->device->props.backend, 0, {}, "Kernel::arg_count",
                             k->device->description, {}, {}});
  return k->info.params.size();
}

std::size_t Kernel::max_group_size() const { return state("Kernel::max_group_size")->info.max_group_size; }
std::size_t Kernel::preferred_group_multiple() const {
  return state("Kernel::preferred_group_multiple")->info.preferred_group_multiple;
}
std::size_t Kernel::local_memory_bytes() const {
  return state("Kernel::local_memory_bytes")->info.static_local_bytes;
}
std::size_t Kernel::resident_groups_per_unit(std::size_t group_size, std::size_t local_bytes) const {
  detail::KernelState* k = state("Kernel::resident_groups_per_unit");
  const DeviceProperties& p = k->device->props;
  auto bad = [&](const std::string& what) { detail::invalid(what, "Kernel::resident_groups_per_unit", k->device); };
  const std::size_t limit = k->info.max_group_size != 0 ? k->info.max_group_size : p.max_group_size;
  if (group_size == 0 || group_size > limit)
    bad("group size " + std::to_string(group_size) + " is outside 1.." + std::to_string(limit) + " for kernel '" +
        k->info.name + "'; see Kernel::max_group_size()");
  if (local_bytes > p.max_local_memory || k->info.static_local_bytes > p.max_local_memory - local_bytes)
    bad(std::to_string(local_bytes) + " bytes of local memory (plus the kernel's own " +
        std::to_string(k->info.static_local_bytes) + ", Kernel::local_memory_bytes()) exceed the device's " +
        std::to_string(p.max_local_memory) + " per group; ask for at most " +
        std::to_string(p.max_local_memory - std::min(p.max_local_memory, k->info.static_local_bytes)));
  std::size_t groups = 0;
  detail::check(k->impl->resident_groups(group_size, local_bytes, groups), k->device);
  return std::max<std::size_t>(1, groups);
}

std::size_t Kernel::suggested_group_size() const {
  detail::KernelState* k = state("Kernel::suggested_group_size");
  if (k->info.suggested_group_size != 0) return k->info.suggested_group_size;
  return k->info.max_group_size != 0 ? k->info.max_group_size : 64;
}

}  // namespace gpurt
