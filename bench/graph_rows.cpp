// The graph rows of `gpurt bench` (graph_rows.hpp). Each figure is host wall time per kernel: a
// chain run `repeats` times back to back and one wait, divided by the kernels run; about 100,000
// kernels per figure (10,000 on CPU devices, where PoCL takes ~30 us per kernel on 16 cores, and
// with --quick). Within a trial the four ways run one after another on
// the same device, so drift affects them alike; the figure is the median over trials, with the
// lowest and highest beside it.
#include "graph_rows.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "raw/chain.hpp"

namespace gpurt::bench {

namespace {

const char* chain_source = R"(
GPURT_KERNEL void chain_empty() {}
GPURT_KERNEL void chain_saxpy(GPURT_GLOBAL float* y, GPURT_GLOBAL const float* x, float a, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
GPURT_KERNEL void chain_scale(GPURT_GLOBAL float* y, float s, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] *= s;
}
GPURT_KERNEL void chain_sub(GPURT_GLOBAL float* x, GPURT_GLOBAL const float* y, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) x[i] = y[i] - x[i];
}
)";

using clock_type = std::chrono::steady_clock;

// The median of `v` and its lowest and highest values.
struct Summary {
  double median = 0, low = 0, high = 0;
};
Summary summarize(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

// The chain's kernels, the same as the raw side's (raw/chain.hpp), on gpurt buffers.
struct Kernels {
  Kernel empty, saxpy, scale, sub;
  Buffer<float> x, y;
  const LaunchConfig one{Dim3(1), Dim3(1)};
  const LaunchConfig step{Dim3((chain_step_elements + 255) / 256), Dim3(256)};
  const std::uint32_t n = static_cast<std::uint32_t>(chain_step_elements);

  // Launches (or records) kernel i of `chain` on `to`: a Queue or a Recording.
  template <class To>
  void add(To& to, const Chain& chain, std::size_t i) const {
    if (chain.kind == ChainKind::empty) to.launch(empty, one);
    else if (i % 3 == 0) to.launch(saxpy, step, y, x, 2.0f, n);
    else if (i % 3 == 1) to.launch(scale, step, y, 0.5f, n);
    else to.launch(sub, step, x, y, n);
  }
};

// Microseconds per kernel of `repeats` calls of `run` (each `kernels` kernels) and one finish.
template <class F>
double per_kernel_us(Queue& q, std::size_t repeats, std::size_t kernels, F&& run) {
  const auto t0 = clock_type::now();
  for (std::size_t r = 0; r < repeats; ++r) run();
  q.finish();
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() /
         static_cast<double>(repeats * kernels);
}

nlohmann::json low_high(const Summary& s) { return {s.low, s.high}; }

// Whether `steps` replays of the step chain compute what `steps` launches of it compute (the same
// kernels in the same order: bit for bit) and what the host computes (within rounding), from inputs
// that differ by element: a replay that skipped, reordered or misplaced a command would make its
// figure meaningless.
bool replay_computes_the_chain(Queue& q, const Kernels& k, const Graph& graph, const Chain& chain, int steps) {
  const std::size_t n = chain_step_elements;
  std::vector<float> x0(n), y0(n);
  for (std::size_t i = 0; i < n; ++i) {
    x0[i] = static_cast<float>(i % 7) * 0.25f;
    y0[i] = 1.0f + static_cast<float>(i % 5) * 0.5f;
  }
  auto run = [&](bool replay) {
    q.write(x0, k.x);
    q.write(y0, k.y);
    for (int s = 0; s < steps; ++s) {
      if (replay) {
        q.replay(graph);
      } else {
        for (std::size_t i = 0; i < chain.length; ++i) k.add(q, chain, i);
      }
    }
    std::vector<float> out = q.read(k.x), y = q.read(k.y);
    out.insert(out.end(), y.begin(), y.end());
    return out;
  };
  const std::vector<float> replayed = run(true), launched = run(false);
  std::vector<double> x(x0.begin(), x0.end()), y(y0.begin(), y0.end());
  for (int s = 0; s < steps; ++s)
    for (std::size_t i = 0; i < chain.length; ++i)
      for (std::size_t e = 0; e < n; ++e) {
        if (i % 3 == 0) y[e] = 2.0 * x[e] + y[e];
        else if (i % 3 == 1) y[e] *= 0.5;
        else x[e] = y[e] - x[e];
      }
  for (std::size_t e = 0; e < 2 * n; ++e) {
    const double want = e < n ? x[e] : y[e - n];
    if (replayed[e] != launched[e] || std::abs(replayed[e] - want) > 1e-5 * (1.0 + std::abs(want))) return false;
  }
  return true;
}

}  // namespace

