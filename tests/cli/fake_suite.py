#!/usr/bin/env python3
"""A stand-in for gpurt_conformance with known outcomes, for `gpurt conformance --suite`: three cases
(one passes, one fails, one skips) on one available device whose vendor and platform differ from its
name, and one unavailable backend. Speaks the same protocol: --gpurt-list-devices, Catch2's case
listing, one case per run with GPURT_TEST_DEVICE, exit 77 for a skip."""
import os
import sys

CASES = ["fake passing case", "fake failing case", "fake skipped case"]
args = sys.argv[1:]
if args == ["--gpurt-list-devices"]:
    print("cuda\tcuda\tunavailable\tno CUDA in this fake")
    print("opencl:0\topencl\tavailable\tFake Device X1\tFakeVendor Inc\tFake Platform\tFakeCL 9.9 Special")
    sys.exit(0)
if args and args[0] in ("--list-test-names-only", "--list-tests"):
    print("\n".join(CASES))
    sys.exit(0)
device = os.environ.get("GPURT_TEST_DEVICE", "")
case = args[0].replace("\\", "") if args else ""
if device == "cuda" or case == "fake skipped case":
    print(f"SKIPPED: fake skip on {device}")
    sys.exit(77)
if case == "fake failing case":
    print(f"fake failure on {device}: expected 1, got 2")
    sys.exit(1)
sys.exit(0 if case == "fake passing case" else 3)
