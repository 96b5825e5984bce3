// The check of a saved bench document (check.hpp): what the renderers (render.cpp,
// render_graph.cpp, render_library.cpp) read without checking.
#include "check.hpp"

#include <string>


namespace gpurt::bench::render {

namespace {

enum class Want { string, number, boolean, object, array, number_or_null };

const nlohmann::json& need(const nlohmann::json& parent, const std::string& where, const char* key, Want want) {
  const std::string path = where.empty() ? key : where + "." + key;
  if (!parent.contains(key)) throw InvalidDocument(path + " is missing");
  const nlohmann::json& v = parent[key];
  const bool ok = want == Want::string    ? v.is_string()
                  : want == Want::number  ? v.is_number()
                  : want == Want::boolean ? v.is_boolean()
                  : want == Want::object  ? v.is_object()
                  : want == Want::array   ? v.is_array()
                                          : v.is_number() || v.is_null();
  static const char* names[] = {"a string", "a number", "true or false", "an object", "an array", "a number or null"};
  if (!ok) throw InvalidDocument(path + " is " + v.type_name() + ", not " + names[static_cast<int>(want)]);
  return v;
}

void need_all(const nlohmann::json& parent, const std::string& where, std::initializer_list<const char*> keys, Want want) {
  for (const char* k : keys) need(parent, where, k, want);
}

// Each element of the array parent[key], as an object, with its path.
template <typename Each>
void each_object(const nlohmann::json& parent, const std::string& where, const char* key, Each&& each) {
  const nlohmann::json& a = need(parent, where, key, Want::array);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string path = where + "." + key + "[" + std::to_string(i) + "]";
    if (!a[i].is_object()) throw InvalidDocument(path + " is " + a[i].type_name() + ", not an object");
    each(a[i], path);
  }
}

// A row of gpurt against a baseline (`base`: "raw", "slower_link"): its spread, trial count and
// per-trial figures, which files from before 2026-11-30 lack, must be there in full
// once one of them is.
void need_spread(const nlohmann::json& row, const std::string& where, const std::string& base = "raw") {
  if (!row.contains("gpurt_min") && !row.contains("trials")) return;
  for (const std::string& k : {std::string("gpurt_min"), std::string("gpurt_max"), base + "_min", base + "_max",
                               std::string("ratio_min"), std::string("ratio_max"), std::string("trials")})
    need(row, where, k.c_str(), Want::number);
  for (const std::string& k : {std::string("gpurt_trials"), base + "_trials"})
    for (const nlohmann::json& v : need(row, where, k.c_str(), Want::array))
      if (!v.is_number()) throw InvalidDocument(where + "." + k + " holds " + v.type_name() + ", not only numbers");
}

// A target with its verdict: `key` (a number, or null where none applies) and `met` (true or
// false with a target, null without one). Absent in runs without matmul rows.
void need_target(const nlohmann::json& row, const std::string& where, const std::string& key, const std::string& met) {
  if (!row.contains(key) && !row.contains(met)) return;
  const bool has_target = need(row, where, key.c_str(), Want::number_or_null).is_number();
  if (!row.contains(met)) throw InvalidDocument(where + "." + met + " is missing");
  const nlohmann::json& m = row[met];
  if (has_target ? !m.is_boolean() : !m.is_null())
    throw InvalidDocument(where + "." + met + " is " + m.type_name() + ", not " +
                     (has_target ? "true or false (the row has a target)" : "null (the row has no target)"));
}

// A kernel row's library additions: its target as a fraction of copy bandwidth, and the naive
// kernel's and OpenMP loop's times of the same operation with the ratios to them (CPU devices).
void need_kernel_targets(const nlohmann::json& k, const std::string& p) {
  need_target(k, p, "target", "met");
  for (const char* key : {"milliseconds", "naive_ms", "openmp_ms"})
    if (k.contains(key)) need(k, p, key, Want::number);
  for (const std::string base : {"naive", "openmp"}) {
    const std::string ratio = base + "_ratio";
    if (!k.contains(ratio)) continue;
    need(k, p, ratio.c_str(), Want::number);
    need_target(k, p, base + "_target", base + "_met");
  }
}

// One matmul row (bench/matmul_rows.hpp): precision, shape and implementation; then
// either why it was skipped, or gpurt's GFLOP/s with its spread and trials, and either the raw
// library's figures with the ratio and the target, or why the raw side was not measured.
void need_matmul_row(const nlohmann::json& t, const std::string& p) {
  need_all(t, p, {"precision", "shape", "implementation"}, Want::string);
  need_all(t, p, {"m", "n", "k"}, Want::number);
  const std::string impl = t["implementation"];
  if (impl != "portable" && impl != "vendor") throw InvalidDocument(p + ".implementation is '" + impl + "', not portable or vendor");
  if (t.contains("raw_library") && !t["raw_library"].is_null()) need(t, p, "raw_library", Want::string);
  if (t.contains("skipped")) {
    need(t, p, "skipped", Want::string);
    return;
  }
  need_all(t, p, {"gpurt", "gpurt_min", "gpurt_max", "trials", "reps_per_trial", "max_error"}, Want::number);
  if (t.contains("raw_skipped")) {
    need(t, p, "raw_skipped", Want::string);
    return;
  }
  need_all(t, p, {"raw", "ratio"}, Want::number);
  need_spread(t, p);
  if (!t.contains("target")) throw InvalidDocument(p + ".target is missing");
  need_target(t, p, "target", "met");
}

// The CPU baselines of the kernel rows (bench/cpu_rows: "kernel_baselines"), when present: "naive"
// and "openmp" each an array of rows, or an object with "rows", or one with "skipped" saying why;
// each row its name, the library's and the baseline's milliseconds and library_over_<base>.
void need_kernel_baselines(const nlohmann::json& r, const std::string& w) {
  const std::string bw = w + ".kernel_baselines";
  const nlohmann::json& kb = need(r, w, "kernel_baselines", Want::object);
  for (const std::string base : {"naive", "openmp"}) {
    if (!kb.contains(base)) continue;
    const std::string p = bw + "." + base;
    auto each_row = [&](const nlohmann::json& t, const std::string& where) {
      need(t, where, "name", Want::string);
      need_all(t, where, {"library_ms"}, Want::number);
      need(t, where, (base + "_ms").c_str(), Want::number);
      need(t, where, ("library_over_" + base).c_str(), Want::number);
    };
    if (kb[base].is_array()) each_object(kb, bw, base.c_str(), each_row);
    else if (need(kb, bw, base.c_str(), Want::object).contains("skipped")) need(kb[base], p, "skipped", Want::string);
    else each_object(kb[base], p, "rows", each_row);
  }
}

}  // namespace

