// Parsing of every GPURT_* variable.
#include "startup/env.hpp"

#include <algorithm>
#include <cstdlib>

#include "api/selector.hpp"
#include "base/path.hpp"
#include "gpurt/error.hpp"
#include "loader/loader.hpp"

namespace gpurt::detail {

namespace {
[[noreturn]] void malformed(const char* var, const std::string& value, const std::string& what) {
  ErrorDetails d;
  d.call = std::string("environment variable ") + var;
  throw Error(ErrorCategory::invalid_argument,
              std::string(var) + "='" + value + "' is malformed: " + what, std::move(d));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Keywords (GPURT_LOG, GPURT_CACHE, GPURT_STAGING, GPURT_ENABLE_MOCK) are case-insensitive: trimmed
// and lowered.
std::string keyword(const char* v) {
  std::string s = trim(v);
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// The one rule for switches (README, "Environment"): on, 1 or true turn it on; off, 0 or false turn
// it off; in any case, surrounding spaces and tabs ignored; `extra` (GPURT_STAGING's auto) is a third
// value where the variable has one. Returns 1 (on), 0 (off) or 2 (`extra`); anything else is
// malformed, naming the variable and every accepted spelling.
int switch_value(const char* var, const char* v, const char* extra = nullptr) {
  const std::string s = keyword(v);
  if (s == "on" || s == "1" || s == "true") return 1;
  if (s == "off" || s == "0" || s == "false") return 0;
  if (extra && s == extra) return 2;
  malformed(var, v,
            std::string("expected ") + (extra ? std::string(extra) + ", on or off" : "on or off") +
                " (on may also be written 1 or true, off 0 or false; in any case)");
}
}  // namespace

void check_backend_names(const Settings& env, const std::vector<std::string>& known, const std::string& list) {
  auto is_known = [&](const std::string& n) { return std::find(known.begin(), known.end(), n) != known.end(); };
  if (env.device) {
    const Selector sel = parse_selector_syntax(*env.device);
    if (!is_known(sel.backend))
      malformed("GPURT_DEVICE", *env.device,
                "'" + sel.backend + "' is not a backend gpurt knows (" + list + "); " + selector_syntax());
  }
  for (const std::string& name : env.loader.disabled_backends)
    if (!is_known(name))
      malformed("GPURT_DISABLE_BACKENDS", env.loader.disabled_backends_text,
                "'" + name + "' is not a backend; expected a comma-separated list of " + list);
}

Settings parse_environment(const std::function<const char*(const char*)>& get) {
  Settings env;
  if (const char* v = get("GPURT_DEVICE"); v && *v) {
    const std::string s = trim(v);
    if (s.empty()) malformed("GPURT_DEVICE", v, "expected a device selector, BACKEND or BACKEND:INDEX or BACKEND:NAME");
    try {
      (void)parse_selector_syntax(s);
    } catch (const Error& e) {  // "device selector 'x' is malformed: WHY; SYNTAX": keep WHY; SYNTAX
      const std::string& m = e.message();
      const std::string marker = "is malformed: ";
      const auto at = m.find(marker);
      malformed("GPURT_DEVICE", v, at == std::string::npos ? m : m.substr(at + marker.size()));
    }
    env.device = s;
  }
  if (const char* v = get("GPURT_PLUGIN_PATH"); v && *v) {
    for (const std::string& dir : split(v, ':')) {
      if (dir.empty()) continue;
      if (dir.front() != '/')
        malformed("GPURT_PLUGIN_PATH", v,
                  "entry '" + dir +
                      "' is not an absolute directory; gpurt loads plugins only from absolute "
                      "directories (never the current one). Use e.g. /opt/gpurt/lib");
      env.loader.plugin_path.push_back(plain_directory(dir));
    }
  }
  if (const char* v = get("GPURT_DISABLE_BACKENDS"); v && *v) {
    for (const std::string& raw : split(v, ',')) {
      const std::string name = trim(raw);
      if (name.empty()) continue;
      if (!backend_name_ok(name))
        malformed("GPURT_DISABLE_BACKENDS", v,
                  "'" + name + "' is not a backend name; expected a comma-separated list of backend names "
                  "(lower-case letters, digits and '_', as in libgpurt_<name>.so)");
      env.loader.disabled_backends.push_back(name);
    }
    env.loader.disabled_backends_text = v;
  }
  if (const char* v = get("GPURT_ENABLE_MOCK"); v && *v)
    env.loader.enable_test_backends = switch_value("GPURT_ENABLE_MOCK", v) == 1;
  if (const char* v = get("GPURT_LOG"); v && *v) {
    const std::string s = keyword(v);
    static const char* levels[] = {"off", "error", "warn", "info", "debug"};
    bool found = false;
    for (int i = 0; i < 5; ++i)
      if (s == levels[i]) {
        env.log = static_cast<LogThreshold>(i);
        found = true;
      }
    if (!found) malformed("GPURT_LOG", v, "expected one of off, error, warn, info, debug (in any case)");
  }
  if (const char* v = get("GPURT_CACHE"); v && *v) {
    env.cache.enabled = switch_value("GPURT_CACHE", v) == 1;
  }
  if (const char* v = get("GPURT_STAGING"); v && *v) {
    const int x = switch_value("GPURT_STAGING", v, "auto");
    env.transfer.staging = x == 2 ? Staging::automatic : x == 1 ? Staging::always : Staging::never;
  }
  if (const char* v = get("GPURT_TRACE"); v && *v) {
    const std::string s = trim(v);
    if (s.empty()) malformed("GPURT_TRACE", v, "expected a file name such as trace.json");
    env.trace = s;
  }
  if (const char* v = get("GPURT_STAGING_THREADS"); v && *v) {
    const std::string s = trim(v);
    int n = 0;
    bool ok = !s.empty() && s.size() <= 3;
    for (char ch : s) ok = ok && ch >= '0' && ch <= '9';
    if (ok) n = std::stoi(s);
    if (!ok || n < 1 || n > 256)
      malformed("GPURT_STAGING_THREADS", v, "expected a number of host threads from 1 to 256");
    env.transfer.threads = static_cast<unsigned>(n);
  }
  if (const char* v = get("GPURT_CACHE_DIR"); v && *v) {
    if (v[0] != '/') malformed("GPURT_CACHE_DIR", v, "expected an absolute directory such as /var/tmp/gpurt-cache");
    env.cache.directory = plain_directory(v);
  } else {
    env.cache.directory = default_cache_dir(get);
  }
  return env;
}

std::string default_cache_dir(const std::function<const char*(const char*)>& get) {
  if (const char* x = get("XDG_CACHE_HOME"); x && x[0] == '/') return plain_directory(std::string(x) + "/gpurt");
  if (const char* h = get("HOME"); h && h[0] == '/') return plain_directory(std::string(h) + "/.cache/gpurt");
  return {};
}

Settings read_environment() {
  return parse_environment([](const char* name) { return std::getenv(name); });
}

}  // namespace gpurt::detail
