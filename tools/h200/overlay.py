"""Writes a GPU data root that is ``datasets/gpu`` plus the H200 measurements of ``datasets/h200``, in the layouts
``scaledl evaluate-gpu`` reads, so the H200 can be scored as a GPU the predictor never saw:

    python3 tools/h200/overlay.py /tmp/gpu-h200
    java -jar scaledl-examples/target/scaledl.jar evaluate-gpu --data /tmp/gpu-h200 --holdout-gpu "NVIDIA H200"

Rows added (each with gpu ``NVIDIA H200``): ``neusight/kernels/{linear,bmm}.csv`` (FP32 and BF16, a ``precision``
column appended: empty for FP32, as the reader defaults), ``deepbench/gemm.csv`` (FP32 and tensor-core FP16
training GEMMs) and ``neusight/models/e2e.csv`` (whole models: the mean of the two campaigns, ``e2e.csv`` and
``e2e_repeat.csv``; no node trace of their own: the H100's traces of the same configurations give the layers). Stdlib only; refuses to write into an existing folder.
"""
import csv
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GPU = "NVIDIA H200"


def key(row):
    return row["model"], row["phase"], row["seq_len"], row["batch"]


def main(argv):
    if len(argv) != 1:
        print("usage: overlay.py OUT_DIR", file=sys.stderr)
        return 2
    out = argv[0]
    if os.path.exists(out):
        print(f"overlay.py: {out} exists; give a new folder", file=sys.stderr)
        return 1
    src = os.path.join(REPO, "datasets", "gpu")
    h200 = os.path.join(REPO, "datasets", "h200")
    shutil.copytree(src, out)

    paired = list(csv.DictReader(open(os.path.join(h200, "kernels_paired.csv"))))
    for table in ("linear", "bmm"):
        path = os.path.join(out, "neusight", "kernels", table + ".csv")
        with open(path) as f:
            rows = list(csv.reader(f))
        header = rows[0]
        if "precision" not in header:
            rows = [header + ["precision"]] + [r + [""] for r in rows[1:]]
        for r in paired:
            if r["op"] == table:
                rows.append([str(900000 + int(r["row_id"])), GPU, table, r["B"], r["M"], r["N"], r["K"], r["flops"],
                             r["latency_ms"], "" if r["precision"] == "fp32" else r["precision"]])
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)

    path = os.path.join(out, "deepbench", "gemm.csv")
    with open(path) as f:
        columns = next(csv.reader(f))
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, columns, lineterminator="\n")
        for r in csv.DictReader(open(os.path.join(h200, "deepbench_gemm.csv"))):
            w.writerow({"source_file": "datasets/h200/deepbench_gemm.csv", "sheet": "H200", "benchmark": "train",
                        "gpu": GPU, "vendor": "NV", "device_class": "gpu", "device_model_spec": GPU,
                        "precision": r["precision"], "M": r["M"], "N": r["N"], "K": r["K"], "transA": r["transA"],
                        "transB": r["transB"], "time_ms": r["time_ms"], "tflops_calc": r["tflops_calc"],
                        "software": "PyTorch 2.11.0+cu130"})

    path = os.path.join(out, "neusight", "models", "e2e.csv")
    with open(path) as f:
        columns = next(csv.reader(f))
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, columns, lineterminator="\n")
        first = [r for r in csv.DictReader(open(os.path.join(h200, "e2e.csv"))) if r["status"] == "ok"]
        repeat = {key(r): float(r["e2e_ms"]) for r in csv.DictReader(open(os.path.join(h200, "e2e_repeat.csv")))
                  if r["status"] == "ok"}
        for r in first:
            # the mean of the two campaigns where the configuration was measured in both
            ms = (float(r["e2e_ms"]) + repeat[key(r)]) / 2 if key(r) in repeat else float(r["e2e_ms"])
            w.writerow({"gpu": "NVIDIA_H200", "gpu_device_name": GPU, "model": r["model"], "phase": r["phase"],
                        "seq_len": r["seq_len"], "batch": r["batch"], "parallel": "none", "n_gpus": "1",
                        "fusion": "false", "num_layer": r["num_layer"], "model_n_layer": r["model_n_layer"],
                        "e2e_ms": f"{ms:.4f}", "fw_ms": "", "bw_ms": "",
                        "node_csv": "", "node_csv_status": "none", "source_file": "datasets/h200/e2e.csv"})
    print(f"wrote {out}: datasets/gpu with the H200 rows of datasets/h200")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
