#!/usr/bin/env python3
"""Is a larger micro-batch ever predicted faster? Predicts a grid of training jobs of published architectures
(datasets/gpu/llm-public/configs) at 1, 2, 4 and 8 sequences a micro-batch, all else the same, with a scaledl jar's
bundled `gpu` model, and lists every doubling of the micro-batch predicted faster than the smaller one. With
`--vary seq`, the sequences' length doubles instead (1,024 to 8,192 tokens, at 1 and 4 sequences a micro-batch).

    python3 tools/monotonicity/batch_grid.py [--jar scaledl-examples/target/scaledl.jar] [--vary batch|seq]

Prints the number of such doublings and the worst ten. Exits 1 where there is one (the property test
BatchMonotonicityProperties checks a smaller model on every build; this grid is for the docs' figures).
"""
import argparse
import collections
import csv
import itertools
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# architecture -> routed experts spread over the ranks (1: dense)
MODELS = {"llama3-8b": 1, "llama3-70b": 1, "mixtral-8x7b": 8, "gpt-oss-20b": 8, "qwen3-30b-a3b": 8,
          "nemotron-3-nano-30b-a3b": 8}
DEVICES = ["H100", "B200", "GB200", "A100-SXM4-80GB"]
# (tensor, pipeline, GPUs)
LAYOUTS = [(1, 1, 8), (2, 1, 32), (4, 2, 64), (8, 1, 128), (8, 4, 2048)]


def grid(vary):
    fixed, doubled = ([2048, 8192], [1, 2, 4, 8]) if vary == "batch" else ([1, 4], [1024, 2048, 4096, 8192])
    for model, experts in MODELS.items():
        for device in DEVICES:
            for precision in (["bf16"] if device.startswith("A100") else ["bf16", "fp8"]):
                for (t, p, gpus), m, f in itertools.product(LAYOUTS, [1, 8], fixed):
                    dp = gpus // (t * p)
                    e = experts if experts > 1 and (dp * t) % experts == 0 else 1
                    group = (f"{model} {device} {precision} t{t} p{p} {gpus} GPUs e{e} m{m} "
                             + (f"seq {f}" if vary == "batch" else f"b{f}"))
                    for d in doubled:
                        seq, b = (f, d) if vary == "batch" else (d, f)
                        yield dict(id=f"{group} {vary} {d}", group=group,
                                   transformer=f"configs/{model}/config.json", seq=seq, batch=b, micro_batches=m,
                                   gpus=gpus, tensor=t, pipeline=p, expert=e, device=device, precision=precision,
                                   recompute="selective")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", default=os.path.join(ROOT, "scaledl-examples/target/scaledl.jar"))
    ap.add_argument("--vary", choices=["batch", "seq"], default="batch",
                    help="what doubles: sequences a micro-batch (default) or their length")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # a candidate table's files must lie inside its folder
        shutil.copytree(os.path.join(ROOT, "datasets/gpu/llm-public/configs"), os.path.join(tmp, "configs"))
        rows = list(grid(args.vary))
        table = os.path.join(tmp, "grid.csv")
        with open(table, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        out = os.path.join(tmp, "out.csv")
        subprocess.run(["java", "-jar", args.jar, "predict", "--model", "gpu", "--candidates", table, "--out", out,
                        "-q", "--keep-going"], check=True, stderr=subprocess.DEVNULL)
        with open(out) as f:
            predicted = list(csv.DictReader(f))
    failed = [r for r in predicted if not r.get("predicted_ms")]
    groups = collections.defaultdict(list)
    for r in predicted:
        if r.get("predicted_ms"):
            groups[r["group"]].append((int(r[args.vary]), float(r["predicted_ms"])))
    faster = []
    pairs = 0
    for g, v in groups.items():
        v.sort()
        for (b1, t1), (b2, t2) in zip(v, v[1:]):
            pairs += 1
            if t2 < t1:
                faster.append((t2 / t1 - 1, g, b1, b2, t1, t2))
    what, unit = ("the micro-batch", "sequences") if args.vary == "batch" else ("the sequences' length", "tokens")
    print(f"{len(rows)} jobs, {len(failed)} not predicted; {len(faster)} of {pairs} doublings of {what} "
          "predicted faster")
    for d, g, b1, b2, t1, t2 in sorted(faster)[:10]:
        print(f"  {100 * d:+.2f} %  {g}: {b1} {unit} {t1:.1f} ms, {b2}: {t2:.1f} ms")
    return 1 if faster else 0


if __name__ == "__main__":
    sys.exit(main())
