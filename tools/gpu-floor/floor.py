#!/usr/bin/env python3
"""How well can the GPU kernel data be predicted at all? Two floors for the held-out-GPU kernel targets.

    floor.py --data ../shared/data [--md RESULTS.md] [--evaluation gpu.json]

1. Shapes, on a GPU that was measured. For every (op, GPU) of NeuSight's kernel tables with at least 500 rows, a
   gradient-boosted model (LightGBM, 500 trees of 31 leaves, learning rate 0.05) is fitted on the log of the raw
   shape dimensions of that GPU alone (conv: batch, Cin, Cout, H; bmm: B, M, N, K; linear: M, N, K; elementwise:
   B, H, n_inputs, op) to the log latency, and scored by 5-fold cross-validation over the GPU's rows (seeded).
   This is what a model that has seen the GPU and 80 % of its shapes reaches on the other 20 %: a GPU held out
   cannot be predicted better than this except by luck. (Layer norm and softmax have about 75 rows per GPU, too few
   for this learner; they are left out.)

2. The device, on the largest kernels. Per GPU, the median roofline efficiency (FP32 peak FLOP/s from the device
   description over measured FLOP/s) of its dense kernels of at least 1e11 FLOPs (NeuSight bmm and linear, DeepBench
   FP32 training GEMMs), which are compute-bound on every GPU here. This one number per GPU is what a data sheet
   would have to predict for an unseen GPU's big matrix multiplications. Scored leave one GPU out: predicted from the
   other GPUs' median, or from a least-squares line of log efficiency on the log ridge point (peak FLOP/s over
   bytes/s), each as the relative error of the time it implies. The two datasets' names for the same chip (T4 / Tesla
   T4, P100 / Tesla P100-PCIE-16GB, V100 / Tesla V100-PCIE-32GB) are listed too: one chip under two software stacks.

3. The device, on whole models (with --evaluation, the output of `scaledl evaluate-gpu --data ROOT --json`): the
   single-GPU runs' MRE as predicted with their GPU held out, and the same after dividing each GPU's predictions by
   that GPU's own median predicted/measured ratio, a correction known only with hindsight. What it removes is the
   share of the error that one number per GPU would explain.

Needs pandas, numpy, scikit-learn and lightgbm (pip install pandas scikit-learn lightgbm). Runs in about a minute
on two cores.
"""
import argparse
import math
import os
import sys

import numpy as np
import pandas as pd

SHAPES = {
    "conv": ["batch", "Cin", "Cout", "H"],
    "bmm": ["B", "M", "N", "K"],
    "linear": ["M", "N", "K"],
    "elem": ["B", "H", "n_inputs"],
}
MIN_ROWS = 500
BIG_FLOPS = 1e11
SAME_CHIP = [("T4", "Tesla T4"), ("P100", "Tesla P100-PCIE-16GB"), ("V100", "Tesla V100-PCIE-32GB")]


def cross_validated_mre(x, y, seed=0):
    import lightgbm as lgb
    from sklearn.model_selection import KFold
    pred = np.zeros(len(y))
    for train, test in KFold(5, shuffle=True, random_state=seed).split(x):
        model = lgb.LGBMRegressor(n_estimators=500, learning_rate=0.05, num_leaves=31, min_child_samples=5,
                                  random_state=seed, verbose=-1)
        pred[test] = model.fit(x[train], y[train]).predict(x[test])
    return np.abs(np.exp(pred - y) - 1)


def shape_floor(kernels):
    rows = []
    for op, cols in SHAPES.items():
        d = pd.read_csv(os.path.join(kernels, op + ".csv"))
        for gpu, g in d.groupby("gpu"):
            if len(g) < MIN_ROWS:
                continue
            x = np.log(g[cols].values.astype(float))
            if op == "elem":
                x = np.column_stack([x, pd.factorize(g["op"])[0]])
            err = cross_validated_mre(x, np.log(g["latency_ms"].values))
            rows.append({"op": op, "gpu": gpu, "n": len(g), "mre": err.mean(), "sum": err.sum()})
    return pd.DataFrame(rows)


def devices(data):
    a = pd.read_csv(os.path.join(data, "neusight", "device_configs.csv"))
    here = os.path.dirname(os.path.abspath(__file__))
    res = os.path.join(here, "..", "..", "scaledl-core", "src", "main", "resources", "org", "scaledl", "io")
    b = pd.read_csv(os.path.join(res, "deepbench_devices.csv"))
    out = {}
    for t in (a, b):
        for _, r in t.iterrows():
            peak = r.get("fp32_peak_GFLOPS")
            if peak is None or (isinstance(peak, float) and math.isnan(peak)):
                peak = r["fp32_peak_matrix_GFLOPS"]
            out[r["gpu"]] = (float(peak) * 1e9, float(r["mem_bw_GBps"]) * 1e9)
    return out


