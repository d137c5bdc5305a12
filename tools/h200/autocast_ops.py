"""What an eager iteration under autocast launches and costs the host, against FP32, for the campaign's models.

The device campaign's half-precision transformer runs (T5, Llama-style, BERT, GPT-2 at batch 8 and 32) ran slower
than the model predicts and than TF32, at batches where the host sets the pace. This counts, for each of the
campaign's twelve models at its smaller batch, in FP32 and under BF16 autocast, training and inference: the CUDA
kernels one iteration launches (``torch.profiler``, one profiled iteration after three untimed ones), the host's time
to issue one iteration (``time.perf_counter`` around the call, no synchronisation inside; BF16 has no GradScaler, so
nothing in the step waits for the GPU) and the GPU's time (the companion's CUDA-event timing), medians of 5. The
iteration is the companion's own (``scaledl_profiler.measure._step``: SGD with momentum, cross-entropy on random
targets). Results to ``$OUT/autocast_ops.json``.

    PYTHONUNBUFFERED=1 python3 tools/h200/autocast_ops.py
"""
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "device-campaign"))

import torch  # noqa: E402
from scaledl_profiler import backend as be  # noqa: E402
from scaledl_profiler.measure import _step  # noqa: E402
from scaledl_profiler.models import Spec  # noqa: E402
import campaign  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
B = be.make(torch, "cuda")


def count_kernels(step):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        B.sync()
    kernels = 0
    launches = 0
    for e in prof.events():
        if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA:
            kernels += 1
        elif "LaunchKernel" in e.name:
            launches += 1
    return kernels, launches


def job(name, size, batch, precision, phase):
    spec = Spec(name)
    model = spec.build(size).to(B.device)
    x = spec.example_input(batch, size)
    x = {k: v.to(B.device) for k, v in x.items()} if isinstance(x, dict) else x.to(B.device)
    gen = torch.Generator(device="cpu").manual_seed(0)
    step = _step({"precision": precision, "phase": phase}, model, model, x, B, gen)
    for _ in range(3):
        step()
    B.sync()
    kernels, launches = count_kernels(step)
    host, gpu = [], []
    for _ in range(5):
        B.sync()
        t = time.perf_counter()
        step()
        host.append(1000 * (time.perf_counter() - t))
        B.sync()
        gpu.append(B.time_ms(step))
    del model
    B.release()
    return {"model": name, "size": size, "batch": batch, "precision": precision, "phase": phase,
            "kernels": kernels, "launch_calls": launches, "host_ms": round(statistics.median(host), 3),
            "iter_ms": round(statistics.median(gpu), 3)}


def main():
    rows = []
    for name, family, size, batches in campaign.models(False):
        for phase in ("train", "infer"):
            for precision in ("fp32", "bf16"):
                try:
                    r = job(name, size, batches[0], precision, phase)
                except Exception:  # recorded with its job; the others go on
                    r = {"model": name, "precision": precision, "phase": phase, "error": traceback.format_exc()[-600:]}
                rows.append(r)
                print(r, flush=True)
                with open(os.path.join(OUT, "autocast_ops.json"), "w") as f:
                    json.dump({"machine": {"gpu": B.name, "torch": torch.__version__}, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
