// The dialect's atomics (kernel-language.md, "Atomics"): every integer word (32- and 64-bit, global
// and local memory), the float and double words, and atomic load and store, contended by every
// work-item of large launches onto a few addresses and onto one, against a CPU reference on fresh
// random inputs and edge values; the old values each word returns are checked too.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

// T the element type, U its unsigned twin, LS the load/store suffix, and S the suffix of the
// read-modify-write words (absent for 32-bit integers, whose words are unsuffixed); F and FS the
// float type and its suffix.
const char* atomic_source = R"(
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
/* A word's name with the type's suffix (and, or, xor are operators in C++: no macro takes them). */
#ifdef S
#define W(name) PASTE(name, PASTE(_, S))
#else
#define W(name) name
#endif
#define LOAD PASTE(gpurt_atomic_load_, LS)
#define STORE PASTE(gpurt_atomic_store_, LS)
#define FW(name) PASTE(name, PASTE(_, FS))

/* Each read-modify-write word onto slot i % m, keeping the old values. */
#define RMW_BODY(word) \
  const size_t i = gpurt_global_id(0); \
  if (i < n) olds[i] = word(&slots[i % m], in[i]);
#ifdef T
GPURT_KERNEL void rmw_add(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_add)) }
GPURT_KERNEL void rmw_sub(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_sub)) }
GPURT_KERNEL void rmw_min(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_min)) }
GPURT_KERNEL void rmw_max(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_max)) }
GPURT_KERNEL void rmw_and(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_and)) }
GPURT_KERNEL void rmw_or(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_or)) }
GPURT_KERNEL void rmw_xor(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_xor)) }
GPURT_KERNEL void rmw_xchg(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* slots, GPURT_GLOBAL T* olds, uint32_t n, uint32_t m) { RMW_BODY(W(gpurt_atomic_xchg)) }
/* Each work-item claims one empty (0) entry of `table` by compare-and-swap, probing linearly from a
 * hashed start (starts collide: the hash is no bijection), and records where; then the first
 * `summed` of them add in[i] to counter[0] by a compare-and-swap loop (bounded: on one address such
 * a loop costs the square of its contenders, minutes on a GPU at a million of them). */
GPURT_KERNEL void claim(GPURT_GLOBAL T* table, GPURT_GLOBAL uint32_t* where, GPURT_GLOBAL T* counter,
                        GPURT_GLOBAL const T* in, uint32_t n, uint32_t size, uint32_t summed) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  uint32_t s = (uint32_t)((((uint64_t)i * 0x9E3779B97F4A7C15UL) >> 32) % size);
  while (W(gpurt_atomic_cmpxchg)(&table[s], (T)0, (T)(i + 1)) != (T)0) s = s + 1 == size ? 0 : s + 1;
  where[i] = s;
  if (i >= summed) return;
  T old = LOAD(&counter[0]);
  for (;;) {
    const T seen = W(gpurt_atomic_cmpxchg)(&counter[0], old, (T)((U)old + (U)in[i]));
    if (seen == old) break;
    old = seen;
  }
}
/* Every work-item below n applies each word to one local counter of its group; the group's counters
 * start from init and are written out by the first nine work-items. */
GPURT_KERNEL void local_all(GPURT_GLOBAL const T* in, GPURT_GLOBAL const T* init, GPURT_GLOBAL T* out, uint32_t n) {
  GPURT_LOCAL T acc[9];
  const size_t lid = gpurt_local_id(0), i = gpurt_global_id(0);
  if (lid < 9) acc[lid] = init[lid];
  gpurt_local_barrier();
  if (i < n) {
    const T x = in[i];
    W(gpurt_atomic_add)(&acc[0], x);
    W(gpurt_atomic_sub)(&acc[1], x);
    W(gpurt_atomic_min)(&acc[2], x);
    W(gpurt_atomic_max)(&acc[3], x);
    W(gpurt_atomic_and)(&acc[4], x);
    W(gpurt_atomic_or)(&acc[5], x);
    W(gpurt_atomic_xor)(&acc[6], x);
    W(gpurt_atomic_xchg)(&acc[7], x);
    T old = acc[8];
    for (;;) {
      const T seen = W(gpurt_atomic_cmpxchg)(&acc[8], old, (T)((U)old + (U)1));
      if (seen == old) break;
      old = seen;
    }
  }
  gpurt_local_barrier();
  if (lid < 9) out[gpurt_group_id(0) * 9 + lid] = acc[lid];
}
GPURT_KERNEL void load_store(GPURT_GLOBAL T* src, GPURT_GLOBAL T* dst, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) STORE(&dst[i], LOAD(&src[i]));
}
#endif

