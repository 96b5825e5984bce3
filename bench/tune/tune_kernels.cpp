// gpurt-tune-kernels: tries build-time shapes of the library's bandwidth kernels (scan, histogram,
// conv2d 5x5, transpose, the register kernels of softmax and layer norm over rows of 1,024) on one device and reports each one's rate against the device's copy
// bandwidth, to choose the library's defaults (kernels/library.cpp) from measurements.
//
//   gpurt-tune-kernels [--device SEL] [--json FILE] [--quick] [--only scan,histogram,conv2d,transpose,rows]
//
// Each candidate is the kernel's source (the embedded kernels/*.gpurt) built through the public API
// with its defines, checked against a CPU reference on a small odd size (scan: also exclusive, and on
// views at odd offsets; conv2d: also a width that is a multiple of 4), then timed: a warm-up,
// then the median of `reps` timed batches (events on a timed queue around `batch` launches back to
// back, as `gpurt bench` times the library). Sizes and bytes as in bench/runner.cpp: 8192 x 8192
// floats (64 Mi; --quick: 512 x 512); scan and transpose and conv2d count 2 x n x 4 bytes,
// histogram n x 4. The copy bandwidth is Queue::copy device to device of n floats, 2 x the bytes.
// The first candidate of each kernel is the library's default. Where each define goes in
// kernels/library.cpp: scan_impl (GPURT_SCAN_GROUP from scan_group(), the tile = group x items;
// ITEMS/LOOK/TICKET are kernel defaults), histogram() (copies, unroll; group and groups from
// shaped_kernel/stride_config), conv2d() (gx, gy, rx, ry; local = filter_size > 7), transpose()
// (tile, by, pad).
#include <gpurt/gpurt.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "embedded_kernels.hpp"

namespace {

using gpurt::Buffer;
using gpurt::Dim3;
using gpurt::LaunchConfig;
using nlohmann::json;

struct Opt {
  std::string device;
  std::string json_file;
  std::string only;
  bool quick = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Tuner {
  gpurt::Device dev;
  gpurt::Queue q;
  Opt opt;
  std::size_t side = 0, n = 0;
  int reps = 7, batch = 3;
  double copy_gbps = 0;

  // Median device milliseconds per call of `work` (warm-up first, then `reps` batches).
  double time_ms(const std::function<void()>& work) {
    work();
    q.finish();
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) {
      const gpurt::Event a = q.record();
      for (int b = 0; b < batch; ++b) work();
      const gpurt::Event e = q.record();
      v.push_back(gpurt::elapsed_ms(a, e) / batch);
    }
    q.finish();
    return median(v);
  }

