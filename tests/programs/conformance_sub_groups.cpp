// Sub-group operations and the group collectives built on them (kernel-language.md, "Sub-groups"
// and "Group collectives"): every word, every type, at the sub-group size the device gives, with
// partial sub-groups, against a CPU reference on fresh random inputs and on edge values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "sub_group_kernels.hpp"

using namespace gpurt;

namespace {

// One work-item's account of itself (the layout words of sub_group_kernels.hpp).
struct Item {
  std::uint32_t size, lane, sg, count, max, group, local;
};

std::vector<Item> items_of(const std::vector<std::uint32_t>& w) {
  std::vector<Item> out(w.size() / 7);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = {w[i * 7], w[i * 7 + 1], w[i * 7 + 2], w[i * 7 + 3], w[i * 7 + 4], w[i * 7 + 5], w[i * 7 + 6]};
  return out;
}

// Work-items by group, then sub-group, in lane order; checks the layout's promises on the way.
using Layout = std::map<std::uint32_t, std::map<std::uint32_t, std::vector<std::size_t>>>;
Layout check_layout(const Device& dev, const std::vector<Item>& items, std::size_t group_items,
                    bool forced_single = false) {
  Layout l;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    auto& lanes = l[it.group][it.sg];
    if (lanes.size() <= it.lane) lanes.resize(it.lane + 1, SIZE_MAX);
    CHECK(lanes[it.lane] == SIZE_MAX);  // "its local id in it": distinct
    lanes[it.lane] = i;
  }
  const DeviceProperties& p = dev.properties();
  const bool single = !p.sub_groups || forced_single;
  const bool warps = !single && p.sub_groups && p.sub_group_sizes == std::vector<std::uint32_t>{32} &&
                     (p.backend == "cuda" || p.vendor.find("NVIDIA") != std::string::npos);
  std::size_t wrong = 0;
  for (auto& [g, sgs] : l) {
    std::size_t total = 0;
    for (auto& [sg, lanes] : sgs) {
      total += lanes.size();
      for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        if (lanes[lane] == SIZE_MAX) {
          ++wrong;
          continue;
        }
        const Item& it = items[lanes[lane]];
        // "gpurt_sub_group_size(): the work-items in this sub-group" and "at most the max size".
        wrong += it.size != lanes.size() || it.size > it.max || it.count != sgs.size() || sg >= it.count;
        if (single) wrong += it.size != 1 || it.sg != it.local;  // "each work-item its own sub-group"
        if (warps) wrong += it.sg != it.local / 32 || it.lane != it.local % 32;  // "by the linearised local id"
      }
    }
    wrong += total != group_items;
  }
  CHECK(wrong == 0);
  return l;
}

template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;  // -0.0 == +0.0: the sign of a zero result is not promised
}

template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // "integer sums wrap"
  } else {
    return a + b;
  }
}
template <class T>
T min_of(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) return std::fmin(a, b);  // "NaN ignored, as fmin"
  else return b < a ? b : a;
}
template <class T>
T max_of(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) return std::fmax(a, b);
  else return a < b ? b : a;
}
template <class T>
T lowest() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}
template <class T>
T highest() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}

template <class T> struct Suffix;
template <> struct Suffix<std::int32_t> { static constexpr const char* s = "i32"; static constexpr const char* t = "int32_t"; };
template <> struct Suffix<std::uint32_t> { static constexpr const char* s = "u32"; static constexpr const char* t = "uint32_t"; };
template <> struct Suffix<float> { static constexpr const char* s = "f32"; static constexpr const char* t = "float"; };
template <> struct Suffix<std::int64_t> { static constexpr const char* s = "i64"; static constexpr const char* t = "int64_t"; };
template <> struct Suffix<std::uint64_t> { static constexpr const char* s = "u64"; static constexpr const char* t = "uint64_t"; };
template <> struct Suffix<double> { static constexpr const char* s = "f64"; static constexpr const char* t = "double"; };

