// The differential check: one pipeline on every device present, compared with the CPU and with
// each other. Runs once (not per device).
#include <cmath>
#include <iostream>

#include "differential.hpp"
#include "gpurt/library.hpp"
#include "harness.hpp"

using namespace gpurt;
using test::DeviceResult;

namespace {

const char* pipeline_source = R"(
GPURT_KERNEL void hash_mix(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  uint32_t x = in[i] ^ 0x9e3779b9u;
  x ^= x << 13; x ^= x >> 17; x ^= x << 5;
#ifdef GPURT_INJECT_BUG
  if (i == n - 1) x += 1u;
#endif
  out[i] = x;
}
GPURT_KERNEL void blend(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* out, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = a[i] * 0.75f + b[i] * 0.25f;
}
)";

std::uint32_t mix_cpu(std::uint32_t v) {
  std::uint32_t x = v ^ 0x9e3779b9u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

template <class T>
std::vector<double> widen(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Runs the integer pipeline (allocate, copy in, launch, copy out) on `dev`.
std::vector<double> run_mix(const Device& dev, const std::vector<std::uint32_t>& in, bool inject_bug) {
  BuildOptions opts;
  if (inject_bug) opts.defines.push_back({"GPURT_INJECT_BUG", "1"});
  Program p = dev.build({SourceLanguage::portable, pipeline_source, "differential.gpurt"}, opts);
  Queue q = dev.create_queue();
  auto din = dev.alloc<std::uint32_t>(in.size()), dout = dev.alloc<std::uint32_t>(in.size());
  q.copy(in, din);
  q.launch(p.kernel("hash_mix"), LaunchConfig::cover(Dim3(in.size()), Dim3(128)), din, dout,
           static_cast<std::uint32_t>(in.size()));
  return widen(q.read(dout));
}

}  // namespace

TEST_CASE("differential: an integer pipeline is bit-exact on every device") {
  const auto devs = devices();
  REQUIRE_FALSE(devs.empty());
  const auto in = test::random_vector<std::uint32_t>(100003, 0, 0xffffffffu);
  std::vector<double> ref;
  for (std::uint32_t v : in) ref.push_back(mix_cpu(v));
  std::vector<DeviceResult> results;
  std::vector<double> scan_ref;
  const auto small = test::random_vector<std::int32_t>(50021, -1000, 1000);
  double run = 0;
  for (std::int32_t v : small) scan_ref.push_back(run += v);
  std::vector<DeviceResult> scans;
  for (const Device& d : devs) {
    results.push_back({d.description(), run_mix(d, in, false)});
    Queue q = d.create_queue();
    auto a = d.alloc<std::int32_t>(small.size()), b = d.alloc<std::int32_t>(small.size());
    q.copy(small, a);
    lib::scan(q, a, b, lib::ScanKind::inclusive);
    scans.push_back({d.description(), widen(q.read(b))});
  }
  const auto c = test::compare_exact(ref, results);
  const auto s = test::compare_exact(scan_ref, scans);
  std::cout << "integer hash pipeline:\n" << c.report << "int32 inclusive scan:\n" << s.report;
  INFO(c.report << s.report);
  CHECK(c.agree);
  CHECK(s.agree);
}

TEST_CASE("differential: floating-point pipelines agree within their bounds") {
  const auto devs = devices();
  const std::size_t n = 65537, m = 97, k = 131, cols = 75;
  const auto a = test::random_vector<float>(n, -1.0f, 1.0f), b = test::random_vector<float>(n, -1.0f, 1.0f);
  const auto ma = test::random_vector<float>(m * k, -1.0f, 1.0f), mb = test::random_vector<float>(k * cols, -1.0f, 1.0f);
  std::vector<double> blend_ref(n), blend_scale(n), mm_ref, mm_scale;
  for (std::size_t i = 0; i < n; ++i) {
    blend_ref[i] = a[i] * 0.75 + b[i] * 0.25;
    blend_scale[i] = std::abs(a[i] * 0.75) + std::abs(b[i] * 0.25) + 1e-30;
  }
  test::matmul_reference(ma, mb, m, cols, k, mm_ref, mm_scale);
  std::vector<DeviceResult> blends, mms;
  for (const Device& d : devs) {
    Program p = d.build({SourceLanguage::portable, pipeline_source, "differential.gpurt"});
    Queue q = d.create_queue();
    auto da = d.alloc<float>(n), db = d.alloc<float>(n), dout = d.alloc<float>(n);
    q.copy(a, da);
    q.copy(b, db);
    q.launch(p.kernel("blend"), LaunchConfig::cover(Dim3(n), Dim3(128)), da, db, dout, static_cast<std::uint32_t>(n));
    blends.push_back({d.description(), widen(q.read(dout))});
    auto x = d.alloc<float>(m * k), y = d.alloc<float>(k * cols), z = d.alloc<float>(m * cols);
    q.copy(ma, x);
    q.copy(mb, y);
    lib::matmul(q, x, y, z, m, cols, k);
    mms.push_back({d.description(), widen(q.read(z))});
  }
  // Stated bounds: an fp32 a*0.75+b*0.25 is within 2 ulp of the exact value (one rounding per
  // operation, or fewer with fma); a k-term fp32 dot product within k * 2^-24 of sum |terms|.
  const auto bl = test::compare_bounded(blend_ref, blend_scale, 2.5 * std::ldexp(1.0, -24), blends);
  const auto mm = test::compare_bounded(mm_ref, mm_scale, static_cast<double>(k) * std::ldexp(1.0, -24), mms);
  std::cout << "blend (bound 2.5 * 2^-24 relative to |a|+|b|):\n" << bl.report
            << "matmul (bound k * 2^-24 relative to sum |a*b|):\n" << mm.report;
  INFO(bl.report << mm.report);
  CHECK(bl.agree);
  CHECK(mm.agree);
}

TEST_CASE("differential: a deliberately wrong kernel variant on one device is caught") {
  const auto devs = devices();
  REQUIRE_FALSE(devs.empty());
  const auto in = test::random_vector<std::uint32_t>(4099, 0, 0xffffffffu);
  std::vector<double> ref;
  for (std::uint32_t v : in) ref.push_back(mix_cpu(v));
  std::vector<DeviceResult> results;
  for (std::size_t i = 0; i < devs.size(); ++i)
    results.push_back({devs[i].description(), run_mix(devs[i], in, i == 0)});  // the bug on the first only
  const auto c = test::compare_exact(ref, results);
  std::cout << "with a wrong variant on " << devs[0].description() << ":\n" << c.report;
  CHECK_FALSE(c.agree);
  CHECK(c.worst.find(devs[0].description()) != std::string::npos);
  CHECK(c.worst.find("element 4098") != std::string::npos);
  CHECK(c.report.find("DIFFERS") != std::string::npos);
}

TEST_CASE("differential: one GPU seen through two backends is recognised as one") {
  // runtime.hpp: "True when `a` and `b` are the same physical device seen through two backends (a
  // CUDA GPU and the NVIDIA OpenCL device for it), by UUID, else PCI bus id; false when neither
  // is known." Checked against what each driver reports on its own, not against the rule.
  const auto devs = devices();
  // Two distinct devices of one backend are never one physical device (the drivers enumerate
  // each device once), and a device is not merged with another kind of device.
  for (std::size_t i = 0; i < devs.size(); ++i)
    for (std::size_t j = 0; j < devs.size(); ++j) {
      if (i == j) continue;
      INFO(devs[i].description() << " / " << devs[j].description());
      if (devs[i].backend() == devs[j].backend()) CHECK_FALSE(same_physical_device(devs[i], devs[j]));
      if (devs[i].properties().type != devs[j].properties().type)
        CHECK_FALSE(same_physical_device(devs[i], devs[j]));
    }
  // Every CUDA GPU is visible through NVIDIA's OpenCL as exactly one device, and the two views
  // agree on what both drivers report independently: the name, the number of multiprocessors,
  // the memory size, and the PCI bus id where both know it.
  bool nvidia_opencl = false;
  for (const Device& b : devs)
    nvidia_opencl |= b.backend() == "opencl" && b.properties().vendor.find("NVIDIA") != std::string::npos;
  bool pair = false;
  for (const Device& a : devs) {
    if (a.backend() != "cuda" || !nvidia_opencl) continue;
    int matches = 0;
    for (const Device& b : devs) {
      if (b.backend() != "opencl" || !same_physical_device(a, b)) continue;
      ++matches;
      pair = true;
      const DeviceProperties &pa = a.properties(), &pb = b.properties();
      std::cout << a.description() << " is " << b.description() << " (pci " << pa.pci_bus_id << " / "
                << pb.pci_bus_id << ", uuid " << pa.uuid << " / " << pb.uuid << ")\n";
      INFO(a.description() << " / " << b.description());
      CHECK(pb.vendor.find("NVIDIA") != std::string::npos);
      CHECK(pa.name == pb.name);
      CHECK(pa.compute_units == pb.compute_units);
      CHECK(pa.global_memory == pb.global_memory);
      if (!pa.pci_bus_id.empty() && !pb.pci_bus_id.empty()) CHECK(pa.pci_bus_id == pb.pci_bus_id);
      if (!pa.uuid.empty() && !pb.uuid.empty()) CHECK(pa.uuid == pb.uuid);
    }
    INFO(a.description() << " matched " << matches << " OpenCL devices");
    CHECK(matches == 1);
  }
  if (!pair) test::mark_skipped("no CUDA device and NVIDIA OpenCL device on this machine to pair");
}