  gpurt::Kernel build(const char* file, const char* source, const char* kernel,
                      const std::vector<std::pair<std::string, std::string>>& defines) {
    gpurt::BuildOptions o;
    for (const auto& d : defines) o.defines.push_back({d.first, d.second});
    return dev.build({gpurt::SourceLanguage::portable, std::string(source), file}, o).kernel(kernel);
  }
};

// Adds `row` to `rows`, with its fraction of the copy bandwidth, and prints it at once (so a run
// cut short still shows what it measured).
void add_row(const Tuner& t, json& rows, json row) {
  if (row.contains("gbps")) {
    row["fraction_of_copy"] = t.copy_gbps > 0 ? row["gbps"].get<double>() / t.copy_gbps : 0.0;
    std::printf("  %-44s %9.3f ms %9.1f GB/s %6.3f of copy\n", row["label"].get<std::string>().c_str(),
                row["ms"].get<double>(), row["gbps"].get<double>(), row["fraction_of_copy"].get<double>());
  } else {
    std::printf("  %-44s FAILED: %s\n", row["label"].get<std::string>().c_str(), row["error"].get<std::string>().c_str());
  }
  std::fflush(stdout);
  rows.push_back(std::move(row));
}

json defines_json(const std::vector<std::pair<std::string, std::string>>& d) {
  json j = json::object();
  for (const auto& p : d) j[p.first] = p.second;
  return j;
}

// One candidate: its defines, how to launch it on `count` elements (or a side x side matrix), and
// a check on a small size that returns an empty string or what went wrong.
struct Candidate {
  std::string label;
  std::vector<std::pair<std::string, std::string>> defines;
};

std::vector<float> small_ints(std::size_t count, std::mt19937& rng, int hi) {
  std::uniform_int_distribution<int> d(0, hi);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(d(rng));
  return v;
}

// ---- scan (float, inclusive) ----
struct ScanShape {
  std::size_t group, items, look, ticket = 1;  // ticket 0: tiles by group index (GPURT_SCAN_TICKET)
  std::size_t batch = 0;                       // 1: all loads of a work-item in flight (GPURT_SCAN_BATCH)
  // The candidate forms (kernels/scan.gpurt's header): registers (GPURT_SCAN_REGS), 16-byte loads
  // and stores of each work-item's run (GPURT_SCAN_VLOAD/VSTORE), early aggregate (GPURT_SCAN_EARLY).
  std::size_t regs = 0, vload = 0, vstore = 0, early = 0;
};

std::string scan_label(const ScanShape& s) {
  std::string l = "group " + std::to_string(s.group) + " x " + std::to_string(s.items) + " look " +
                  std::to_string(s.look) + (s.ticket ? "" : " by group index") + (s.batch ? " batched" : "");
  if (s.regs) l += std::string(" regs") + (s.vload ? " vload" : "") + (s.vstore ? " vstore" : "");
  if (s.early) l += " early";
  return l;
}

json tune_scan(Tuner& t) {
  std::vector<ScanShape> shapes = {// the reference form (all measured 0.64-0.67 of copy on the H200)
                                   {256, 32, 4}, {256, 16, 4}, {128, 32, 4}, {128, 64, 4}, {512, 16, 4},
                                   {1024, 8, 4}, {256, 32, 1}, {256, 32, 2}, {256, 32, 4, 0}, {256, 16, 4, 0},
                                   {512, 16, 4, 0}, {128, 32, 4, 0},
                                   // batched loads (GPURT_SCAN_BATCH=1)
                                   {256, 32, 4, 1, 1}, {256, 16, 4, 1, 1}, {128, 32, 4, 1, 1}, {128, 64, 4, 1, 1},
                                   {512, 16, 4, 1, 1}, {256, 32, 1, 1, 1}, {256, 32, 4, 0, 1}, {128, 32, 4, 0, 1},
                                   // candidate forms (h21f): early aggregate, register form, 16-byte runs
                                   {256, 32, 4, 1, 0, 0, 0, 0, 1}, {256, 32, 4, 1, 0, 1, 0, 0, 0},
                                   {256, 32, 4, 1, 0, 1, 1, 0, 0}, {256, 32, 4, 1, 0, 1, 0, 1, 0},
                                   {256, 32, 4, 1, 0, 1, 1, 1, 0}, {256, 32, 4, 1, 0, 1, 1, 0, 1},
                                   {256, 32, 4, 1, 0, 1, 1, 1, 1}, {256, 32, 4, 1, 0, 1, 0, 0, 1},
                                   {128, 32, 4, 1, 0, 1, 1, 1, 1}, {512, 16, 4, 1, 0, 1, 1, 1, 1},
                                   {256, 16, 4, 1, 0, 1, 1, 1, 1}, {128, 64, 4, 1, 0, 1, 1, 0, 1},
                                   {256, 32, 4, 0, 0, 1, 1, 1, 1}, {256, 32, 1, 1, 0, 1, 1, 1, 1}};
  const std::size_t check_n = t.opt.quick ? 100003 : 3000017;
  std::mt19937 rng(21);
  const std::vector<float> hin = small_ints(check_n, rng, 3);  // sums stay exact in float (< 2^24)
  auto cin = t.dev.alloc<float>(check_n), cout = t.dev.alloc<float>(check_n);
  t.q.write(hin, cin);
  auto x = t.dev.alloc<float>(t.n), z = t.dev.alloc<float>(t.n);
  t.q.fill(x, 1.0f);
  json rows = json::array();
  for (const ScanShape& s : shapes) {
    if (s.group > t.dev.properties().max_group_size) continue;
    if (s.group * s.items * 4 > 44 * 1024) continue;
    Candidate c{scan_label(s),
                {{"GPURT_T", "float"},
                 {"GPURT_SCAN_REGS", std::to_string(s.regs)},
                 {"GPURT_SCAN_VLOAD", std::to_string(s.vload)},
                 {"GPURT_SCAN_VSTORE", std::to_string(s.vstore)},
                 {"GPURT_SCAN_EARLY", std::to_string(s.early)},
                 {"GPURT_SCAN_BATCH", std::to_string(s.batch)},
                 {"GPURT_SCAN_TICKET", std::to_string(s.ticket)},
                 {"GPURT_SCAN_GROUP", std::to_string(s.group)},
                 {"GPURT_SCAN_ITEMS", std::to_string(s.items)},
                 {"GPURT_SCAN_LOOK", std::to_string(s.look)}}};
    json row = {{"label", c.label}, {"defines", defines_json(c.defines)}};
    try {
      const gpurt::Kernel k = t.build("scan.gpurt", gpurt::lib::embedded::scan, "gpurt_scan", c.defines);
      const std::size_t tile = s.group * s.items;
      const std::size_t max_tiles = (std::max(t.n, check_n) + tile - 1) / tile;
      auto state = t.dev.alloc<std::uint64_t>(2 + max_tiles);
      t.q.fill(state, std::uint64_t{0});
      std::uint32_t tickets = 0, epoch = 0;
      auto launch = [&](const Buffer<float>& in, const Buffer<float>& out, std::size_t count, int exclusive = 0) {
        const std::size_t tiles = (count + tile - 1) / tile;
        ++epoch;
        t.q.launch(k, LaunchConfig(Dim3(tiles), Dim3(s.group)), in, out, static_cast<std::uint64_t>(count), exclusive,
                   state, tickets, epoch);
        tickets += static_cast<std::uint32_t>(tiles);
      };
      // Checks: inclusive on aligned buffers, exclusive, and views at odd offsets (the 16-byte paths
      // of the candidate forms fall back to scalar accesses there); sums of small ints are exact.
      std::string error;
      const std::tuple<std::size_t, std::size_t, int> checks[] = {{0, 0, 0}, {0, 0, 1}, {1, 3, 0}};
      for (const auto& [in_off, out_off, exclusive] : checks) {
        const std::size_t count = check_n - 4;  // odd: the last tile partial
        t.q.fill(cout, -1.0f);
        launch(cin.view(in_off, count), cout.view(out_off, count), count, exclusive);
        const std::vector<float> got = t.q.read(cout);
        double run = 0;
        for (std::size_t i = 0; i < count && error.empty(); ++i) {
          const double before = run;
          run += hin[in_off + i];
          const float want = static_cast<float>(exclusive ? before : run);
          if (got[out_off + i] != want)
            error = std::string(exclusive ? "exclusive" : "inclusive") + " (in at " + std::to_string(in_off) +
                    ", out at " + std::to_string(out_off) + "): wrong result at " + std::to_string(i) + ": " +
                    std::to_string(got[out_off + i]) + " for " + std::to_string(want);
        }
      }
      if (!error.empty()) {
        row["error"] = error;
      } else {
        const double ms = t.time_ms([&] { launch(x, z, t.n); });
        row["ms"] = ms;
        row["gbps"] = 2.0 * t.n * 4 / (ms * 1e-3) * 1e-9;
      }
    } catch (const std::exception& e) {
      row["error"] = e.what();
    }
    add_row(t, rows, row);
  }
  return rows;
}

// ---- histogram (256 bins) ----
struct HistShape {
  std::size_t copies, unroll, group, waves;  // waves: groups = waves x the device's resident groups
};

json tune_histogram(Tuner& t) {
  const std::vector<HistShape> shapes = {{8, 4, 256, 1}, {1, 1, 256, 1}, {1, 4, 256, 1}, {2, 4, 256, 1},
                                         {4, 4, 256, 1}, {8, 1, 256, 1}, {8, 8, 256, 1}, {8, 4, 256, 2},
                                         {4, 4, 512, 1}, {16, 4, 512, 1}, {8, 4, 128, 1}, {4, 8, 1024, 1}};
  const std::uint32_t bins = 256;
  const std::size_t check_n = t.opt.quick ? 100003 : 1000003;
  std::mt19937 rng(22);
  std::uniform_int_distribution<std::uint32_t> d(0, 299);  // some values out of range: not counted
  std::vector<std::uint32_t> hin(check_n), ref(bins, 0);
  for (auto& v : hin) {
    v = d(rng);
    if (v < bins) ++ref[v];
  }
  auto cin = t.dev.alloc<std::uint32_t>(check_n), counts = t.dev.alloc<std::uint32_t>(bins);
  t.q.write(hin, cin);
  auto keys = t.dev.alloc<std::uint32_t>(t.n);
  {
    std::vector<std::uint32_t> hk(t.n);
    std::uint64_t r = 0x2545f4914f6cdd1dull;  // the bench's keys: xorshift, low 8 bits
    for (auto& k : hk) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      k = static_cast<std::uint32_t>(r & 0xff);
    }
    t.q.write(hk, keys);
  }
  json rows = json::array();
  for (const HistShape& s : shapes) {
    if (s.group > t.dev.properties().max_group_size) continue;
    const std::size_t local = bins * 4 * s.copies;
    if (local > t.dev.properties().max_local_memory / 2) continue;
    Candidate c{"copies " + std::to_string(s.copies) + " unroll " + std::to_string(s.unroll) + " group " +
                    std::to_string(s.group) + " waves " + std::to_string(s.waves),
                {{"GPURT_HIST_COPIES", std::to_string(s.copies)}, {"GPURT_HIST_UNROLL", std::to_string(s.unroll)}}};
    json row = {{"label", c.label}, {"defines", defines_json(c.defines)}, {"group", s.group}};
    try {
      const gpurt::Kernel k = t.build("histogram.gpurt", gpurt::lib::embedded::histogram, "gpurt_histogram", c.defines);
      const std::size_t wave = std::max<std::size_t>(1, t.dev.properties().compute_units) *
                               std::max<std::size_t>(1, k.resident_groups_per_unit(s.group, local)) * s.waves;
      row["groups"] = wave;
      auto launch = [&](const Buffer<std::uint32_t>& in, std::size_t count) {
        const std::size_t groups = std::max<std::size_t>(1, std::min(wave, (count + s.group - 1) / s.group));
        t.q.launch(k, LaunchConfig(Dim3(groups), Dim3(s.group), local), in, counts, static_cast<std::uint64_t>(count),
                   bins);
      };
      t.q.fill(counts, 0u);
      launch(cin, check_n);
      const std::vector<std::uint32_t> got = t.q.read(counts);
      if (got != ref) {
        row["error"] = "wrong counts";
      } else {
        const double ms = t.time_ms([&] { launch(keys, t.n); });  // counts only grow: fine for timing
        row["ms"] = ms;
        row["gbps"] = 1.0 * t.n * 4 / (ms * 1e-3) * 1e-9;
      }
    } catch (const std::exception& e) {
      row["error"] = e.what();
    }
    add_row(t, rows, row);
  }
  return rows;
}

