"""Second H200 campaign: what an eager iteration in half precision pays that the layer model does not see.

The first campaign (``h200_check.py``, ``tools/device-campaign``) left the bundled model 35 % too fast on eager
half-precision runs, 3 % on FP32/TF32 ones, with BF16 products whose sides are not multiples of 8 50 % too fast.
This one separates the candidate causes, each as a controlled pair on the same GPU:

  resnet    ResNet-50 (torchvision, random weights, synthetic images) training (SGD with momentum) and inference at
            batch 256 and 64: precision (fp32, tf32, bf16, fp16 with a GradScaler) x memory format (NCHW, PyTorch's
            default, or channels_last) x cuDNN autotuning (off, PyTorch's default and the device campaign's, or on).
  lm        HuggingFace BERT-large (seq 128, batch 64, masked LM) and GPT-2 (seq 1024, batch 8) training with AdamW,
            in tf32, bf16 and fp16, each with its published vocabulary (30,522 / 50,257 words: not multiples of 8) and
            padded to a multiple of 64 (30,528 / 50,304).
  align     GEMMs of 4,096^3 with one side (M, N or K) 4,096 + d, d in 0, 1, 2, 4, 8, as ``torch.mm`` and as
            ``F.linear``, in bf16, fp16 and tf32: what a side that is not a multiple of 16 bytes costs.

Timing goes through the measurement companion's own code (``scaledl_profiler.backend``: CUDA events around each
call; ``precision``: the TF32 switches, autocast and GradScaler exactly as ``scaledl_profiler measure`` sets them).
Whole iterations: 3 untimed, then up to 6 timed (fewer past 1.5 s), median; every configuration twice, each pass
in its own shuffled order (seed ``LB_SEED``, default 7). Results go to ``$OUT/large_batch.json``, rewritten after
every configuration so a run cut short still returns what it measured.

    PYTHONUNBUFFERED=1 python3 tools/h200/large_batch.py 360     # seconds of budget
"""
import json
import os
import random
import statistics
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

T0 = time.time()
OUT = os.environ.get("OUT", "/tmp/out")
BUDGET = float(sys.argv[1]) if len(sys.argv) > 1 else 360.0
SEED = int(os.environ.get("LB_SEED", "7"))
os.makedirs(OUT, exist_ok=True)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from scaledl_profiler import backend as be  # noqa: E402
from scaledl_profiler import precision as prec  # noqa: E402

B = be.make(torch, "cuda")
RESULT = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), "budget_s": BUDGET, "seed": SEED, "runs": [],
          "align": [], "errors": []}


def left():
    return BUDGET - (time.time() - T0)


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def save():
    tmp = os.path.join(OUT, "large_batch.json.tmp")
    with open(tmp, "w") as f:
        json.dump(RESULT, f, indent=1)
    os.replace(tmp, os.path.join(OUT, "large_batch.json"))