#ifdef F
GPURT_KERNEL void float_add(GPURT_GLOBAL const F* in, GPURT_GLOBAL F* slots, GPURT_GLOBAL F* olds, uint32_t n, uint32_t m) { RMW_BODY(FW(gpurt_atomic_add)) }
GPURT_KERNEL void float_min(GPURT_GLOBAL const F* in, GPURT_GLOBAL F* slots, GPURT_GLOBAL F* olds, uint32_t n, uint32_t m) { RMW_BODY(FW(gpurt_atomic_min)) }
GPURT_KERNEL void float_max(GPURT_GLOBAL const F* in, GPURT_GLOBAL F* slots, GPURT_GLOBAL F* olds, uint32_t n, uint32_t m) { RMW_BODY(FW(gpurt_atomic_max)) }
GPURT_KERNEL void float_load_store(GPURT_GLOBAL F* src, GPURT_GLOBAL F* dst, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) PASTE(gpurt_atomic_store_, FS)(&dst[i], PASTE(gpurt_atomic_load_, FS)(&src[i]));
}
#endif
)";

template <class T> struct Names;
template <> struct Names<std::int32_t> { static constexpr const char *t = "int32_t", *u = "uint32_t", *s = "", *ls = "i32"; };
template <> struct Names<std::uint32_t> { static constexpr const char *t = "uint32_t", *u = "uint32_t", *s = "", *ls = "u32"; };
template <> struct Names<std::int64_t> { static constexpr const char *t = "int64_t", *u = "uint64_t", *s = "i64", *ls = "i64"; };
template <> struct Names<std::uint64_t> { static constexpr const char *t = "uint64_t", *u = "uint64_t", *s = "u64", *ls = "u64"; };
template <> struct Names<float> { static constexpr const char *t = "float", *s = "f32"; };
template <> struct Names<double> { static constexpr const char *t = "double", *s = "f64"; };

template <class T>
Program build_for(const Device& dev, const std::string& flag = "") {
  BuildOptions o;
  if (!flag.empty()) o.flags = {flag};
  if constexpr (std::is_floating_point<T>::value) {
    o.defines = {{"F", Names<T>::t}, {"FS", Names<T>::s}};
  } else {
    o.defines = {{"T", Names<T>::t}, {"U", Names<T>::u}, {"LS", Names<T>::ls}};
    if (*Names<T>::s) o.defines.push_back({"S", Names<T>::s});
  }
  return dev.build({SourceLanguage::portable, atomic_source, "atomics.gpurt"}, o);
}

template <class T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // "integer sums wrap"
}
template <class T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}

// Full-range random integers, a quarter of them the edges (the type's min and max, 0, -1).
template <class T>
std::vector<T> random_ints(std::size_t n) {
  std::vector<T> v(n);
  std::uniform_int_distribution<T> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  const T edge[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), static_cast<T>(-1)};
  std::uniform_int_distribution<int> coin(0, 3), pick(0, 3);
  for (auto& x : v) x = coin(test::rng()) == 0 ? edge[pick(test::rng())] : d(test::rng());
  return v;
}

template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;  // -0.0 == +0.0: "which zero a min or max of -0.0 and +0.0 leaves is not promised"
}

// Follows the chain of one slot's read-modify-writes: from `init`, the work-item whose old value is
// the current value moves it to next(current, its input). Every work-item of the slot must be on the
// chain exactly once and the chain must end at `final`: each old value was the value at one moment,
// and no update was lost. Needs values that never repeat along the chain.
template <class T, class Next>
bool chain_holds(const std::vector<T>& in, const std::vector<T>& olds, std::size_t n, std::size_t m,
                 std::size_t slot, T init, T final, Next next) {
  std::unordered_map<T, std::size_t> by_old;
  std::size_t count = 0;
  for (std::size_t i = slot; i < n; i += m, ++count)
    if (!by_old.emplace(olds[i], i).second) return false;  // two work-items saw the same value
  T v = init;
  for (std::size_t k = 0; k < count; ++k) {
    auto it = by_old.find(v);
    if (it == by_old.end()) return false;
    v = next(v, in[it->second]);
    by_old.erase(it);
  }
  return same_value(v, final);
}