// ---- conv2d 5x5 ----
struct ConvShape {
  std::size_t gx, gy, rx, ry;
  int local;     // 1: the local-memory tile (rx must be 1)
  int vec = 0;   // 1: float4 rows (GPURT_CONV_VEC, rx 4; kernels/conv2d.gpurt's header)
  int shfl = 0;  // 1: halo by warp shuffles on CUDA (GPURT_CONV_SHFL; elsewhere the same as vec)
};

std::vector<float> conv_ref(const std::vector<float>& in, const std::vector<float>& f, std::size_t w, std::size_t h,
                            int fs) {
  std::vector<float> out(w * h);
  const int r = fs / 2;
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      double acc = 0;
      for (int fy = 0; fy < fs; ++fy)
        for (int fx = 0; fx < fs; ++fx) {
          const long long gy = static_cast<long long>(y) + fy - r, gx = static_cast<long long>(x) + fx - r;
          if (gy >= 0 && gx >= 0 && gy < static_cast<long long>(h) && gx < static_cast<long long>(w))
            acc += static_cast<double>(f[fy * fs + fx]) * in[gy * w + gx];
        }
      out[y * w + x] = static_cast<float>(acc);
    }
  return out;
}

json tune_conv2d(Tuner& t) {
  const std::vector<ConvShape> shapes = {{64, 2, 1, 16, 0}, {32, 4, 1, 16, 0}, {64, 4, 1, 8, 0}, {32, 8, 1, 8, 0},
                                         {128, 1, 1, 16, 0}, {64, 2, 2, 8, 0},  {64, 2, 2, 16, 0}, {32, 4, 2, 16, 0},
                                         {32, 2, 4, 16, 0}, {64, 4, 2, 8, 0},  {64, 2, 1, 16, 1}, {32, 8, 1, 8, 1},
                                         {64, 4, 1, 8, 1},
                                         // beyond rx 2 (g21b): rx 4 with narrower groups, ry 8 and 32
                                         {16, 8, 4, 16, 0}, {32, 4, 4, 8, 0}, {16, 4, 4, 32, 0}, {64, 2, 2, 32, 0},
                                         {32, 4, 2, 32, 0}, {64, 4, 2, 16, 0}, {128, 2, 2, 8, 0},
                                         // float4 rows (h21f): rx 4, scalar halo, then shuffled halo
                                         {64, 2, 4, 16, 0, 1}, {32, 4, 4, 16, 0, 1}, {32, 2, 4, 16, 0, 1},
                                         {64, 4, 4, 8, 0, 1}, {32, 4, 4, 32, 0, 1}, {16, 8, 4, 16, 0, 1},
                                         {64, 2, 4, 16, 0, 1, 1}, {32, 4, 4, 16, 0, 1, 1}, {32, 2, 4, 16, 0, 1, 1},
                                         {64, 4, 4, 8, 0, 1, 1}, {32, 4, 4, 32, 0, 1, 1}, {32, 8, 4, 8, 0, 1, 1}};
  const int fs = 5;
  // Checked sizes: 301 x 203 (odd: partial groups at both edges, every row start misaligned) and
  // 1028 x 203 (width a multiple of 4 but not of any tile: interior groups take the float4 rows).
  const std::size_t ch = 203;
  const std::size_t widths[] = {301, 1028};
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> hf(fs * fs);
  for (float& v : hf) v = d(rng);
  std::vector<std::vector<float>> hins, refs;
  std::vector<Buffer<float>> cins, couts;
  for (const std::size_t cw : widths) {
    std::vector<float> hin(cw * ch);
    for (float& v : hin) v = d(rng);
    refs.push_back(conv_ref(hin, hf, cw, ch, fs));
    cins.push_back(t.dev.alloc<float>(cw * ch));
    couts.push_back(t.dev.alloc<float>(cw * ch));
    t.q.write(hin, cins.back());
    hins.push_back(std::move(hin));
  }
  auto filter = t.dev.alloc<float>(fs * fs);
  t.q.write(hf, filter);
  auto x = t.dev.alloc<float>(t.n), z = t.dev.alloc<float>(t.n);
  t.q.fill(x, 0.5f);
  json rows = json::array();
  for (const ConvShape& s : shapes) {
    if (s.gx * s.gy > t.dev.properties().max_group_size) continue;
    Candidate c{std::string(s.local ? "local " : "direct ") + std::to_string(s.gx) + " x " + std::to_string(s.gy) +
                    ", " + std::to_string(s.rx) + " x " + std::to_string(s.ry) + " per item" +
                    (s.vec ? " float4" : "") + (s.shfl ? " shfl" : ""),
                {{"GPURT_FSIZE", std::to_string(fs)},
                 {"GPURT_CONV_GX", std::to_string(s.gx)},
                 {"GPURT_CONV_GY", std::to_string(s.gy)},
                 {"GPURT_CONV_RX", std::to_string(s.rx)},
                 {"GPURT_CONV_RY", std::to_string(s.ry)},
                 {"GPURT_CONV_LOCAL", std::to_string(s.local)},
                 {"GPURT_CONV_VEC", std::to_string(s.vec)},
                 {"GPURT_CONV_SHFL", std::to_string(s.shfl)}}};
    json row = {{"label", c.label}, {"defines", defines_json(c.defines)}};
    try {
      const gpurt::Kernel k = t.build("conv2d.gpurt", gpurt::lib::embedded::conv2d, "gpurt_conv2d", c.defines);
      const std::size_t tw = s.gx * (s.local ? 1 : s.rx), th = s.gy * s.ry;
      auto launch = [&](const Buffer<float>& in, const Buffer<float>& out, std::size_t w, std::size_t h) {
        t.q.launch(k, LaunchConfig(Dim3((w + tw - 1) / tw, (h + th - 1) / th), Dim3(s.gx, s.gy)), in, filter, out,
                   static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h));
      };
      std::string error;
      for (std::size_t ci = 0; ci < cins.size() && error.empty(); ++ci) {
        launch(cins[ci], couts[ci], widths[ci], ch);
        const std::vector<float> got = t.q.read(couts[ci]);
        const std::vector<float>& ref = refs[ci];
        for (std::size_t i = 0; i < got.size() && error.empty(); ++i)
          if (!(std::fabs(got[i] - ref[i]) <= 1e-4f * (1.0f + std::fabs(ref[i]))))
            error = std::to_string(widths[ci]) + " x " + std::to_string(ch) + ": wrong result at " + std::to_string(i) +
                    ": " + std::to_string(got[i]) + " for " + std::to_string(ref[i]);
      }
      if (!error.empty()) {
        row["error"] = error;
      } else {
        const double ms = t.time_ms([&] { launch(x, z, t.side, t.side); });
        row["ms"] = ms;
        row["gbps"] = 2.0 * t.n * 4 / (ms * 1e-3) * 1e-9;
      }
    } catch (const std::exception& e) {
      row["error"] = e.what();
    }
    add_row(t, rows, row);
  }
  return rows;
}

