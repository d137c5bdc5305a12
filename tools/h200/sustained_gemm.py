"""What a Hopper GPU sustains on the products of today's dense LLM layers, under its power limit.

Issue 32 asks for the sustained efficiency of large GEMMs per GPU and precision (the gap between the data sheet's
peak and what Megatron reaches); the published runs say Llama 3.1 405B (hidden 16,384) runs slower per FLOP than 8B
and 70B on the same H100s. This times, on one H200 (the H100's compute and power limit), the forward products of one
transformer layer of Llama 3.1 8B (TP 1), 70B (TP 4) and 405B (TP 8) on one GPU's shard, 8,192 tokens, and the
weight-gradient product of each (reduction over the tokens), in BF16 and, through ``torch._scaled_mm`` with
per-tensor scales, FP8 (E4M3). Each product runs back to back for ``SECONDS`` after a 0.5 s warm-up, timed with CUDA
events around the whole train of calls, while a thread samples ``nvidia-smi`` power draw and SM clock every 0.1 s
(the means over the timed train are reported). Shapes run in a shuffled order (seed 11), then again in another.
Results to ``$OUT/sustained_gemm.json``.

    PYTHONUNBUFFERED=1 python3 tools/h200/sustained_gemm.py
"""
import json
import os
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
from scaledl_profiler import backend as be  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/out")
SECONDS = float(os.environ.get("SG_SECONDS", "1.5"))
os.makedirs(OUT, exist_ok=True)
B = be.make(torch, "cuda")
B.apply("bf16")

TOKENS = 8192
# (model, tensor parallelism, hidden, ffn, query heads, kv heads, head size): Llama 3.1's configurations
MODELS = (("llama3.1-8b", 1, 4096, 14336, 32, 8, 128), ("llama3.1-70b", 4, 8192, 28672, 64, 8, 128),
          ("llama3.1-405b", 8, 16384, 53248, 128, 8, 128))


def shapes():
    out = []
    for name, t, h, ffn, qh, kvh, d in MODELS:
        qkv = (qh + 2 * kvh) * d // t
        for layer, k, n in (("qkv", h, qkv), ("out", qh * d // t, h), ("fc1", h, 2 * ffn // t), ("fc2", ffn // t, h)):
            out.append({"model": name, "tensor": t, "layer": layer, "pass": "forward", "M": TOKENS, "K": k, "N": n})
            out.append({"model": name, "tensor": t, "layer": layer, "pass": "wgrad", "M": n, "K": TOKENS, "N": k})
    return out


class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.samples = []
        self.on = False
        self.stop = False

    def run(self):
        while not self.stop:
            if self.on:
                r = subprocess.run(["nvidia-smi", "--query-gpu=power.draw,clocks.sm", "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True).stdout.strip().split(",")
                try:
                    self.samples.append((float(r[0]), float(r[1])))
                except (ValueError, IndexError):
                    pass
            time.sleep(0.1)


def train(fn, sampler):
    end = time.time() + 0.5
    while time.time() < end:
        fn()
    B.sync()
    # calls in ~SECONDS: estimate from one timed call
    one = B.time_ms(fn)
    calls = max(3, int(1000 * SECONDS / max(one, 1e-3)))
    sampler.samples = []
    sampler.on = True

    def run():
        for _ in range(calls):
            fn()
    ms = B.time_ms(run)
    sampler.on = False
    s = sampler.samples or [(float("nan"), float("nan"))]
    return ms / calls, calls, sum(x[0] for x in s) / len(s), sum(x[1] for x in s) / len(s)


def product(a, w, precision):
    """The call ``a · wᵀ`` of BF16 operands: in BF16, or (``fp8``) cast to E4M3 once and multiplied by
    ``torch._scaled_mm`` with per-tensor scales of 1 into BF16."""
    if precision == "bf16":
        return lambda: torch.mm(a, w.t())
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def main():
    sampler = Sampler()
    sampler.start()
    rows = []
    todo = [dict(s, precision=p) for s in shapes() for p in ("bf16", "fp8")]
    rnd = random.Random(11)
    for rep in (1, 2):
        order = list(range(len(todo)))
        rnd.shuffle(order)
        for i in order:
            job = todo[i]
            m, k, n = job["M"], job["K"], job["N"]
            try:
                a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
                ms, calls, watts, mhz = train(product(a, w, job["precision"]), sampler)
                r = dict(job, rep=rep, ms=round(ms, 5), calls=calls, tflops=round(2.0 * m * n * k / ms / 1e9, 1),
                         watts=round(watts, 1), sm_mhz=round(mhz))
            except Exception as e:  # recorded with its shape; the others go on
                r = dict(job, rep=rep, error=str(e)[:300])
            rows.append(r)
            print(r, flush=True)
            with open(os.path.join(OUT, "sustained_gemm.json"), "w") as f:
                json.dump({"machine": {"gpu": B.name, "torch": torch.__version__, "cuda": torch.version.cuda},
                           "seconds_per_shape": SECONDS, "tokens": TOKENS, "rows": rows}, f, indent=1)
    sampler.stop = True


if __name__ == "__main__":
    main()