// Min and max: a work-item's old value is never its own operand where no other operand and not
// the start holds that value (it can only be there once the work-item wrote it). Counts the
// work-items of `slot` that break this; NaN and zero operands, whose equality is loose, are left out.
template <class T>
std::size_t own_operand_returned(const std::vector<T>& in, const std::vector<T>& olds, std::size_t n, std::size_t m,
                                 std::size_t slot, T start) {
  std::map<T, std::size_t> count;
  for (std::size_t i = slot; i < n; i += m) ++count[in[i]];
  std::size_t wrong = 0;
  for (std::size_t i = slot; i < n; i += m) {
    const T x = in[i];
    if constexpr (std::is_floating_point<T>::value) {
      if (std::isnan(x) || x == T(0)) continue;
    }
    if (count[x] == 1 && !same_value(x, start)) wrong += same_value(olds[i], x);
  }
  return wrong;
}

const char* const rmw_names[] = {"rmw_add", "rmw_sub", "rmw_min", "rmw_max", "rmw_and", "rmw_or", "rmw_xor", "rmw_xchg"};
const char* const float_names[] = {"float_add", "float_min", "float_max"};

struct Shape {
  std::size_t n, m;
};
// Sizes that are not multiples of the group size (0, 1, primes), onto one and a few addresses, up
// to 2^18 work-items onto five addresses and 2^20 onto one.
const Shape shapes[] = {{0, 1}, {1, 5}, {7, 5}, {1021, 1}, {4099, 5}, {65537, 3}, {1u << 18, 5}, {1u << 20, 1}};

LaunchConfig cover(std::size_t n, std::size_t group) { return LaunchConfig::cover(Dim3(std::max<std::size_t>(n, 1)), Dim3(group)); }

// One read-modify-write word onto `m` slots: returns the olds and leaves the slots in `slots`.
template <class T>
std::vector<T> run_rmw(test::Fixture& f, Kernel& k, const std::vector<T>& in, std::vector<T>& slots, std::size_t m) {
  const std::size_t n = in.size();
  auto din = f.dev.alloc<T>(std::max<std::size_t>(n, 1));
  auto dslots = f.dev.alloc<T>(m);
  auto dolds = f.dev.alloc<T>(std::max<std::size_t>(n, 1));
  if (n) f.q.write(in, din);
  f.q.write(slots, dslots);
  f.q.launch(k, cover(n, 256), din, dslots, dolds, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(m));
  slots = f.q.read(dslots);
  std::vector<T> olds = f.q.read(dolds);
  olds.resize(n);
  return olds;
}