// ---- transpose ----
struct TransShape {
  std::size_t tile, by, pad;
};

json tune_transpose(Tuner& t) {
  const std::vector<TransShape> shapes = {{32, 8, 1},  {32, 4, 1},  {32, 16, 1}, {32, 32, 1}, {32, 8, 0},
                                          {64, 4, 1},  {64, 8, 1},  {64, 16, 1}, {64, 8, 0},  {16, 16, 1}};
  const std::size_t cr = 333, cc = 517;
  std::mt19937 rng(24);
  const std::vector<float> hin = small_ints(cr * cc, rng, 1000000);
  auto cin = t.dev.alloc<float>(cr * cc), cout = t.dev.alloc<float>(cr * cc);
  t.q.write(hin, cin);
  auto x = t.dev.alloc<float>(t.n), z = t.dev.alloc<float>(t.n);
  t.q.fill(x, 2.0f);
  json rows = json::array();
  for (const TransShape& s : shapes) {
    if (s.tile * s.by > t.dev.properties().max_group_size) continue;
    Candidate c{"tile " + std::to_string(s.tile) + ", " + std::to_string(s.tile) + " x " + std::to_string(s.by) +
                    " items, pad " + std::to_string(s.pad),
                {{"GPURT_TR_TILE", std::to_string(s.tile)},
                 {"GPURT_TR_BY", std::to_string(s.by)},
                 {"GPURT_TR_PAD", std::to_string(s.pad)}}};
    json row = {{"label", c.label}, {"defines", defines_json(c.defines)}};
    try {
      const gpurt::Kernel k = t.build("transpose.gpurt", gpurt::lib::embedded::transpose, "gpurt_transpose", c.defines);
      auto launch = [&](const Buffer<float>& in, const Buffer<float>& out, std::size_t rows_, std::size_t cols_) {
        t.q.launch(k, LaunchConfig(Dim3((cols_ + s.tile - 1) / s.tile, (rows_ + s.tile - 1) / s.tile), Dim3(s.tile, s.by)),
                   in, out, static_cast<std::uint32_t>(rows_), static_cast<std::uint32_t>(cols_));
      };
      launch(cin, cout, cr, cc);
      const std::vector<float> got = t.q.read(cout);
      bool ok = true;
      for (std::size_t r = 0; r < cr && ok; ++r)
        for (std::size_t col = 0; col < cc && ok; ++col) ok = got[col * cr + r] == hin[r * cc + col];
      if (!ok) {
        row["error"] = "wrong result";
      } else {
        const double ms = t.time_ms([&] { launch(x, z, t.side, t.side); });
        row["ms"] = ms;
        row["gbps"] = 2.0 * t.n * 4 / (ms * 1e-3) * 1e-9;
      }
    } catch (const std::exception& e) {
      row["error"] = e.what();
    }
    add_row(t, rows, row);
  }
  return rows;
}

