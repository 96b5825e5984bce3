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


def section_rows(section):
    """The rows of a kernel_baselines section: a list, or an object with "rows" (or "skipped")."""
    return section if isinstance(section, list) else section.get("rows", [])


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
    # the launch harness: 100,000 empty 1x1 launches on one queue and one wait (20,000 on CPU devices,
    # 10,000 with --quick; docs/bench/approaches.md, "Row sizes on CPU devices").
    want = 10000 if run["quick"] else 20000 if run["device"]["type"] == "cpu" else 100000
    assert run["launch"]["launches_per_trial"] == want, run["launch"]
    # The launch-rate rows: 1, 2, 4, 8 and 16 host threads, each with its own queue and all on one.
    scaling = run["launch_scaling"]
    layouts = [(t["layout"], t["threads"]) for t in scaling["rows"]]
    assert layouts == [(l, n) for l in ("queue_per_thread", "shared_queue") for n in (1, 2, 4, 8, 16)], layouts
    for t in scaling["rows"]:
        assert t["unit"] == "launches/s" and t["launches_per_thread"] * t["threads"] == scaling["launches_per_trial"], t
        check_paired(t, trials, where=f"launch_scaling {t['layout']} {t['threads']}")
    # Row sizes (docs/bench/approaches.md, "Row sizes on CPU devices"): on a CPU device the rows sized
    # for GPUs are measured smaller in a full run; --quick is smaller still, on every device.
    cpu = run["device"]["type"] == "cpu"
    assert scaling["launches_per_trial"] == (8000 if run["quick"] else 16000 if cpu else 80000), scaling
    largest = max(t["bytes"] for t in run["transfers"])
    assert largest == (16 << 20 if run["quick"] else 256 << 20 if cpu else 1 << 30), largest
    if "staging_threads" in run:
        for r in run["staging_threads"]["rows"]:
            assert r["bytes"] == (4 << 20 if run["quick"] else 64 << 20 if cpu else 256 << 20), r
    directions = {(t["direction"], t["memory"]) for t in run["transfers"]}
    assert directions == {("host_to_device", "pinned"), ("host_to_device", "pageable"), ("device_to_host", "pinned"),
                          ("device_to_host", "pageable"), ("device_to_device", "device")}, directions
    for t in run["transfers"]:
        assert t["bytes"] >= 4096 and t["gpurt"] > 0 and t["raw"] > 0 and t["unit"] == "GB/s", t
        check_paired(t, trials, where=f"transfer {t['direction']} {t['memory']} {t['bytes']}")
    assert run["build"]["gpurt_cached_path"] == "loaded_from_cache", run["build"]
    assert run["build"]["gpurt_cold_ms"] > 0 and run["build"]["raw_cold_ms"] > 0
    # Allocation: 1 MiB and 64 MiB, alone and with a 4-byte write (first use), against raw.
    rows = run["alloc"]["rows"]
    assert [(r["bytes"], r["first_use"]) for r in rows] == \
        [(1 << 20, False), (1 << 20, True), (64 << 20, False), (64 << 20, True)], rows
    for r in rows:
        check_paired(r, trials, where=f"alloc {r['bytes']} first_use={r['first_use']}")
    names = {k["name"] for k in run["kernels"]}
    assert {"copy", "fill", "axpy", "reduce_sum", "scan_inclusive", "transpose", "conv2d_5x5", "histogram_256"} <= names
    for k in run["kernels"]:
        assert k["gbps"] > 0 and k["milliseconds"] > 0, k
    # each kernel row's target as a fraction of copy bandwidth, and whether it is met.
    targets = {"copy": 0.5, "fill": 0.5, "axpy": 0.5, "binary_add": 0.5, "reduce_sum": 0.5} if cpu else \
        {"copy": 0.9, "fill": 0.9, "axpy": 0.9, "reduce_sum": 0.9, "scan_inclusive": 0.85,
         "histogram_256": 0.8, "conv2d_5x5": 0.85, "transpose": 0.9}
    for k in run["kernels"]:
        assert k["target"] == targets.get(k["name"]), k
        assert k["met"] == (None if k["target"] is None else k["fraction_of_copy"] >= k["target"]), k
        for base, limit in (("naive", 1.0), ("openmp", 2.0)):  # CPU baselines (bench/cpu_rows), when present
            if base + "_ratio" in k and base + "_ms" in k:
                assert math.isclose(k[base + "_ratio"], k["milliseconds"] / k[base + "_ms"], rel_tol=1e-9), k
                assert k[base + "_met"] == (k[base + "_ratio"] <= k[base + "_target"]), k
    # CPU baselines (bench/cpu_rows, "kernel_baselines"), when present: library time over the naive
    # kernel's and the OpenMP loop's, as the renderer reads them.
    for base, section in run.get("kernel_baselines", {}).items():
        if base == "device_type":
            assert section in ("gpu", "cpu", "accelerator", "other"), section
            continue
        rows_b = section_rows(section)
        assert isinstance(section, list) or section.get("skipped") or rows_b, (base, section)
        for r in rows_b:
            assert r["library_ms"] > 0 and r[base + "_ms"] > 0, (base, r)
            spread = r.get("library_over_" + base + "_spread")
            if spread is None:  # the ratio of the two medians (each side's trials in a block)
                assert math.isclose(r["library_over_" + base], r["library_ms"] / r[base + "_ms"], rel_tol=1e-9), (base, r)
            else:  # trials in turn: the median of the per-trial ratios, inside their [min..max]
                assert len(spread) == 2 and 0 < spread[0] <= r["library_over_" + base] <= spread[1], (base, r)
    # matmul rows - every precision x shape x implementation once, each measured against the
    # raw vendor BLAS at the same precision in the same run, or skipped saying why.
    matmul = run["matmul"]
    rows = matmul["rows"]
    shapes = ["square", "tall_skinny", "small"]
    got = sorted((r["precision"], r["shape"], r["implementation"]) for r in rows)
    assert got == sorted((p, s, i) for p in ("fp32", "tf32", "bf16", "fp64") for s in shapes
                         for i in ("portable", "vendor")), got
    square = {r["shape"]: r for r in rows}["square"]
    side = 256 if run["quick"] else 1024 if cpu else 4096
    assert (square["m"], square["n"], square["k"]) == (side, side, side), square
    for r in section_rows(run.get("kernel_baselines", {}).get("openmp", {})):
        if r["name"] == "matmul_fp32":  # the OpenMP matmul baseline (CPU devices only)
            assert r["size"] == (256 if run["quick"] else 2048), r
    bounds = {"fp32": 1e-5, "tf32": 4e-3, "bf16": 1e-3, "fp64": 1e-12}  # largest error, of sum |a*b|
    for r in rows:
        where = f"matmul {r['precision']} {r['shape']} {r['implementation']}"
        assert r["m"] > 0 and r["n"] > 0 and r["k"] > 0, where
        if "skipped" in r:
            assert isinstance(r["skipped"], str) and r["skipped"], where
            continue
        # the portable path runs everywhere (fp64: where the device has it)
        assert r["gpurt"] > 0 and r["reps_per_trial"] >= 1 and 0 <= r["max_error"] <= bounds[r["precision"]], (where, r)
        if "raw_skipped" in r:
            assert isinstance(r["raw_skipped"], str) and r["raw_skipped"] and "ratio" not in r, (where, r)
            assert len(r["gpurt_trials"]) == trials and r["gpurt_min"] <= r["gpurt"] <= r["gpurt_max"], (where, r)
            continue
        check_paired(r, trials, where=where)
        if r["implementation"] == "vendor":
            want = 0.97
        elif r["raw_library"] == "cuBLAS" and r["shape"] == "square":
            want = {"fp32": 0.75, "tf32": 0.5, "bf16": 0.5}.get(r["precision"])
        else:
            want = None
        assert r["target"] == want and r["met"] == (None if want is None else r["ratio"] >= want), (where, r)
    for r in rows:
        if (r["precision"], r["implementation"]) == ("fp32", "portable"):
            assert "skipped" not in r, r  # lib::matmul's portable kernel runs on every device
        if r["precision"] == "fp64" and not matmul["fp64"]:
            assert "skipped" in r, r  # no fp64 matmul on a device without fp64
    if run["device"]["backend"] == "opencl":  # CLBlast has no TF32 or bf16: never vendor, saying why
        for r in rows:
            if r["precision"] in ("tf32", "bf16") and r["implementation"] == "vendor":
                assert "skipped" in r, r
    # The keys of the runs without matmul rows, from the rows.
    fp32 = [r for r in rows if (r["precision"], r["shape"], r["implementation"]) == ("fp32", "square", "portable")][0]
    assert matmul["n"] == fp32["m"] and matmul["gflops"] == fp32["gpurt"] and matmul["gflops"] > 0, matmul
    assert (matmul["vendor_blas_gflops"] is None) == ("raw" not in fp32), matmul
    if "interop" in run:  # cuBLAS on gpurt buffers and stream; peer copies (each may be skipped, saying why)
        sgemm, peer = run["interop"]["cublas_sgemm"], run["interop"]["peer_copy"]
        assert sgemm.get("skipped") or (sgemm["gpurt"] > 0 and sgemm["raw"] > 0), sgemm
        if not sgemm.get("skipped"):
            check_paired(sgemm, trials, where="cublas_sgemm")
        assert (isinstance(peer, dict) and peer["skipped"]) or all(p["gpurt"] > 0 and p["raw"] > 0 for p in peer), peer
        for p in peer if isinstance(peer, list) else []:
            check_paired(p, trials, where="peer_copy")
        if isinstance(peer, list):  # 64 MiB and 1 GiB (256 MiB from a CPU device)
            assert [p["bytes"] for p in peer] == [64 << 20, 256 << 20 if cpu else 1 << 30], peer
        relay = run["interop"].get("relayed_copy", {"skipped": "absent"})  # copies between backends
        assert (isinstance(relay, dict) and relay["skipped"]) or \
            all(t["gpurt"] > 0 and t["slower_link"] > 0 and t["from"] != t["to"] for t in relay), relay
        for t in relay if isinstance(relay, list) else []:
            check_paired(t, trials, base="slower_link", where="relayed_copy")
    # Recorded chains: 10, 100 and 1,000 empty kernels and a 3-kernel step, per kernel, gpurt
    # replay and launches against raw stream launches, and on CUDA a raw CUDA graph.
    graph = run["graph"]
    assert "skipped" not in graph, graph
    assert graph["kernels_per_measurement"] == (10000 if run["quick"] or cpu else 100000), graph
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
