#!/usr/bin/env python3
"""Start-up benchmark: the wall time of one `predict --model gpu` against `--version`, in fresh JVMs.

    python3 tools/startup_bench.py [--jar scaledl-examples/target/scaledl.jar] [--runs 7]

Prints JSON: the median wall seconds of each command over --runs runs (alternated, after one warm-up run of each
to fill the page cache) and their ratio. Measure with nothing else running.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        sys.exit("startup_bench: %s exited %d" % (" ".join(cmd), r.returncode))
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jar", default=str(ROOT / "scaledl-examples/target/scaledl.jar"))
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    if a.runs < 1:
        sys.exit("startup_bench: --runs must be positive")
    java = ["java", "-jar", a.jar]
    version = java + ["--version"]
    predict = java + ["predict", "--model", "gpu", "--transformer",
                      str(ROOT / "datasets/gpu/llm-public/configs/llama3-8b/config.json"), "--seq", "4096",
                      "--batch", "1", "--device", "H100", "--precision", "bf16"]
    wall(version)
    wall(predict)
    v, p = [], []
    for _ in range(a.runs):
        v.append(wall(version))
        p.append(wall(predict))
    out = {"runs": a.runs, "version_s": round(statistics.median(v), 3), "predict_gpu_s": round(statistics.median(p), 3)}
    out["ratio"] = round(out["predict_gpu_s"] / out["version_s"], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