// ---- softmax and layer norm over rows of 1,024 (the register kernels; float, half, bfloat16) ----
struct RowsShape {
  std::size_t vec, exact, prefetch, waves;  // waves: groups = waves x the resident groups (0: the library's x8)
};

std::string rows_label(const char* kernel, const char* type, const RowsShape& s) {
  return std::string(kernel) + " " + type + " vec " + std::to_string(s.vec) + (s.exact ? " exact" : "") +
         (s.prefetch ? " prefetch" : "") + " waves " + (s.waves ? std::to_string(s.waves) : std::string("8"));
}

// Element conversions for the rows' host side.
template <class T> T rows_from(float f) { return T(f); }
template <class T> float rows_to(T v) { return static_cast<float>(v); }

template <class T>
void tune_rows_of(Tuner& t, json& rows, const char* type, long long storage, const std::vector<RowsShape>& shapes) {
  const std::size_t cols = 1024, big_rows = t.n / cols;
  const std::size_t check_rows = 301;  // not a multiple of the rows a group takes
  std::mt19937 rng(23);
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::vector<T> hin(check_rows * cols), hg(cols), hb(cols);
  for (auto& v : hin) v = rows_from<T>(d(rng));
  for (auto& v : hg) v = rows_from<T>(1.0f + 0.25f * d(rng));
  for (auto& v : hb) v = rows_from<T>(0.25f * d(rng));
  // References in double from the stored inputs.
  std::vector<double> ref_soft(hin.size()), ref_norm(hin.size());
  for (std::size_t r = 0; r < check_rows; ++r) {
    double m = -1e300, s = 0, mean = 0, var = 0;
    for (std::size_t c = 0; c < cols; ++c) m = std::max(m, (double)rows_to(hin[r * cols + c]));
    for (std::size_t c = 0; c < cols; ++c) s += std::exp(rows_to(hin[r * cols + c]) - m);
    for (std::size_t c = 0; c < cols; ++c) mean += rows_to(hin[r * cols + c]);
    mean /= cols;
    for (std::size_t c = 0; c < cols; ++c) var += std::pow(rows_to(hin[r * cols + c]) - mean, 2);
    const double rstd = 1.0 / std::sqrt(var / cols + 1e-5);
    for (std::size_t c = 0; c < cols; ++c) {
      const double x = rows_to(hin[r * cols + c]);
      ref_soft[r * cols + c] = std::exp(x - m) / s;
      ref_norm[r * cols + c] = (x - mean) * rstd * rows_to(hg[c]) + rows_to(hb[c]);
    }
  }
  const double tol = storage == 0 ? 1e-5 : storage == 1 ? 1.0 / 1024 : 1.0 / 128;  // relative, plus a floor
  auto cin = t.dev.alloc<T>(hin.size()), cout = t.dev.alloc<T>(hin.size());
  auto g = t.dev.alloc<T>(cols), b = t.dev.alloc<T>(cols);
  t.q.write(hin, cin);
  t.q.write(hg, g);
  t.q.write(hb, b);
  auto x = t.dev.alloc<T>(big_rows * cols), z = t.dev.alloc<T>(big_rows * cols);
  t.q.fill(x, rows_from<T>(0.5f));
  const std::size_t w = t.dev.properties().sub_group_sizes.empty() ? 0 : t.dev.properties().sub_group_sizes[0];
  if (w == 0 || cols % w != 0 || cols / w > 32) return;
  for (const RowsShape& s : shapes) {
    for (int kind = 0; kind < 2; ++kind) {
      const char* kernel = kind == 0 ? "gpurt_softmax_rows_in_registers" : "gpurt_layer_norm_rows_in_registers";
      const std::vector<std::pair<std::string, std::string>> defines = {
          {"GPURT_ROWS_GROUP", "128"},
          {"GPURT_ROWS_STORAGE", std::to_string(storage)},
          {"GPURT_ROWS_PER_LANE", std::to_string(cols / w)},
          {"GPURT_ROWS_VEC", std::to_string(s.vec)},
          {"GPURT_ROWS_EXACT", std::to_string(s.exact)},
          {"GPURT_ROWS_PREFETCH", std::to_string(s.prefetch)}};
      json row = {{"label", rows_label(kind == 0 ? "softmax" : "layer_norm", type, s)}, {"defines", defines_json(defines)}};
      try {
        const gpurt::Kernel k = t.build("rows.gpurt", gpurt::lib::embedded::rows, kernel, defines);
        const std::size_t resident = k.resident_groups_per_unit(128) * std::max<std::size_t>(1, t.dev.properties().compute_units);
        auto launch = [&](const Buffer<T>& in, const Buffer<T>& out, std::size_t nrows) {
          const std::size_t groups =
              std::max<std::size_t>(1, std::min((nrows + 128 / w - 1) / (128 / w), resident * (s.waves ? s.waves : 8)));
          const LaunchConfig cfg{Dim3(groups), Dim3(128)};
          if (kind == 0)
            t.q.launch(k, cfg, in, out, static_cast<std::uint64_t>(nrows), static_cast<std::uint64_t>(cols));
          else
            t.q.launch(k, cfg, in, g, b, out, static_cast<std::uint64_t>(nrows), static_cast<std::uint64_t>(cols), 1e-5f);
        };
        t.q.fill(cout, rows_from<T>(-7.0f));
        launch(cin, cout, check_rows);
        const std::vector<T> got = t.q.read(cout);
        const std::vector<double>& ref = kind == 0 ? ref_soft : ref_norm;
        std::string error;
        for (std::size_t i = 0; i < got.size() && error.empty(); ++i) {
          const double e = std::abs(rows_to(got[i]) - ref[i]);
          if (!(e <= tol * std::abs(ref[i]) + (kind == 0 ? 1e-7 : tol)))
            error = "wrong result at " + std::to_string(i) + ": " + std::to_string(rows_to(got[i])) + " for " +
                    std::to_string(ref[i]);
        }
        row["resident_groups"] = resident;
        if (!error.empty()) {
          row["error"] = error;
        } else {
          const double ms = t.time_ms([&] { launch(x, z, big_rows); });
          row["ms"] = ms;
          row["gbps"] = 2.0 * big_rows * cols * sizeof(T) / (ms * 1e-3) * 1e-9;
        }
      } catch (const std::exception& e) {
        row["error"] = e.what();
      }
      add_row(t, rows, row);
    }
  }
}

