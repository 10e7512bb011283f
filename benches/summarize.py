#!/usr/bin/env python3
"""Print the medians of the last `cargo bench` run as the Markdown tables of BENCHMARKS.md.

    python3 benches/summarize.py [TARGET_DIR]    # default: target (or $CARGO_TARGET_DIR)

Reads criterion's `<target>/criterion/<group>/<bench>/new/estimates.json` (the median point
estimate) and divides each median by the baselines measured in the same run.
"""
import json
import os
import sys
from pathlib import Path

target = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CARGO_TARGET_DIR", "target"))
root = target / "criterion"


def median(group: str, bench: str) -> float | None:
    """The median in nanoseconds, or None when not measured."""
    # criterion turns '/' and other characters of ids into '_' in directory names
    for directory in root.iterdir():
        if directory.name.replace("_", "/") != group.replace("_", "/") and directory.name != group:
            continue
        for sub in directory.iterdir():
            if sub.name == bench or sub.name == bench.replace("/", "_"):
                estimates = sub / "new" / "estimates.json"
                if estimates.is_file():
                    return json.loads(estimates.read_text())["median"]["point_estimate"]
    return None


def show(ns: float | None) -> str:
    if ns is None:
        return "–"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{a / b:.2f}×"


print("### Resolution (medians; ratios to baselines of the same binary)\n")
print("| N | check | check+construct | start+shutdown | construct | match+construct | hashmap+construct "
      "| raw_scan | by_hand_start+stop | check / raw_scan | check / construct "
      "| (check+construct) / construct | start+shutdown / by_hand |")
print("|" + "---:|" * 14)
for n in (10, 100, 1000, 10000):
    group = f"resolution_N={n}"
    m = {b: median(group, b) for b in ("check", "check+construct", "start+shutdown", "construct",
                                        "match+construct", "hashmap+construct", "raw_scan",
                                        "by_hand_start+stop")}
    print(f"| {n:,} | " + " | ".join(show(v) for v in m.values()) + " | "
          + " | ".join([ratio(m["check"], m["raw_scan"]), ratio(m["check"], m["construct"]),
                        ratio(m["check+construct"], m["construct"]),
                        ratio(m["start+shutdown"], m["by_hand_start+stop"])]) + " |")

print("\n### Accessors (median CPU time per call per thread; ratio to the held Arc of the same thread count)\n")
print("| operation | 1 thread | vs held Arc | 2 threads | vs held Arc | 2 threads / 1 thread |")
print("|---|---:|---:|---:|---:|---:|")
for op in ("harness", "held_arc.get", "held_arc.clone().get", "mutex.lock().get", "cache().get", "capability(named).get", "cache()", "capability(named)"):
    one = median("accessors_threads=1", op)
    two = median("accessors_threads=2", op)
    held1 = median("accessors_threads=1", "held_arc.get")
    held2 = median("accessors_threads=2", "held_arc.get")
    print(f"| `{op}` | {show(one)} | {ratio(one, held1)} | {show(two)} | {ratio(two, held2)} | {ratio(two, one)} |")

print("\n### The gate: telemetry and drain (median CPU time per call; ratio to the gate before them)\n")
print("| operation | no subscriber, no recorder | vs before | listened (fmt subscriber + Prometheus) | vs before |")
print("|---|---:|---:|---:|---:|")
before = median("accessors_threads=1", "pre_telemetry_gate.get")
before_listened = median("telemetry_listened", "pre_telemetry_gate.get")
for op, quiet_row, listened_row in (("gate before telemetry and drain", "pre_telemetry_gate.get", "pre_telemetry_gate.get"),
                                    ("gate now (`held_arc.get`)", "held_arc.get", "held_arc.get"),
                                    ("gate now, `telemetry = false`", None, "telemetry_off.get")):
    quiet = median("accessors_threads=1", quiet_row) if quiet_row else None
    listened = median("telemetry_listened", listened_row)
    print(f"| {op} | {show(quiet)} | {ratio(quiet, before)} | {show(listened)} | {ratio(listened, before_listened)} |")

print("\n### Startup as a process\n")
bare = median("startup", "bare")
quick = median("startup", "quickstart")
print("| binary | median | vs bare |")
print("|---|---:|---:|")
print(f"| bare hello world | {show(bare)} | 1.00× |")
print(f"| quickstart (embedded defaults) | {show(quick)} | {ratio(quick, bare)} |")