template <class T>
void check_integer_words(test::Fixture& f) {
  INFO("type " << Names<T>::t << ", seed " << test::seed());
  Program p = build_for<T>(f.dev);
  constexpr unsigned bits = sizeof(T) * 8;
  for (const Shape& sh : shapes) {
    const std::size_t n = sh.n, m = sh.m;
    INFO(n << " work-items onto " << m << " address(es)");
    std::uniform_int_distribution<int> small(1, 1000), bit(0, bits - 1);
    {
      // "add, sub: integer sums wrap (modulo 2^32 or 2^64, signed types too)"; "each word returns the
      // value it replaced". Inputs 1..1000 from just below the largest value: the sums wrap, and the
      // values along each slot's chain never repeat, so the olds are checked one by one.
      std::vector<T> in(n);
      for (auto& x : in) x = static_cast<T>(small(test::rng()));
      for (bool sub : {false, true}) {
        INFO((sub ? "gpurt_atomic_sub" : "gpurt_atomic_add"));
        const std::uint32_t op = sub ? 1 : 0;
        Kernel k = p.kernel(rmw_names[op]);
        const T start = sub ? static_cast<T>(std::numeric_limits<T>::min() + 12345) : static_cast<T>(std::numeric_limits<T>::max() - 12345);
        std::vector<T> slots(m, start);
        const std::vector<T> olds = run_rmw(f, k, in, slots, m);
        std::size_t wrong = 0;
        for (std::size_t s = 0; s < m; ++s) {
          T e = start;
          for (std::size_t i = s; i < n; i += m) e = sub ? wrap_sub(e, in[i]) : wrap_add(e, in[i]);
          wrong += slots[s] != e;
          wrong += !chain_holds(in, olds, n, m, s, start, slots[s], [sub](T v, T x) { return sub ? wrap_sub(v, x) : wrap_add(v, x); });
        }
        CHECK(wrong == 0);
      }
      // Full-range inputs with the edges: the final sums only.
      const std::vector<T> wide = random_ints<T>(n);
      for (bool sub : {false, true}) {
        INFO((sub ? "gpurt_atomic_sub" : "gpurt_atomic_add") << ", full-range inputs");
        const std::uint32_t op = sub ? 1 : 0;
        Kernel k = p.kernel(rmw_names[op]);
        std::vector<T> slots = random_ints<T>(m);
        const std::vector<T> start = slots;
        run_rmw(f, k, wide, slots, m);
        std::size_t wrong = 0;
        for (std::size_t s = 0; s < m; ++s) {
          T e = start[s];
          for (std::size_t i = s; i < n; i += m) e = sub ? wrap_sub(e, wide[i]) : wrap_add(e, wide[i]);
          wrong += slots[s] != e;
        }
        CHECK(wrong == 0);
      }
    }
    {
      // "min, max": of the value and the operand, signed or unsigned by the type, on edge values;
      // each old value is the slot's start or one of its operands, and no smaller (min) or larger
      // (max) than the final value, and never the work-item's own operand unless that value was
      // there already.
      const std::vector<T> in = random_ints<T>(n);
      for (bool is_max : {false, true}) {
        INFO((is_max ? "gpurt_atomic_max" : "gpurt_atomic_min"));
        const std::uint32_t op = is_max ? 3 : 2;
        Kernel k = p.kernel(rmw_names[op]);
        std::vector<T> slots = random_ints<T>(m);
        const std::vector<T> start = slots;
        const std::vector<T> olds = run_rmw(f, k, in, slots, m);
        std::size_t wrong = 0;
        for (std::size_t s = 0; s < m; ++s) {
          T e = start[s];
          std::vector<T> seen{start[s]};
          for (std::size_t i = s; i < n; i += m) e = is_max ? std::max(e, in[i]) : std::min(e, in[i]), seen.push_back(in[i]);
          wrong += slots[s] != e;
          std::sort(seen.begin(), seen.end());
          for (std::size_t i = s; i < n; i += m)
            wrong += !std::binary_search(seen.begin(), seen.end(), olds[i]) || (is_max ? olds[i] > e : olds[i] < e);
          wrong += own_operand_returned(in, olds, n, m, s, start[s]);
        }
        CHECK(wrong == 0);
      }
    }
    {
      // "and, or, xor": and clears one random bit per operand, or sets one, xor flips random bits.
      // An old value of and holds the final value's bits and only bits of the start; of or the
      // start's bits and only bits of the final value.
      std::vector<T> in_and(n), in_or(n);
      for (std::size_t i = 0; i < n; ++i) {
        const T one = static_cast<T>(std::make_unsigned_t<T>(1) << bit(test::rng()));
        in_and[i] = static_cast<T>(~one), in_or[i] = one;
      }
      const std::vector<T> in_xor = random_ints<T>(n);
      for (const char* word : {"and", "or", "xor"}) {
        INFO("gpurt_atomic_" << word);
        const std::string name = word;
        const std::vector<T>& in = name == "and" ? in_and : name == "or" ? in_or : in_xor;
        const std::uint32_t op = name == "and" ? 4 : name == "or" ? 5 : 6;
        Kernel k = p.kernel(rmw_names[op]);
        std::vector<T> slots = random_ints<T>(m);
        const std::vector<T> start = slots;
        const std::vector<T> olds = run_rmw(f, k, in, slots, m);
        std::size_t wrong = 0;
        for (std::size_t s = 0; s < m; ++s) {
          T e = start[s];
          for (std::size_t i = s; i < n; i += m)
            e = static_cast<T>(name == "and" ? (e & in[i]) : name == "or" ? (e | in[i]) : (e ^ in[i]));
          wrong += slots[s] != e;
          for (std::size_t i = s; i < n; i += m) {
            if (name == "and") wrong += (olds[i] & e) != e || (olds[i] | start[s]) != start[s];
            if (name == "or") wrong += (olds[i] | e) != e || (olds[i] & start[s]) != start[s];
          }
        }
        CHECK(wrong == 0);
      }
    }
    {
      // "xchg": every value written is returned exactly once, but the last, which stays: the olds and
      // the final values are the starts and the operands, as multisets.
      INFO("gpurt_atomic_xchg");
      const std::vector<T> in = random_ints<T>(n);
      const std::uint32_t op = 7;
      Kernel k = p.kernel(rmw_names[op]);
      std::vector<T> slots = random_ints<T>(m);
      const std::vector<T> start = slots;
      const std::vector<T> olds = run_rmw(f, k, in, slots, m);
      std::size_t wrong = 0;
      for (std::size_t s = 0; s < m; ++s) {
        std::vector<T> put{start[s]}, got{slots[s]};
        for (std::size_t i = s; i < n; i += m) put.push_back(in[i]), got.push_back(olds[i]);
        std::sort(put.begin(), put.end());
        std::sort(got.begin(), got.end());
        wrong += put != got;
      }
      CHECK(wrong == 0);
    }
    {
      // "cmpxchg(p, cmp, v): stores v where *p == cmp, returns the old value either way": every
      // work-item claims one empty entry of a table twice its count, each entry claimed by at most
      // one, and a compare-and-swap loop sums operands into one counter (it only ends if a failed
      // cmpxchg returns the current value).
      INFO("gpurt_atomic_cmpxchg");
      Kernel k = p.kernel("claim");
      const std::size_t size = std::max<std::size_t>(2 * n, 1);
      const std::vector<T> in = random_ints<T>(n);
      auto table = f.dev.alloc<T>(size);
      auto where = f.dev.alloc<std::uint32_t>(std::max<std::size_t>(n, 1));
      auto counter = f.dev.alloc<T>(1);
      auto din = f.dev.alloc<T>(std::max<std::size_t>(n, 1));
      const T start = random_ints<T>(1)[0];
      f.q.fill(table, T(0));
      f.q.write(std::vector<T>{start}, counter);
      if (n) f.q.write(in, din);
      // The compare-and-swap sum over the first 4096 work-items: every one of them contends.
      const std::size_t summed = std::min<std::size_t>(n, 4096);
      f.q.launch(k, cover(n, 256), table, where, counter, din, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(size),
                 static_cast<std::uint32_t>(summed));
      const std::vector<T> t = f.q.read(table);
      const std::vector<std::uint32_t> w = f.q.read(where);
      std::size_t wrong = 0, filled = 0;
      for (T x : t) filled += x != T(0);
      wrong += filled != n;
      for (std::size_t i = 0; i < n; ++i) wrong += w[i] >= size || t[w[i]] != static_cast<T>(i + 1);
      T e = start;
      for (std::size_t i = 0; i < summed; ++i) e = wrap_add(e, in[i]);
      // The test's own power: with 1021 work-items or more, some starts collide, so some
      // cmpxchg fail and must leave the entry to its owner.
      std::vector<std::uint32_t> starts(n);
      for (std::size_t i = 0; i < n; ++i)
        starts[i] = static_cast<std::uint32_t>(((static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) >> 32) % size);
      std::sort(starts.begin(), starts.end());
      if (n >= 1021) CHECK(std::unique(starts.begin(), starts.end()) != starts.end());
      CHECK(wrong == 0);
      CHECK(f.q.read(counter)[0] == e);
    }
    {
      // "gpurt_atomic_load_T, gpurt_atomic_store_T": the value, bit for bit.
      INFO("gpurt_atomic_load / store");
      Kernel k = p.kernel("load_store");
      const std::vector<T> in = random_ints<T>(std::max<std::size_t>(n, 1));
      auto src = f.dev.alloc<T>(in.size());
      auto dst = f.dev.alloc<T>(in.size());
      f.q.write(in, src);
      f.q.fill(dst, T(0));
      f.q.launch(k, cover(n, 256), src, dst, static_cast<std::uint32_t>(n));
      std::vector<T> out = f.q.read(dst);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < in.size(); ++i) wrong += out[i] != (i < n ? in[i] : T(0));
      CHECK(wrong == 0);
    }
  }
}