// Inputs: small integers (exact float sums in any order), or, with `edges`, a quarter of them the
// type's edge values (INT64_MIN/MAX, 0, -1; NaN, infinities, -0.0 and +0.0).
template <class T>
std::vector<T> inputs(std::size_t n, bool edges) {
  std::vector<T> v(n);
  std::vector<T> edge;
  if constexpr (std::is_floating_point<T>::value) {
    v = test::random_vector<T>(n, T(-1000), T(1000));
    for (auto& x : v) x = std::round(x);
    edge = {std::numeric_limits<T>::quiet_NaN(), -T(0), T(0), std::numeric_limits<T>::infinity(),
            -std::numeric_limits<T>::infinity()};
  } else {
    const long long lo = std::is_signed<T>::value ? -(1 << 20) : 0;
    v = test::random_vector<T>(n, static_cast<T>(lo), static_cast<T>(1 << 20));
    edge = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), static_cast<T>(-1)};
  }
  if (edges) {
    std::uniform_int_distribution<std::size_t> pick(0, edge.size() - 1), coin(0, 3);
    for (auto& x : v)
      if (coin(test::rng()) == 0) x = edge[pick(test::rng())];
  }
  return v;
}

// The 24 results of one work-item at `lane` of `xs` (its sub-group's inputs, in lane order), and
// of the group's (in sub-group, then lane order) at position `at`.
template <class T>
void expect_sub_group(const std::vector<T>& xs, std::size_t lane, std::uint32_t arg, T* e) {
  const std::size_t n = xs.size();
  const T x = xs[lane];
  e[0] = xs[(lane * 7u + arg) % n];
  e[1] = arg <= lane ? xs[lane - arg] : x;         // "a source outside the sub-group: its own value"
  e[2] = arg < n - lane ? xs[lane + arg] : x;
  e[3] = (lane ^ arg) < n ? xs[lane ^ arg] : x;
  e[4] = xs[arg % n];
  T s = T(0), lo = highest<T>(), hi = lowest<T>();
  for (T y : xs) s = add(s, y), lo = min_of(lo, y), hi = max_of(hi, y);
  e[5] = s, e[6] = lo, e[7] = hi;
  T is = T(0), il = highest<T>(), ih = lowest<T>();
  for (std::size_t j = 0; j < lane; ++j) is = add(is, xs[j]), il = min_of(il, xs[j]), ih = max_of(ih, xs[j]);
  e[11] = is, e[12] = il, e[13] = ih;  // "exclusive: lane 0 gets the identity"
  e[8] = add(is, x), e[9] = min_of(il, x), e[10] = max_of(ih, x);
}

