"""Does what a product multiplies change what a Hopper GPU sustains under its power limit?

``sustained_gemm.py`` ran its products on random normal operands and found 671 TFLOP/s in BF16 at the H200's 700 W
limit; the published H100 runs imply more. This runs one product of a Llama 3.1 70B layer (8,192 tokens x 8,192 ->
14,336, TP 4 shard) back to back for a second each, in BF16 and FP8, on operands drawn several ways: standard normal;
normal scaled to 0.02 (an initialised weight); SiLU of a normal (an activation: many values near zero); a normal with
half its entries zeroed; all zeros. Power and SM clock are sampled as in ``sustained_gemm.py`` (whose ``Sampler``,
``train`` and ``product`` it reuses); two passes in shuffled orders. Results to ``$OUT/operand_power.json``.

    PYTHONUNBUFFERED=1 python3 tools/h200/operand_power.py
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import sustained_gemm as sg  # noqa: E402

M, K, N = 8192, 8192, 14336


def operand(kind, rows, cols):
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float32)
    if kind == "normal*0.02":
        x = x * 0.02
    elif kind == "silu(normal)":
        x = torch.nn.functional.silu(x)
    elif kind == "half zeros":
        x = x * (torch.rand_like(x) < 0.5)
    elif kind == "zeros":
        x = torch.zeros_like(x)
    return x.to(torch.bfloat16)


def main():
    sampler = sg.Sampler()
    sampler.start()
    kinds = ("normal", "normal*0.02", "silu(normal)", "half zeros", "zeros")
    todo = [(k, p) for k in kinds for p in ("bf16", "fp8")]
    rows = []
    rnd = random.Random(13)
    for rep in (1, 2):
        order = list(range(len(todo)))
        rnd.shuffle(order)
        for i in order:
            kind, precision = todo[i]
            a, w = operand(kind, M, K), operand(kind, N, K)
            ms, calls, watts, mhz = sg.train(sg.product(a, w, precision), sampler)
            r = {"operands": kind, "precision": precision, "rep": rep, "M": M, "K": K, "N": N, "ms": round(ms, 5),
                 "calls": calls, "tflops": round(2.0 * M * N * K / ms / 1e9, 1), "watts": round(watts, 1),
                 "sm_mhz": round(mhz)}
            rows.append(r)
            print(r, flush=True)
            with open(os.path.join(sg.OUT, "operand_power.json"), "w") as f:
                json.dump({"machine": {"gpu": sg.B.name, "torch": torch.__version__}, "rows": rows}, f, indent=1)
    sampler.stop = True


if __name__ == "__main__":
    main()