// "on local memory too": each group applies every word to its own local counters, which its first
// work-items write out.
template <class T>
void check_local_words(test::Fixture& f) {
  INFO("type " << Names<T>::t << ", seed " << test::seed());
  Kernel k = build_for<T>(f.dev).kernel("local_all");
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1021), std::size_t(4099), std::size_t(65537)}) {
    for (std::size_t group : {std::size_t(64), std::size_t(256)}) {
      INFO(n << " work-items in groups of " << group);
      const LaunchConfig cfg = cover(n, group);
      const std::size_t groups = cfg.groups.x;
      const std::vector<T> in = random_ints<T>(n);
      const std::vector<T> init = random_ints<T>(9);
      auto din = f.dev.alloc<T>(n);
      auto dinit = f.dev.alloc<T>(9);
      auto dout = f.dev.alloc<T>(groups * 9);
      f.q.write(in, din);
      f.q.write(init, dinit);
      f.q.launch(k, cfg, din, dinit, dout, static_cast<std::uint32_t>(n));
      const std::vector<T> out = f.q.read(dout);
      std::size_t wrong[9] = {};
      for (std::size_t g = 0; g < groups; ++g) {
        T e[9];
        std::copy(init.begin(), init.end(), e);
        bool xchg_ok = false;
        const T* r = &out[g * 9];
        for (std::size_t i = g * group; i < std::min(n, (g + 1) * group); ++i) {
          const T x = in[i];
          e[0] = wrap_add(e[0], x), e[1] = wrap_sub(e[1], x), e[2] = std::min(e[2], x), e[3] = std::max(e[3], x);
          e[4] = static_cast<T>(e[4] & x), e[5] = static_cast<T>(e[5] | x), e[6] = static_cast<T>(e[6] ^ x);
          e[8] = wrap_add(e[8], T(1));
          xchg_ok = xchg_ok || r[7] == x;  // the last written: one of the group's operands
        }
        for (int w = 0; w < 9; ++w)
          if (w != 7) wrong[w] += r[w] != e[w];
        wrong[7] += !xchg_ok;
      }
      static const char* names[9] = {"add", "sub", "min", "max", "and", "or", "xor", "xchg", "cmpxchg"};
      for (int w = 0; w < 9; ++w) {
        INFO("gpurt_atomic_" << names[w] << " on local memory");
        CHECK(wrong[w] == 0);
      }
    }
  }
}