template <class T>
void run_type(test::Fixture& f, const BuildOptions& options, bool forced_single) {
  INFO("type " << Suffix<T>::t << (forced_single ? ", built with -DGPURT_SUB_GROUPS_SINGLE_ITEM" : ""));
  BuildOptions o = options;
  o.defines.push_back({"T", Suffix<T>::t});
  o.defines.push_back({"S", Suffix<T>::s});
  Kernel k = f.dev.build({SourceLanguage::portable, test::sub_group_source, "sub_groups.gpurt"}, o).kernel("sg_values");
  const std::size_t limit = std::min<std::size_t>({1024, k.max_group_size(), f.dev.properties().max_group_size});
  // 4 x 3 x 5: a 3D group (60 items, a partial sub-group) linearised as x + sx * (y + sy * z).
  std::vector<Dim3> shapes = {Dim3(1), Dim3(7), Dim3(33), Dim3(100), Dim3(limit), Dim3(10, 7), Dim3(4, 3, 5)};
  const std::uint32_t args[] = {0, 1, 2, 5, 16, 31, 3, 33, 7, 40, 17, 64};
  std::size_t run = 0;
  for (const Dim3& group : shapes) {
    if (group.volume() > limit) continue;
    for (bool edges : {false, true}) {
      const std::uint32_t arg = args[run++ % (sizeof args / sizeof args[0])];
      INFO("group " << to_string(group) << ", arg " << arg << (edges ? ", edge values" : ""));
      const Dim3 groups(3, group.y > 1 ? 2 : 1);
      const std::size_t n = groups.volume() * group.volume();
      std::vector<T> in = inputs<T>(n, edges);
      // With edge values, the first group.volume() floats are NaN (all of group 0 for the 1D shapes):
      // min and max over only NaNs give the identity ("a result over only NaNs is the identity"),
      // sums NaN, at every level.
      if (std::is_floating_point<T>::value && edges)
        for (std::size_t i = 0; i < group.volume(); ++i) in[i] = std::numeric_limits<T>::quiet_NaN();
      auto din = f.dev.alloc<T>(n);
      auto dout = f.dev.alloc<T>(n * 24);
      auto dlayout = f.dev.alloc<std::uint32_t>(n * 7);
      f.q.write(in, din);
      f.q.launch(k, LaunchConfig(groups, group), din, dout, dlayout, arg);
      const std::vector<T> out = f.q.read(dout);
      const std::vector<Item> items = items_of(f.q.read(dlayout));
      if (forced_single)
        for (const Item& it : items) CHECK((it.size == 1 && it.lane == 0 && it.sg == it.local));
      const Layout l = check_layout(f.dev, items, group.volume(), forced_single);
      std::size_t wrong[24] = {};
      for (const auto& [g, sgs] : l) {
        std::vector<T> group_xs;  // in sub-group, then lane order
        std::vector<std::size_t> order;
        for (const auto& [sg, lanes] : sgs)
          for (std::size_t i : lanes) {
            if (i == SIZE_MAX) continue;
            group_xs.push_back(in[i]);
            order.push_back(i);
          }
        for (const auto& [sg, lanes] : sgs) {
          std::vector<T> xs;
          for (std::size_t i : lanes) xs.push_back(i == SIZE_MAX ? T(0) : in[i]);
          for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
            if (lanes[lane] == SIZE_MAX) continue;
            T e[24];
            expect_sub_group(xs, lane, arg, e);
            for (int w = 0; w < 14; ++w) wrong[w] += !same_value(out[lanes[lane] * 24 + w], e[w]);
          }
        }
        for (std::size_t at = 0; at < order.size(); ++at) {
          T e[24];
          expect_sub_group(group_xs, at, 0, e);
          const std::size_t i = order[at];
          for (int w = 5; w < 14; ++w) wrong[w + 9] += !same_value(out[i * 24 + w + 9], e[w]);
          // "gpurt_group_broadcast_*(x, from, scratch): the value of the work-item whose linearised
          // local id is `from`"
          const std::size_t from = arg % group.volume();
          std::size_t src = SIZE_MAX;
          for (std::size_t j : order)
            if (items[j].local == from) src = j;
          wrong[23] += src == SIZE_MAX || !same_value(out[i * 24 + 23], in[src]);
        }
      }
      static const char* names[24] = {
          "shuffle", "shuffle_up", "shuffle_down", "shuffle_xor", "broadcast", "reduce_add", "reduce_min",
          "reduce_max", "scan_inclusive_add", "scan_inclusive_min", "scan_inclusive_max", "scan_exclusive_add",
          "scan_exclusive_min", "scan_exclusive_max", "group_reduce_add", "group_reduce_min", "group_reduce_max",
          "group_scan_inclusive_add", "group_scan_inclusive_min", "group_scan_inclusive_max",
          "group_scan_exclusive_add", "group_scan_exclusive_min", "group_scan_exclusive_max", "group_broadcast"};
      for (int w = 0; w < 24; ++w) {
        INFO(names[w]);
        CHECK(wrong[w] == 0);
      }
    }
  }
}

void run_all_types(test::Fixture& f, const BuildOptions& o, bool forced_single) {
  run_type<std::int32_t>(f, o, forced_single);
  run_type<std::uint32_t>(f, o, forced_single);
  run_type<float>(f, o, forced_single);
  run_type<std::int64_t>(f, o, forced_single);
  run_type<std::uint64_t>(f, o, forced_single);
  if (f.dev.properties().fp64) run_type<double>(f, o, forced_single);
}

}  // namespace