def info():
    p = torch.cuda.get_device_properties(0)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    try:
        import torchvision
        tv = torchvision.__version__
    except Exception:  # recorded, not fatal: the resnet section then fails alone
        tv = None
    try:
        import transformers
        trf = transformers.__version__
    except Exception:
        trf = None
    return {"gpu": B.name, "sms": p.multi_processor_count, "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "torchvision": tv, "transformers": trf, "nvidia_smi": smi}


def iterate(step, warm=3, reps=6, cap_s=1.5):
    """Median (and all) of up to ``reps`` timed calls after ``warm`` untimed ones."""
    for _ in range(warm):
        step()
    B.sync()
    times = []
    for _ in range(reps):
        times.append(B.time_ms(step))
        if sum(times) > 1000 * cap_s and len(times) >= 3:
            break
    return statistics.median(times), times


# ---------------------------------------------------------------- whole iterations
def resnet_job(batch, precision, layout, autotune, phase):
    import torchvision
    torch.backends.cudnn.benchmark = autotune
    B.apply(precision)
    model = torchvision.models.resnet50(weights=None).cuda()
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    model = model.to(memory_format=fmt)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    if phase == "infer":
        model.eval()

        def step():
            with torch.no_grad(), B.autocast(precision):
                model(x)
        return step, model
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return training_step(opt, precision, lambda: F.cross_entropy(model(x), y)), model


def training_step(opt, precision, loss_of):
    """One optimizer step on ``loss_of()`` under the precision's autocast, with a GradScaler where it has one."""
    scaler = B.scaler(precision, True)

    def step():
        opt.zero_grad(set_to_none=True)
        with B.autocast(precision):
            loss = loss_of()
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    return step


def lm_job(name, vocab, precision):
    import transformers as tr
    torch.backends.cudnn.benchmark = False
    B.apply(precision)
    if name == "bert-large":
        cfg = tr.BertConfig(vocab_size=vocab, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                            intermediate_size=4096, max_position_embeddings=512)
        with torch.device("cuda"):
            model = tr.BertForMaskedLM(cfg)
        batch, seq = 64, 128
    else:
        cfg = tr.GPT2Config(vocab_size=vocab, n_positions=1024, n_embd=768, n_layer=12, n_head=12)
        with torch.device("cuda"):
            model = tr.GPT2LMHeadModel(cfg)
        batch, seq = 8, 1024
    model = model.cuda().train()
    ids = torch.randint(0, 30000, (batch, seq), device="cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return training_step(opt, precision, lambda: model(input_ids=ids, labels=ids).loss), model, batch, seq


def jobs():
    out = []
    for batch, phase in ((256, "train"), (64, "train"), (256, "infer")):
        for precision, layout, autotune in (("fp32", "nchw", False), ("tf32", "nchw", False),
                                            ("tf32", "nchw", True), ("tf32", "nhwc", True),
                                            ("bf16", "nchw", False), ("bf16", "nchw", True),
                                            ("bf16", "nhwc", False), ("bf16", "nhwc", True),
                                            ("fp16", "nchw", False), ("fp16", "nhwc", True)):
            if batch == 64 and precision == "fp32":
                continue
            out.append({"model": "resnet50", "batch": batch, "phase": phase, "precision": precision,
                        "layout": layout, "cudnn_benchmark": autotune})
    for name, vocabs in (("bert-large", (30522, 30528)), ("gpt2", (50257, 50304))):
        for precision in ("tf32", "bf16", "fp16"):
            for vocab in vocabs:
                out.append({"model": name, "vocab": vocab, "phase": "train", "precision": precision})
    return out


def run_job(job):
    if job["model"] == "resnet50":
        step, model = resnet_job(job["batch"], job["precision"], job["layout"], job["cudnn_benchmark"],
                                 job["phase"])
    else:
        step, model, batch, seq = lm_job(job["model"], job["vocab"], job["precision"])
        job = dict(job, batch=batch, seq=seq)
    try:
        med, times = iterate(step)
    finally:
        del model
        B.release()
    return dict(job, ms=round(med, 4), times_ms=[round(t, 4) for t in times])


def whole():
    todo = jobs()
    rnd = random.Random(SEED)
    order = list(range(len(todo)))
    for p in (1, 2):
        rnd.shuffle(order)
        for i in order:
            if left() < 25:
                RESULT["errors"].append(f"pass {p}: budget spent before job {i}")
                save()
                return
            job = todo[i]
            try:
                r = run_job(dict(job))
                r.update(job=i, pass_=p)
                RESULT["runs"].append(r)
                log(f"pass {p} job {i} {job}: {r['ms']:.2f} ms")
            except Exception as e:  # recorded with its job; the campaign goes on
                oom = B.is_oom(e)
                RESULT["errors"].append({"job": i, "pass": p, "oom": oom, "error": traceback.format_exc()[-800:]})
                log(f"pass {p} job {i}: {'OOM' if oom else e}")
                B.release()
            save()


# ---------------------------------------------------------------- alignment
def align():
    torch.backends.cudnn.benchmark = False
    base = 4096
    for precision in ("bf16", "fp16", "tf32"):
        B.apply(precision)
        dtype = prec.tensor_dtype(torch, precision)
        for side in ("M", "N", "K"):
            for d in (0, 1, 2, 4, 8):
                m, n, k = (base + d if s == side else base for s in ("M", "N", "K"))
                a = torch.randn(m, k, device="cuda", dtype=dtype)
                bt = torch.randn(n, k, device="cuda", dtype=dtype)   # linear's weight, [out, in]
                b = torch.randn(k, n, device="cuda", dtype=dtype)
                for op, fn in (("mm", lambda: torch.mm(a, b)), ("linear", lambda: F.linear(a, bt))):
                    for _ in range(10):
                        fn()
                    B.sync()
                    ts = sorted(B.time_ms(fn) for _ in range(30))
                    ms = sum(ts[:10]) / 10
                    RESULT["align"].append({"precision": precision, "op": op, "side": side, "d": d, "M": m,
                                            "N": n, "K": k, "ms": round(ms, 5),
                                            "tflops": round(2.0 * m * n * k / ms / 1e9, 1)})
                del a, b, bt
        log(f"align {precision} done")
        save()
    B.apply("fp32")


def main():
    RESULT["machine"] = info()
    log(json.dumps(RESULT["machine"]))
    save()
    for name, fn in (("align", align), ("whole", whole)):
        try:
            fn()
        except Exception:  # a section's failure is recorded, the next one runs
            RESULT["errors"].append({"section": name, "error": traceback.format_exc()[-2000:]})
        RESULT.setdefault("sections_s", {})[name] = round(time.time() - T0, 1)
        save()
    log("done")


if __name__ == "__main__":
    main()