namespace {
// One run's launch rows, and the optional method, allocation, launch-rate and transfer rows.
void check_launch_and_transfers(const nlohmann::json& r, const std::string& w) {
  const nlohmann::json& launch = need(r, w, "launch", Want::object);
  const std::string where = w + ".launch";  // a named string: g++ 13 warns of a temporary otherwise
  for (const char* k : {"async_us", "sync_us", "enqueue_four_args_us"}) {
    const nlohmann::json& row = need(launch, where, k, Want::object);
    need_all(row, w + ".launch." + k, {"gpurt", "raw", "ratio"}, Want::number);
    need_spread(row, w + ".launch." + k);
  }
  for (const char* k : {"async_us_tracing_on", "launches_per_trial"})
    if (launch.contains(k)) need(launch, w + ".launch", k, Want::number);
  if (r.contains("method")) need(need(r, w, "method", Want::object), w + ".method", "trials", Want::number);
  if (r.contains("alloc")) {
    const std::string aw = w + ".alloc";
    need(need(r, w, "alloc", Want::object), aw, "pairs_per_trial", Want::number);
    each_object(r["alloc"], aw, "rows", [](const nlohmann::json& t, const std::string& p) {
      need(t, p, "first_use", Want::boolean);
      need_all(t, p, {"bytes", "gpurt", "raw", "ratio"}, Want::number);
      need_spread(t, p);
    });
  }
  if (r.contains("launch_scaling")) {
    const std::string lw = w + ".launch_scaling";
    need(need(r, w, "launch_scaling", Want::object), lw, "launches_per_trial", Want::number);
    each_object(r["launch_scaling"], lw, "rows", [](const nlohmann::json& t, const std::string& p) {
      need(t, p, "layout", Want::string);
      need_all(t, p, {"threads", "launches_per_thread", "gpurt", "raw", "ratio"}, Want::number);
      need_spread(t, p);
    });
  }
  each_object(r, w, "transfers", [](const nlohmann::json& t, const std::string& p) {
    need_all(t, p, {"direction", "memory"}, Want::string);
    need_all(t, p, {"bytes", "gpurt", "raw", "ratio"}, Want::number);
    need_spread(t, p);
  });
}

// One run's compile times, kernel rows and the fp32 matmul (with its rows and tensor rows).
void check_build_kernels_matmul(const nlohmann::json& r, const std::string& w) {
  const nlohmann::json& b = need(r, w, "build", Want::object);
  need_all(b, w + ".build", {"raw_cold_ms", "gpurt_cold_ms", "gpurt_cached_ms"}, Want::number);
  need_all(b, w + ".build", {"gpurt_cold_path", "gpurt_cached_path"}, Want::string);
  each_object(r, w, "kernels", [](const nlohmann::json& k, const std::string& p) {
    need(k, p, "name", Want::string);
    need_all(k, p, {"bytes", "gbps", "fraction_of_copy"}, Want::number);
    need_kernel_targets(k, p);
  });
  if (r.contains("kernel_baselines")) need_kernel_baselines(r, w);
  const std::string mw = w + ".matmul";
  const nlohmann::json& m = need(r, w, "matmul", Want::object);
  need_all(m, mw, {"n", "gflops", "milliseconds"}, Want::number);
  if (need(m, mw, "vendor_blas_gflops", Want::number_or_null).is_number())
    need(m, mw, "ratio_to_vendor_blas", Want::number);
  for (const char* k : {"max_error", "ratio_to_vendor_blas"})
    if (m.contains(k)) need(m, mw, k, Want::number);
  for (const char* k : {"vendor_blas_note", "tensor_note"})
    if (m.contains(k)) need(m, mw, k, Want::string);
  if (m.contains("rows")) each_object(m, mw, "rows", need_matmul_row);
  if (m.contains("tensor"))
    each_object(m, mw, "tensor", [](const nlohmann::json& t, const std::string& p) {
      need(t, p, "precision", Want::string);
      need_all(t, p, {"n", "gflops", "max_error"}, Want::number);
      for (const char* k : {"vendor_blas_gflops", "ratio_to_vendor_blas"})
        if (t.contains(k)) need(t, p, k, Want::number);
    });
}

// One run's optional interop rows: cuBLAS through native handles, peer and relayed copies.
void check_interop(const nlohmann::json& r, const std::string& w) {
  if (!r.contains("interop")) return;
  const std::string iw = w + ".interop";
  const nlohmann::json& in = need(r, w, "interop", Want::object);
  const nlohmann::json& g = need(in, iw, "cublas_sgemm", Want::object);
  if (g.contains("skipped")) need(g, iw + ".cublas_sgemm", "skipped", Want::string);
  else {
    need_all(g, iw + ".cublas_sgemm", {"n", "gpurt", "raw", "ratio"}, Want::number);
    need_spread(g, iw + ".cublas_sgemm");
  }
  if (!in.contains("peer_copy")) throw InvalidDocument(iw + ".peer_copy is missing");
  if (in["peer_copy"].is_object())
    need(in["peer_copy"], iw + ".peer_copy", "skipped", Want::string);
  else
    each_object(in, iw, "peer_copy", [](const nlohmann::json& t, const std::string& p) {
      need_all(t, p, {"bytes", "gpurt", "raw", "ratio"}, Want::number);
      need_spread(t, p);
      need(t, p, "peer", Want::string);
      need(t, p, "peer_access", Want::boolean);
    });
  if (in.contains("relayed_copy")) {
    if (in["relayed_copy"].is_object())
      need(in["relayed_copy"], iw + ".relayed_copy", "skipped", Want::string);
    else
      each_object(in, iw, "relayed_copy", [](const nlohmann::json& t, const std::string& p) {
        need_all(t, p, {"bytes", "gpurt", "slower_link", "ratio"}, Want::number);
        need_spread(t, p, "slower_link");
        need(t, p, "from", Want::string);
        need(t, p, "to", Want::string);
      });
  }
}

// One run's optional staging-thread sweep and recorded-chain (graph) rows.
void check_staging_and_graph(const nlohmann::json& r, const std::string& w) {
  if (r.contains("staging_threads")) {
    const nlohmann::json& st = need(r, w, "staging_threads", Want::object);
    const std::string sw = w + ".staging_threads";
    if (!st.contains("default_threads")) throw InvalidDocument(sw + ".default_threads is missing");
    if (!st["default_threads"].is_number())  // one number, or one per direction
      need_all(need(st, sw, "default_threads", Want::object), sw + ".default_threads",
               {"host_to_device", "device_to_host"}, Want::number);
    each_object(st, w + ".staging_threads", "rows", [](const nlohmann::json& t, const std::string& p) {
      need_all(t, p, {"threads", "bytes", "host_to_device", "device_to_host"}, Want::number);
    });
  }
  if (r.contains("graph")) {  // recorded chains (bench/graph_rows.hpp); absent before 2026-11-30
    const std::string gw = w + ".graph";
    const nlohmann::json& g = need(r, w, "graph", Want::object);
    if (g.contains("skipped")) {
      need(g, gw, "skipped", Want::string);
    } else {
      need_all(g, gw, {"kernels_per_measurement", "trials"}, Want::number);
      each_object(g, gw, "rows", [](const nlohmann::json& t, const std::string& p) {
        need(t, p, "chain", Want::string);
        need_all(t, p, {"kernels", "repeats", "gpurt_replay_us", "gpurt_launch_us", "replay_to_launch"}, Want::number);
        need_all(t, p, {"raw_stream_us", "raw_graph_us"}, Want::number_or_null);
        if (t.contains("replay_computes_the_chain")) need(t, p, "replay_computes_the_chain", Want::boolean);
        if (!t.contains("ratio")) return;
        need_all(t, p, {"ratio", "target"}, Want::number);
        const std::string versus = need(t, p, "versus", Want::string);
        if (versus != "raw_graph" && versus != "raw_stream")
          throw InvalidDocument(p + ".versus is '" + versus + "', not raw_graph or raw_stream");
        need(t, p, (versus + "_us").c_str(), Want::number);
        const nlohmann::json& spread = need(t, p, "ratio_spread", Want::array);
        if (spread.size() != 2 || !spread[0].is_number() || !spread[1].is_number())
          throw InvalidDocument(p + ".ratio_spread is not two numbers (lowest, highest)");
      });
    }
  }
}

// One run's optional dialect rows (bench/dialect_rows.hpp; absent before 2026-12-02).
void check_dialect(const nlohmann::json& r, const std::string& w) {
  if (!r.contains("dialect")) return;
  const std::string dw = w + ".dialect";
  const nlohmann::json& d = need(r, w, "dialect", Want::object);
  if (d.contains("skipped")) {
    need(d, dw, "skipped", Want::string);
    return;
  }
  need_all(d, dw, {"elements", "trials", "launches_per_trial"}, Want::number);
  need(d, dw, "native", Want::string);
  each_object(d, dw, "rows", [](const nlohmann::json& t, const std::string& p) {
    need_all(t, p, {"name", "what"}, Want::string);
    if (t.contains("wrong")) {
      need(t, p, "wrong", Want::string);
      return;
    }
    need_all(t, p, {"portable_ms", "native_ms", "portable_gbps", "native_gbps", "ratio", "ratio_low", "ratio_high"},
             Want::number);
  });
}

}  // namespace

void check_bench_document(const nlohmann::json& doc) {
  if (!doc.is_object()) throw InvalidDocument(std::string("the document is ") + doc.type_name() + ", not an object");
  need(doc, "", "command", Want::string);
  if (need(doc, "", "runs", Want::array).empty()) throw InvalidDocument("runs is empty");
  for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
    const std::string w = "runs[" + std::to_string(i) + "]";
    const nlohmann::json& r = doc["runs"][i];
    if (!r.is_object()) throw InvalidDocument(w + " is " + r.type_name() + ", not an object");
    need_all(r, w, {"date", "host"}, Want::string);
    need(r, w, "quick", Want::boolean);
    need(r, w, "copy_bandwidth_gbps", Want::number);
    need_all(need(r, w, "device", Want::object), w + ".device",
             {"selector", "name", "backend", "driver", "backend_version", "raw_api"}, Want::string);
    check_launch_and_transfers(r, w);
    check_build_kernels_matmul(r, w);
    check_interop(r, w);
    check_staging_and_graph(r, w);
    check_dialect(r, w);
  }
}
}  // namespace gpurt::bench::render