// Float operands: NaN, infinities and both zeros a quarter of the time, else `lo`..`hi` rounded to
// halves (exact sums in any order).
template <class T>
std::vector<T> random_floats(std::size_t n, bool edges, T lo, T hi) {
  std::vector<T> v = test::random_vector<T>(n, lo, hi);
  for (auto& x : v) x = std::round(x * 2) / 2;
  if (edges) {
    const T edge[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(), T(0), -T(0)};
    std::uniform_int_distribution<int> coin(0, 3), pick(0, 4);
    for (auto& x : v)
      if (coin(test::rng()) == 0) x = edge[pick(test::rng())];
  }
  return v;
}

// `flag`: a build flag (-DGPURT_ATOMICS_COMPARE_AND_SWAP: the fallback loops forced, whose
// cost grows with the square of the work-items on one address: shapes up to 65537 work-items).
template <class T>
void check_float_words(test::Fixture& f, const std::string& flag = "") {
  INFO("type " << Names<T>::t << ", seed " << test::seed() << (flag.empty() ? "" : ", flag ") << flag);
  Program p = build_for<T>(f.dev, flag);
  for (const Shape& sh : shapes) {
    const std::size_t n = sh.n, m = sh.m;
    if (!flag.empty() && n > 65537) continue;
    INFO(n << " work-items onto " << m << " address(es)");
    {
      // "float and double add": positive halves from 0.5 to 2 (exact, and increasing along each
      // slot's chain, so each old value is checked); the f32 word is gpurt_atomic_add_float.
      INFO("gpurt_atomic_add_" << Names<T>::s);
      std::vector<T> in = random_floats<T>(n, false, T(0.5), T(2));
      const std::uint32_t op = 0;
      Kernel k = p.kernel(float_names[op]);
      std::vector<T> slots = random_floats<T>(m, false, T(-100), T(100));
      const std::vector<T> start = slots;
      const std::vector<T> olds = run_rmw(f, k, in, slots, m);
      std::size_t wrong = 0;
      for (std::size_t s = 0; s < m; ++s) {
        T e = start[s];
        for (std::size_t i = s; i < n; i += m) e += in[i];
        wrong += slots[s] != e;
        wrong += !chain_holds(in, olds, n, m, s, start[s], slots[s], [](T v, T x) { return v + x; });
      }
      CHECK(wrong == 0);
    }
    for (bool is_max : {false, true}) {
      // "min and max are fmin and fmax: a NaN operand leaves the value unchanged, a NaN value is
      // replaced by the operand", on infinities and both zeros; each old value is the start or an
      // operand, and never the work-item's own operand unless that value was there already.
      INFO("gpurt_atomic_" << (is_max ? "max_" : "min_") << Names<T>::s);
      const std::vector<T> in = random_floats<T>(n, true, T(-1000), T(1000));
      const std::uint32_t op = is_max ? 2 : 1;
      Kernel k = p.kernel(float_names[op]);
      std::vector<T> slots = random_floats<T>(m, true, T(-1000), T(1000));
      const std::vector<T> start = slots;
      const std::vector<T> olds = run_rmw(f, k, in, slots, m);
      std::size_t wrong = 0;
      for (std::size_t s = 0; s < m; ++s) {
        T e = start[s];
        for (std::size_t i = s; i < n; i += m) e = is_max ? std::fmax(e, in[i]) : std::fmin(e, in[i]);
        wrong += !same_value(slots[s], e);
        wrong += own_operand_returned(in, olds, n, m, s, start[s]);
        for (std::size_t i = s; i < n && n <= 4099; i += m) {
          bool found = same_value(olds[i], start[s]);
          for (std::size_t j = s; j < n && !found; j += m) found = same_value(olds[i], in[j]);
          wrong += !found;
        }
      }
      CHECK(wrong == 0);
    }
  }
  // All-NaN operands leave a number as it is, and a NaN start stays NaN; a number replaces a NaN.
  for (bool is_max : {false, true}) {
    INFO("NaN operands, gpurt_atomic_" << (is_max ? "max_" : "min_") << Names<T>::s);
    const std::uint32_t op = is_max ? 2 : 1;
    Kernel k = p.kernel(float_names[op]);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> slots = {T(5), nan, nan};
    std::vector<T> in(3000, nan);
    for (std::size_t i = 2; i < in.size(); i += 3) in[i] = T(i % 7) - 3;  // slot 2: numbers
    run_rmw(f, k, in, slots, 3);
    CHECK(slots[0] == T(5));
    CHECK(std::isnan(slots[1]));
    CHECK(slots[2] == (is_max ? T(3) : T(-3)));
  }
  {
    // Load and store keep the value bit for bit, NaN and -0.0 included.
    INFO("gpurt_atomic_load / store_" << Names<T>::s);
    Kernel k = p.kernel("float_load_store");
    const std::size_t n = 4099;
    const std::vector<T> in = random_floats<T>(n, true, T(-1e6), T(1e6));
    auto src = f.dev.alloc<T>(n);
    auto dst = f.dev.alloc<T>(n);
    f.q.write(in, src);
    f.q.fill(dst, T(7));
    f.q.launch(k, cover(n, 64), src, dst, static_cast<std::uint32_t>(n));
    const std::vector<T> out = f.q.read(dst);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += std::memcmp(&out[i], &in[i], sizeof(T)) != 0;
    CHECK(wrong == 0);
  }
}