json tune_rows(Tuner& t) {
  json rows = json::array();
  const std::vector<RowsShape> f32 = {{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 1, 1, 1}, {1, 1, 0, 1}};
  const std::vector<RowsShape> b16 = {{2, 0, 0, 0}, {8, 1, 0, 0}, {8, 0, 0, 0}, {4, 1, 0, 0}, {2, 1, 0, 0},
                                      {8, 1, 1, 0}, {8, 1, 1, 1}, {8, 1, 1, 2}, {8, 1, 0, 1}, {8, 1, 0, 2}};
  tune_rows_of<float>(t, rows, "float", 0, f32);
  tune_rows_of<gpurt::half>(t, rows, "half", 1, b16);
  tune_rows_of<gpurt::bfloat16>(t, rows, "bf16", 2, b16);
  return rows;
}

int usage(const char* why) {
  std::cerr << "gpurt-tune-kernels: " << why
            << "\nusage: gpurt-tune-kernels [--device SEL] [--json FILE] [--quick] [--only scan,histogram,conv2d,transpose,rows]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Opt opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    if (a == "--device") {
      if (!value(opt.device)) return usage("--device needs a selector (cuda:0, opencl:1, ...)");
    } else if (a == "--json") {
      if (!value(opt.json_file)) return usage("--json needs a file name");
    } else if (a == "--only") {
      if (!value(opt.only)) return usage("--only needs a list of kernels");
    } else if (a == "--quick") {
      opt.quick = true;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  try {
    gpurt::Device dev = opt.device.empty() ? gpurt::default_device() : gpurt::device(opt.device);
    Tuner t{dev, dev.create_queue(), opt};
    t.side = opt.quick ? 512 : 8192;
    t.n = t.side * t.side;
    t.reps = opt.quick ? 5 : 7;
    t.batch = opt.quick ? 1 : 3;
    std::cout << "device: " << dev.description() << "\n" << std::flush;
    {
      auto a = dev.alloc<float>(t.n), b = dev.alloc<float>(t.n);
      t.q.fill(a, 1.0f);
      const double ms = t.time_ms([&] { t.q.copy(a, b); });
      t.copy_gbps = 2.0 * t.n * 4 / (ms * 1e-3) * 1e-9;
    }
    std::printf("copy bandwidth: %.1f GB/s (%zu floats, device to device)\n", t.copy_gbps, t.n);
    json out = {{"device", dev.description()},
                {"selector", opt.device},
                {"quick", opt.quick},
                {"floats", t.n},
                {"side", t.side},
                {"copy_gbps", t.copy_gbps},
                {"kernels", json::object()}};
    const std::vector<std::pair<std::string, std::function<json(Tuner&)>>> kernels = {
        {"scan", tune_scan}, {"histogram", tune_histogram}, {"conv2d_5x5", tune_conv2d}, {"transpose", tune_transpose}, {"rows", tune_rows}};
    for (const auto& [name, tune] : kernels) {
      if (!opt.only.empty() && opt.only.find(name.substr(0, name.find('_'))) == std::string::npos) continue;
      std::printf("\n%s\n", name.c_str());
      json rows = tune(t);
      json best;
      for (const json& r : rows)
        if (r.contains("gbps") && (best.is_null() || r["gbps"].get<double>() > best["gbps"].get<double>())) best = r;
      if (!best.is_null())
        std::printf("  best: %s (%.3f of copy; first row is the library's default)\n",
                    best["label"].get<std::string>().c_str(), best["fraction_of_copy"].get<double>());
      out["kernels"][name] = {{"candidates", rows}, {"best", best}};
      std::fflush(stdout);
    }
    if (!opt.json_file.empty()) {
      std::ofstream f(opt.json_file);
      f << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";  // device names need not be UTF-8
      if (!f) {
        std::cerr << "gpurt-tune-kernels: could not write " << opt.json_file << "\n";
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "gpurt-tune-kernels: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
