#!/usr/bin/env python3
"""Checks that `gpurt bench --json` output has the documented shape and plausible values."""
import json
import math
import sys

doc = json.load(open(sys.argv[1]))
# argv[2], when given: the trials per row the run was asked for (gpurt bench --trials N).
asked_trials = int(sys.argv[2]) if len(sys.argv) > 2 else None


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def check_paired(row, trials, base="raw", where=""):
    """docs/PERFORMANCE.md: "Each side's figure is the median of its trials, with its spread in brackets:
    [lowest..highest trial]. The ratio gpurt / raw is the median of the per-trial ratios (gpurt's trial i
    against raw's trial i ...), with their [min..max]" - recomputed here from the per-trial figures."""
    g, r = row["gpurt_trials"], row[base + "_trials"]
    assert row["trials"] == trials and len(g) == trials and len(r) == trials, (where, row)
    assert all(x > 0 for x in g + r), (where, row)
    ratios = [a / b for a, b in zip(g, r)]
    for key, values in (("gpurt", g), (base, r), ("ratio", ratios)):
        assert math.isclose(row[key], median(values), rel_tol=1e-9), (where, key, row)
        assert math.isclose(row[key + "_min"], min(values), rel_tol=1e-9), (where, key, row)
        assert math.isclose(row[key + "_max"], max(values), rel_tol=1e-9), (where, key, row)
        assert row[key + "_min"] <= row[key] <= row[key + "_max"], (where, key, row)