#define GPURT_NEEDS_INT64_ATOMICS(f)                                                                   \
  do {                                                                                                 \
    if (!(f).dev.properties().int64_atomics)                                                           \
      GPURT_SKIP((f).dev.description() + " has no 64-bit atomics (properties().int64_atomics is false)"); \
  } while (0)

}  // namespace

TEST_CASE("kernel-language.md: 32-bit integer atomics, every word, contended, match a CPU reference") {
  // kernel-language.md, "Atomics": gpurt_atomic_add/sub/min/max/and/or/xor/xchg/cmpxchg on int32_t
  // and uint32_t "return the value they replaced"; "integer sums wrap"; load and store.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_integer_words<std::int32_t>(f);
  check_integer_words<std::uint32_t>(f);
}

TEST_CASE("kernel-language.md: 64-bit integer atomics, every word, contended, match a CPU reference") {
  // kernel-language.md, "Atomics": gpurt_atomic_{add,sub,min,max,and,or,xor,xchg}_{i64,u64},
  // gpurt_atomic_cmpxchg_{i64,u64}, gpurt_atomic_load/store_{i64,u64}.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  GPURT_NEEDS_INT64_ATOMICS(f);
  check_integer_words<std::int64_t>(f);
  check_integer_words<std::uint64_t>(f);
}

