"""Follow-up to ``large_batch.py``: does a language-model head with a bias escape the misalignment penalty?

``large_batch.py`` measured GPT-2's training 27 % slower with its 50,257-word vocabulary than padded to 50,304 (its
head has no bias), and BERT-large's no slower with 30,522 words than with 30,528 (its head has one). This times the
two heads alone, forward and forward + backward, with and without a bias, aligned and not, in bf16, fp16 and tf32,
through the companion's timing code; results to ``$OUT/align_probe.json``.

    PYTHONUNBUFFERED=1 python3 tools/h200/align_probe.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from scaledl_profiler import backend as be  # noqa: E402
from scaledl_profiler import precision as prec  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
B = be.make(torch, "cuda")


def timed(fn, warm=5, reps=20):
    for _ in range(warm):
        fn()
    B.sync()
    ts = sorted(B.time_ms(fn) for _ in range(reps))
    return sum(ts[:10]) / 10


def main():
    rows = []
    for precision in ("bf16", "fp16", "tf32"):
        B.apply(precision)
        dtype = prec.tensor_dtype(torch, precision)
        for name, tokens, k, vocabs in (("bert-large head", 8192, 1024, (30522, 30528)),
                                        ("gpt2 head", 8192, 768, (50257, 50304))):
            for n in vocabs:
                for bias in (False, True):
                    x = torch.randn(tokens, k, device="cuda", dtype=dtype, requires_grad=True)
                    w = torch.randn(n, k, device="cuda", dtype=dtype, requires_grad=True)
                    b = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True) if bias else None
                    g = torch.randn(tokens, n, device="cuda", dtype=dtype)

                    def fwd():
                        with torch.no_grad():
                            F.linear(x, w, b)

                    def train():
                        F.linear(x, w, b).backward(g)

                    f, t = timed(fwd), timed(train)
                    rows.append({"precision": precision, "head": name, "tokens": tokens, "K": k, "N": n,
                                 "bias": bias, "forward_ms": round(f, 4), "train_ms": round(t, 4)})
                    print(rows[-1], flush=True)
                    del x, w, b, g
    with open(os.path.join(OUT, "align_probe.json"), "w") as fh:
        json.dump({"machine": {"gpu": B.name, "torch": torch.__version__, "cuda": torch.version.cuda},
                   "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