nlohmann::json measure_graph_rows(const Device& device, const Options& options, int trials) {
  const bool cpu = device.properties().type == DeviceType::cpu;
  const std::size_t budget = options.quick || cpu ? 10000 : 100000;  // kernels per figure
  const Chain chains[] = {{ChainKind::empty, 10}, {ChainKind::empty, 100}, {ChainKind::empty, 1000}, {ChainKind::step, 3}};
  std::unique_ptr<RawChains> raw;
  std::string raw_note;
  try {
    raw = open_raw_chains(device);
  } catch (const Error& e) {
    raw_note = e.message();
  }
  nlohmann::json rows = nlohmann::json::array();
  try {
    Queue q = device.create_queue({QueueOptions::Timing::disabled});
    const Program p = device.build({SourceLanguage::portable, chain_source, "bench_chain.gpurt"});
    Kernels k{p.kernel("chain_empty"), p.kernel("chain_saxpy"), p.kernel("chain_scale"), p.kernel("chain_sub"),
              device.alloc<float>(chain_step_elements), device.alloc<float>(chain_step_elements)};
    q.fill(k.x, 1.0f);
    q.fill(k.y, 1.0f);
    for (const Chain& chain : chains) {
      const std::string name = chain.kind == ChainKind::empty ? "empty" : "step";
      if (options.progress) options.progress("graph: chain of " + std::to_string(chain.length) + " " + name + " kernels");
      const std::size_t repeats = std::max<std::size_t>(1, budget / chain.length);
      Recording rec(device, "bench chain of " + std::to_string(chain.length) + " " + name);
      for (std::size_t i = 0; i < chain.length; ++i) k.add(rec, chain, i);
      const Graph graph = rec.finish();
      auto launch_chain = [&] {
        for (std::size_t i = 0; i < chain.length; ++i) k.add(q, chain, i);
      };
      q.replay(graph);  // untimed: the first replay and the first launches
      launch_chain();
      q.finish();
      std::vector<double> replay, launch, stream, cuda_graph, ratio;
      std::string graph_note = raw ? std::string() : raw_note;
      bool graph_failed = false;  // a raw graph that should have run did not: no ratio then
      for (int t = 0; t < trials; ++t) {
        replay.push_back(per_kernel_us(q, repeats, chain.length, [&] { q.replay(graph); }));
        if (raw && graph_note.empty()) {
          try {
            cuda_graph.push_back(raw->graph_us(chain, repeats));
          } catch (const Error& e) {  // OpenCL: no graphs; the replay is compared with the enqueues
            graph_note = e.message();
            graph_failed = e.category() != ErrorCategory::unsupported;
          }
        }
        launch.push_back(per_kernel_us(q, repeats, chain.length, launch_chain));
        if (raw) stream.push_back(raw->stream_us(chain, repeats));
        const std::vector<double>& versus = cuda_graph.empty() ? stream : cuda_graph;
        if (!graph_failed && !versus.empty()) ratio.push_back(replay.back() / versus.back());
      }
      if (graph_failed) ratio.clear();
      const Summary r = summarize(replay), l = summarize(launch), s = summarize(stream), g = summarize(cuda_graph),
                    x = summarize(ratio);
      nlohmann::json row{{"chain", name}, {"kernels", chain.length}, {"repeats", repeats},
                         {"gpurt_replay_us", r.median}, {"gpurt_launch_us", l.median},
                         {"raw_stream_us", raw ? nlohmann::json(s.median) : nlohmann::json()},
                         {"raw_graph_us", cuda_graph.empty() ? nlohmann::json() : nlohmann::json(g.median)},
                         {"replay_to_launch", l.median > 0 ? r.median / l.median : 0.0}};
      // [lowest, highest] of each figure over the trials
      row["spread"] = {{"gpurt_replay_us", low_high(r)}, {"gpurt_launch_us", low_high(l)}};
      if (raw) row["spread"]["raw_stream_us"] = low_high(s);
      if (!cuda_graph.empty()) row["spread"]["raw_graph_us"] = low_high(g);
      if (!ratio.empty()) {
        // The issue's targets: a replay <= 1.05 x a raw CUDA graph; where the API has no graphs,
        // <= 0.9 x the raw enqueues. The ratio is the median of the trials' ratios.
        row["versus"] = cuda_graph.empty() ? "raw_stream" : "raw_graph";
        row["ratio"] = x.median;
        row["ratio_spread"] = {x.low, x.high};
        row["target"] = cuda_graph.empty() ? 0.9 : 1.05;
      }
      if (!graph_note.empty()) row["raw_graph_note"] = graph_note;
      if (chain.kind == ChainKind::step) row["replay_computes_the_chain"] = replay_computes_the_chain(q, k, graph, chain, 10);
      rows.push_back(row);
    }
  } catch (const Error& e) {
    return {{"skipped", e.message()}};
  }
  return {{"kernels_per_measurement", budget}, {"trials", trials}, {"rows", rows}};
}

}  // namespace gpurt::bench