TEST_CASE("kernel-language.md: integer atomics on local memory, 32- and 64-bit") {
  // kernel-language.md, "Atomics": "the integer words work on global and local memory".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_local_words<std::int32_t>(f);
  check_local_words<std::uint32_t>(f);
  if (!f.dev.properties().int64_atomics) GPURT_SKIP(f.dev.description() + " has no 64-bit atomics: 32-bit words only");
  check_local_words<std::int64_t>(f);
  check_local_words<std::uint64_t>(f);
}

TEST_CASE("kernel-language.md: float atomic add, min and max, and load and store, match a CPU reference") {
  // kernel-language.md, "Atomics": gpurt_atomic_{add,min,max}_f32 on global memory; min and max
  // as fmin and fmax (NaN operands ignored).
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_float_words<float>(f);
}

TEST_CASE("kernel-language.md: double atomic add, min and max, and load and store, match a CPU reference") {
  // kernel-language.md, "Atomics": `gpurt_atomic_add_f64` "needs fp64 and 64-bit atomics" (on
  // OpenCL; native on CUDA from sm_60), min/max "(`_f64` needs fp64 and 64-bit atomics)".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  GPURT_NEEDS_INT64_ATOMICS(f);
  check_float_words<double>(f);
}

TEST_CASE("kernel-language.md: GPURT_HAS_INT64_ATOMICS is defined exactly where properties().int64_atomics says") {
  // kernel-language.md: `GPURT_HAS_INT64_ATOMICS` is "defined where the 64-bit integer words ...
  // work"; "Devices without 64-bit atomics ... say so: properties().int64_atomics is false ... and
  // GPURT_HAS_INT64_ATOMICS is not defined".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src =
      "GPURT_KERNEL void has_int64_atomics(GPURT_GLOBAL uint32_t* o) {\n"
      "#ifdef GPURT_HAS_INT64_ATOMICS\n  o[0] = 1u;\n#else\n  o[0] = 0u;\n#endif\n}\n";
  Kernel k = f.dev.build({SourceLanguage::portable, src, "has_int64_atomics.gpurt"}).kernel("has_int64_atomics");
  auto out = f.dev.alloc<std::uint32_t>(1);
  f.q.fill(out, 7u);
  f.q.launch(k, LaunchConfig(Dim3(1), Dim3(1)), out);
  CHECK(f.q.read(out)[0] == (f.dev.properties().int64_atomics ? 1u : 0u));
}

TEST_CASE("kernel-language.md: a 64-bit atomic on a device without them fails to build, naming int64 atomics") {
  // kernel-language.md, "Atomics": "A kernel using an `_i64` or `_u64` atomic word there ... fails
  // to build, the message naming `..._needs_int64_atomics_which_this_device_lacks`".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (f.dev.properties().int64_atomics) GPURT_SKIP(f.dev.description() + " has 64-bit atomics: nothing is missing to name");
  const char* src = "GPURT_KERNEL void k(GPURT_GLOBAL uint64_t* o) { gpurt_atomic_add_u64(&o[0], (uint64_t)1); }\n";
  try {
    f.dev.build({SourceLanguage::portable, src, "no_int64_atomics.gpurt"});
    FAIL("built");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(e.build_log().find("needs_int64_atomics") != std::string::npos);
  }
}

TEST_CASE("kernel-language.md: float and double add forced to their compare-and-swap loops match the same reference") {
  // kernel-language.md, "Atomics": float and double add are "native where the hardware has it, a
  // compare-and-swap loop otherwise"; -DGPURT_ATOMICS_COMPARE_AND_SWAP takes the loop everywhere,
  // so the fallback is tested on the devices whose add is native (CUDA, NVIDIA's OpenCL) too: every
  // old value on each address's chain, NaN and infinities in min and max, both zeros.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_float_words<float>(f, "-DGPURT_ATOMICS_COMPARE_AND_SWAP");
  if (!f.dev.properties().fp64 || !f.dev.properties().int64_atomics)
    GPURT_SKIP(f.dev.description() + " has no fp64 or no 64-bit atomics: float only");
  check_float_words<double>(f, "-DGPURT_ATOMICS_COMPARE_AND_SWAP");
}