assert "command" in doc and doc["runs"], "no runs"
for run in doc["runs"]:
    for key in ("gpurt_version", "date", "host", "device", "method", "launch", "launch_scaling", "transfers", "build",
                "kernels", "copy_bandwidth_gbps", "matmul"):
        assert key in run, f"missing {key}"
    for key in ("selector", "name", "backend", "driver", "raw_api"):
        assert run["device"][key], f"device.{key} empty"
    # README / docs: 7 trials per row by default, 3 with --quick, N with --trials N.
    trials = run["method"]["trials"]
    assert trials == (asked_trials or (3 if run["quick"] else 7)), run["method"]
    for key in ("order", "value", "spread", "ratio"):
        assert run["method"][key], f"method.{key} empty"
    for key in ("async_us", "sync_us", "enqueue_four_args_us"):
        check_paired(run["launch"][key], trials, where=key)
    # issue 20's harness: 100,000 empty 1x1 launches on one queue and one wait (10,000 with --quick).
    assert run["launch"]["launches_per_trial"] == (10000 if run["quick"] else 100000), run["launch"]
    # The launch-rate rows: 1, 2, 4, 8 and 16 host threads, each with its own queue and all on one.
    scaling = run["launch_scaling"]
    layouts = [(t["layout"], t["threads"]) for t in scaling["rows"]]
    assert layouts == [(l, n) for l in ("queue_per_thread", "shared_queue") for n in (1, 2, 4, 8, 16)], layouts
    for t in scaling["rows"]:
        assert t["unit"] == "launches/s" and t["launches_per_thread"] * t["threads"] == scaling["launches_per_trial"], t
        check_paired(t, trials, where=f"launch_scaling {t['layout']} {t['threads']}")
    directions = {(t["direction"], t["memory"]) for t in run["transfers"]}
    assert directions == {("host_to_device", "pinned"), ("host_to_device", "pageable"), ("device_to_host", "pinned"),
                          ("device_to_host", "pageable"), ("device_to_device", "device")}, directions
    for t in run["transfers"]:
        assert t["bytes"] >= 4096 and t["gpurt"] > 0 and t["raw"] > 0 and t["unit"] == "GB/s", t
        check_paired(t, trials, where=f"transfer {t['direction']} {t['memory']} {t['bytes']}")
    assert run["build"]["gpurt_cached_path"] == "loaded_from_cache", run["build"]
    assert run["build"]["gpurt_cold_ms"] > 0 and run["build"]["raw_cold_ms"] > 0
    # Allocation (issue 20): 1 MiB and 64 MiB, alone and with a 4-byte write (first use), against raw.
    rows = run["alloc"]["rows"]
    assert [(r["bytes"], r["first_use"]) for r in rows] == \
        [(1 << 20, False), (1 << 20, True), (64 << 20, False), (64 << 20, True)], rows
    for r in rows:
        check_paired(r, trials, where=f"alloc {r['bytes']} first_use={r['first_use']}")
    names = {k["name"] for k in run["kernels"]}
    assert {"copy", "fill", "axpy", "reduce_sum", "scan_inclusive", "transpose", "conv2d_5x5", "histogram_256"} <= names
    for k in run["kernels"]:
        assert k["gbps"] > 0 and k["milliseconds"] > 0, k
    assert run["matmul"]["gflops"] > 0
    # Issue 21 (bench/cpu_rows.hpp): every streaming call against a naive portable kernel of the same
    # operation on every device; on CPU devices scan, transpose, conv2d 5x5 and matmul against an
    # OpenMP loop (or skipped, saying why: a build without OpenMP).
    base = run["kernel_baselines"]
    assert [r["name"] for r in base["naive"]] == ["copy", "fill", "axpy", "binary_add", "reduce_sum",
                                                  "histogram_256"], base["naive"]
    for r in base["naive"]:
        assert r["library_ms"] > 0 and r["naive_ms"] > 0 and r["elements"] > 0 and r["naive_group"] > 0, r
        assert math.isclose(r["library_over_naive"], r["library_ms"] / r["naive_ms"], rel_tol=1e-9), r
    omp = base["openmp"]
    if base["device_type"] != "cpu" or "skipped" in omp:
        assert omp["skipped"] and (base["device_type"] != "cpu" or "OpenMP" in omp["skipped"]), omp
    else:
        assert omp["threads"] >= 1, omp
        assert [r["name"] for r in omp["rows"]] == ["scan_inclusive", "transpose", "conv2d_5x5", "matmul_fp32"], omp
        for r in omp["rows"]:
            assert r["library_ms"] > 0 and r["openmp_ms"] > 0 and r["size"] > 0, r
            assert math.isclose(r["library_over_openmp"], r["library_ms"] / r["openmp_ms"], rel_tol=1e-9), r
    if "interop" in run:  # cuBLAS on gpurt buffers and stream; peer copies (each may be skipped, saying why)
        sgemm, peer = run["interop"]["cublas_sgemm"], run["interop"]["peer_copy"]
        assert sgemm.get("skipped") or (sgemm["gpurt"] > 0 and sgemm["raw"] > 0), sgemm
        if not sgemm.get("skipped"):
            check_paired(sgemm, trials, where="cublas_sgemm")
        assert (isinstance(peer, dict) and peer["skipped"]) or all(p["gpurt"] > 0 and p["raw"] > 0 for p in peer), peer
        for p in peer if isinstance(peer, list) else []:
            check_paired(p, trials, where="peer_copy")
        relay = run["interop"].get("relayed_copy", {"skipped": "absent"})  # copies between backends
        assert (isinstance(relay, dict) and relay["skipped"]) or \
            all(t["gpurt"] > 0 and t["slower_link"] > 0 and t["from"] != t["to"] for t in relay), relay
        for t in relay if isinstance(relay, list) else []:
            check_paired(t, trials, base="slower_link", where="relayed_copy")
    # Recorded chains (issue 20): 10, 100 and 1,000 empty kernels and a 3-kernel step, per kernel, gpurt
    # replay and launches against raw stream launches, and on CUDA a raw CUDA graph.
    graph = run["graph"]
    assert "skipped" not in graph, graph
    chains = [(r["chain"], r["kernels"]) for r in graph["rows"]]
    assert chains == [("empty", 10), ("empty", 100), ("empty", 1000), ("step", 3)], chains
    cuda = run["device"]["backend"] == "cuda"
    for r in graph["rows"]:
        assert r["repeats"] * r["kernels"] <= graph["kernels_per_measurement"] < (r["repeats"] + 1) * r["kernels"], r
        for key in ("gpurt_replay_us", "gpurt_launch_us", "raw_stream_us"):
            low, high = r["spread"][key]
            assert 0 < low <= r[key] <= high, (key, r)
        assert math.isclose(r["replay_to_launch"], r["gpurt_replay_us"] / r["gpurt_launch_us"]), r
        if cuda:  # the replay against a raw CUDA graph of the same chain, target 1.05
            assert r["raw_graph_us"] > 0 and r["versus"] == "raw_graph" and r["target"] == 1.05, r
        else:  # OpenCL has no graphs: against the raw enqueues, target 0.9, saying why
            assert r["raw_graph_us"] is None and r["raw_graph_note"], r
            assert r["versus"] == "raw_stream" and r["target"] == 0.9, r
        low, high = r["ratio_spread"]
        assert 0 < low <= r["ratio"] <= high, r
        # The step is checked: replays compute what launches and the host compute.
        assert r.get("replay_computes_the_chain", r["chain"] == "empty") is True, r
print("bench JSON: shape ok for", [r["device"]["selector"] for r in doc["runs"]])