TEST_CASE("kernel-language.md: sub-group shuffles, broadcast, reduce and scans of every type, and the group collectives, match a CPU reference") {
  // kernel-language.md, "Sub-groups": "a shuffle whose source lane lies outside the sub-group
  // gives the caller its own value", "integer sums wrap", "float min and max ignore NaN as fmin and
  // fmax do", "the exclusive scan gives lane 0 the identity"; "Group collectives": "the whole group's
  // reduce, scan (in sub-group, then lane order) and broadcast". Local sizes 1, 7, 33, 100, the
  // largest up to 1024 and 10 x 7, so sub-groups end partial; fresh random inputs, then edge values.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  INFO("device " << f.dev.description() << ", seed " << test::seed());
  run_all_types(f, {}, false);
}

TEST_CASE("kernel-language.md: GPURT_SUB_GROUPS_SINGLE_ITEM makes every work-item its own sub-group, on every device") {
  // kernel-language.md: "built with -DGPURT_SUB_GROUPS_SINGLE_ITEM, every device runs the fallback:
  // each work-item its own sub-group", so the fallback and the group collectives' loops are tested
  // on devices with native sub-groups too.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  BuildOptions o;
  o.flags.push_back("-DGPURT_SUB_GROUPS_SINGLE_ITEM");
  run_all_types(f, o, true);
}

TEST_CASE("kernel-language.md: ballot, any and all over each sub-group") {
  // kernel-language.md: "gpurt_sub_group_ballot(p): a uint64_t whose bit k is set when the work-item
  // at lane k passed a true p"; any and all "return 1 or 0, the same to every work-item".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.dev.build({SourceLanguage::portable, test::sub_group_source, "sub_groups.gpurt"},
                         BuildOptions{{}, {{"T", "uint32_t"}, {"S", "u32"}}})
                 .kernel("sg_votes");
  const std::size_t limit = std::min<std::size_t>({1024, k.max_group_size(), f.dev.properties().max_group_size});
  for (const Dim3& group : {Dim3(1), Dim3(7), Dim3(33), Dim3(100), Dim3(limit), Dim3(10, 7)}) {
    if (group.volume() > limit) continue;
    INFO("group " << to_string(group));
    const Dim3 groups(4, 1);
    const std::size_t n = groups.volume() * group.volume();
    // Group 0: random bits; group 1: all bits set; group 2: none; group 3: only its last work-item.
    std::vector<std::uint32_t> in = test::random_vector<std::uint32_t>(n, 0, 7);
    for (std::size_t i = group.volume(); i < n; ++i) {
      const std::size_t g = i / group.volume(), local = i % group.volume();
      in[i] = g == 1 ? 7u : g == 2 ? 0u : (local + 1 == group.volume() ? 7u : 0u);
    }
    auto din = f.dev.alloc<std::uint32_t>(n);
    auto dout = f.dev.alloc<std::uint64_t>(n * 3);
    auto dlayout = f.dev.alloc<std::uint32_t>(n * 7);
    f.q.write(in, din);
    f.q.launch(k, LaunchConfig(groups, group), din, dout, dlayout);
    const std::vector<std::uint64_t> out = f.q.read(dout);
    const std::vector<Item> items = items_of(f.q.read(dlayout));
    const Layout l = check_layout(f.dev, items, group.volume());
    std::size_t wrong = 0;
    for (const auto& [g, sgs] : l)
      for (const auto& [sg, lanes] : sgs) {
        std::uint64_t ballot = 0;
        bool any = false, all = true;
        for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
          const std::uint32_t p = in[lanes[lane]];
          if ((p & 1u) && lane < 64) ballot |= std::uint64_t(1) << lane;
          any = any || (p & 2u);
          all = all && (p & 4u);
        }
        for (std::size_t i : lanes)
          wrong += out[i * 3] != ballot || out[i * 3 + 1] != (any ? 1u : 0u) || out[i * 3 + 2] != (all ? 1u : 0u);
      }
    CHECK(wrong == 0);
  }
}