def device_floor(data):
    dev = devices(data)
    eff = {}
    for op in ("bmm", "linear"):
        d = pd.read_csv(os.path.join(data, "neusight", "kernels", op + ".csv"))
        d = d[d["flops"] >= BIG_FLOPS]
        for _, r in d.iterrows():
            eff.setdefault(r["gpu"], []).append(r["flops"] / dev[r["gpu"]][0] / (r["latency_ms"] / 1e3))
    g = pd.read_csv(os.path.join(data, "deepbench", "gemm.csv"))
    g = g[(g["benchmark"] == "train") & (g["precision"] == "fp32")]
    for _, r in g.iterrows():
        flops = 2.0 * r["M"] * r["N"] * r["K"]
        if flops >= BIG_FLOPS and r["gpu"] in dev:
            eff.setdefault(r["gpu"], []).append(flops / dev[r["gpu"]][0] / (r["time_ms"] / 1e3))
    names = sorted(n for n, v in eff.items() if len(v) >= 8)
    e = np.log([np.median(eff[n]) for n in names])
    ridge = np.log([dev[n][0] / dev[n][1] for n in names])
    out = []
    for i, n in enumerate(names):
        keep = np.arange(len(names)) != i
        median = np.median(e[keep])
        slope, intercept = np.polyfit(ridge[keep], e[keep], 1)
        line = min(0.0, intercept + slope * ridge[i])
        out.append({"gpu": n, "kernels": len(eff[n]), "efficiency": math.exp(e[i]),
                    "err_median": abs(math.exp(e[i] - median) - 1), "err_ridge": abs(math.exp(e[i] - line) - 1)})
    return pd.DataFrame(out)


def whole_models(path):
    import json
    with open(path) as f:
        runs = [r for r in json.load(f)["models"]["runs"] if r["parallel"] == "none"]
    logs = {}
    for r in runs:
        logs.setdefault(r["gpu"], []).append(math.log(r["predicted_ms"] / r["measured_ms"]))
    median = {g: float(np.median(v)) for g, v in logs.items()}
    before = np.mean([abs(r["predicted_ms"] / r["measured_ms"] - 1) for r in runs])
    after = np.mean([abs(math.exp(math.log(r["predicted_ms"] / r["measured_ms"]) - median[r["gpu"]]) - 1)
                     for r in runs])
    return ("%d runs: MRE %.1f %%; with each GPU's own median ratio removed (hindsight) %.1f %%. "
            "Median predicted/measured per GPU: %s." % (len(runs), 100 * before, 100 * after,
                                                        ", ".join("%s %.2f" % (g, math.exp(m))
                                                                  for g, m in sorted(median.items()))))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="the data root (../shared/data)")
    p.add_argument("--md", help="also write the tables to this Markdown file")
    p.add_argument("--evaluation", help="evaluate-gpu --json output, for the whole-model figure")
    a = p.parse_args()
    lines = []
    s = shape_floor(os.path.join(a.data, "neusight", "kernels"))
    table = s.pivot(index="gpu", columns="op", values="mre")
    lines.append("## 1. Shapes on a measured GPU: LightGBM on that GPU's own rows, 5-fold MRE\n")
    lines.append("| GPU | " + " | ".join(table.columns) + " | all rows |")
    lines.append("|---|" + "---|" * (len(table.columns) + 1))
    pooled = s.groupby("gpu")[["sum", "n"]].sum()
    for gpu, r in table.iterrows():
        cells = ["" if math.isnan(v) else "%.1f %%" % (100 * v) for v in r.values]
        lines.append("| %s | %s | %.1f %% |" % (gpu, " | ".join(cells), 100 * pooled.loc[gpu, "sum"] / pooled.loc[gpu, "n"]))
    means = s.groupby("op")["mre"].mean()
    lines.append("| mean over GPUs | " + " | ".join("%.1f %%" % (100 * means[c]) for c in table.columns)
                 + " | %.1f %% |" % (100 * (pooled["sum"] / pooled["n"]).mean()))
    d = device_floor(a.data)
    lines.append("\n## 2. The device: median roofline efficiency of dense kernels of >= 1e11 FLOPs, leave one GPU out\n")
    lines.append("| GPU | kernels | efficiency | error, others' median | error, ridge-point line |")
    lines.append("|---|---|---|---|---|")
    for _, r in d.iterrows():
        lines.append("| %s | %d | %.2f | %.1f %% | %.1f %% |" % (r["gpu"], r["kernels"], r["efficiency"],
                                                            100 * r["err_median"], 100 * r["err_ridge"]))
    lines.append("| mean | | | %.1f %% | %.1f %% |" % (100 * d["err_median"].mean(), 100 * d["err_ridge"].mean()))
    by = dict(zip(d["gpu"], d["efficiency"]))
    chips = ["%s %.2f / %s %.2f" % (x, by[x], y, by[y]) for x, y in SAME_CHIP if x in by and y in by]
    lines.append("\nSame chip, two datasets: " + "; ".join(chips) + ".")
    if a.evaluation:
        lines.append("\n## 3. The device, on whole models: single-GPU runs, GPU held out\n")
        lines.append(whole_models(a.evaluation))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write("Written by `python3 tools/gpu-floor/floor.py --data ../shared/data --md tools/gpu-floor/RESULTS.md "
                    "--evaluation gpu.json`, gpu.json from `java -jar scaledl-examples/target/scaledl.jar "
                    "evaluate-gpu --data ../shared/data --json > gpu.json`.\n\n")
            f.write(text)


if __name__ == "__main__":
    main()