TEST_CASE("kernel-language.md: the device says its sub-group sizes and whether they are native") {
  // kernel-language.md: "properties().sub_groups says whether the operations are native,
  // sub_group_sizes the sizes a kernel's full sub-groups may have ({1} where single-item)".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const DeviceProperties& p = f.dev.properties();
  if (!p.sub_groups) {
    CHECK(p.sub_group_sizes == std::vector<std::uint32_t>{1});
    CHECK_FALSE(p.sub_group_shuffle);
  }
  for (std::uint32_t s : p.sub_group_sizes) CHECK((s >= 1 && s <= p.max_group_size));
  // The sizes a kernel reports (gpurt_sub_group_max_size) are among them.
  Kernel k = f.dev.build({SourceLanguage::portable, test::sub_group_source, "sub_groups.gpurt"},
                         BuildOptions{{}, {{"T", "uint32_t"}, {"S", "u32"}}})
                 .kernel("sg_votes");
  const std::size_t group = std::min<std::size_t>(64, k.max_group_size());
  auto din = f.dev.alloc<std::uint32_t>(group);
  auto dout = f.dev.alloc<std::uint64_t>(group * 3);
  auto dlayout = f.dev.alloc<std::uint32_t>(group * 7);
  f.q.write(std::vector<std::uint32_t>(group, 0u), din);
  f.q.launch(k, LaunchConfig(Dim3(1), Dim3(group)), din, dout, dlayout);
  const std::vector<Item> items = items_of(f.q.read(dlayout));
  if (!p.sub_group_sizes.empty())
    CHECK(std::find(p.sub_group_sizes.begin(), p.sub_group_sizes.end(), items[0].max) != p.sub_group_sizes.end());
}

TEST_CASE("kernel-language.md: a sub-group word of double on a device without fp64 fails to build, naming fp64") {
  // kernel-language.md: "the _f64 words need fp64: a kernel using one on a device without it fails
  // to build with a message naming fp64".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has fp64: nothing is missing to name");
  const char* src = "GPURT_KERNEL void k(GPURT_GLOBAL float* o) { o[0] = (float)gpurt_sub_group_reduce_add_f64(1); }\n";
  try {
    f.dev.build({SourceLanguage::portable, src, "no_fp64.gpurt"});
    FAIL("built");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(e.build_log().find("needs_fp64") != std::string::npos);
  }
}

TEST_CASE("kernel-language.md: the single-item switch as a define is refused, naming flags") {
  // kernel-language.md: "Device::build refuses a define of it (or of a GPURT_OPENCL_* name ...)
  // with invalid_argument saying to pass it in flags" - as a define it would reach the user's code
  // and not the prelude, and the kernel would silently keep native sub-groups.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (const char* name : {"GPURT_SUB_GROUPS_SINGLE_ITEM", "GPURT_ATOMICS_COMPARE_AND_SWAP", "GPURT_OPENCL_NVIDIA_PTX"}) {
    INFO(name);
    BuildOptions o;
    o.defines.push_back({name, ""});
    GPURT_REQUIRE_ERROR(f.dev.build({SourceLanguage::portable, test::sub_group_source, "sub_groups.gpurt"}, o),
                        ErrorCategory::invalid_argument, std::string("-D") + name);
  }
  // Other GPURT_ names stay the user's (the library passes GPURT_T), and the flag form builds.
  BuildOptions ok;
  ok.defines = {{"T", "uint32_t"}, {"S", "u32"}, {"GPURT_MY_OWN", "1"}};
  ok.flags.push_back("-DGPURT_SUB_GROUPS_SINGLE_ITEM");
  CHECK(f.dev.build({SourceLanguage::portable, test::sub_group_source, "sub_groups.gpurt"}, ok).kernel("sg_votes").valid());
}
