"""How much of a small kernel's isolated time is its launch: each kernel timed alone (CUDA events around one call,
the companion's protocol: mean of the 5 fastest of 25 after 3 warm-ups), queued (200 calls between two events, per
call) and replayed from a CUDA graph (200 calls captured, per call: the GPU's own time, no launch). Writes
$OUT/launch.json. Run on the lent H200: PYTHONUNBUFFERED=1 python3 tools/h200/launch_check.py"""
import json
import os

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = "cuda"


def isolated(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(25):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        t.append(a.elapsed_time(b))
    t.sort()
    return sum(t[:5]) / 5


def queued(fn, n=200):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            fn()
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) / n)
    return best


def graphed(fn, n=200):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    g.replay()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) / n)
    return best


cases = []
for dt, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
    for m, k, n in ((256, 768, 768), (1024, 768, 3072), (4096, 1024, 4096)):
        x, w, bias = torch.randn(m, k, device=dev, dtype=dt), torch.randn(n, k, device=dev, dtype=dt), \
            torch.randn(n, device=dev, dtype=dt)
        cases.append((f"linear {m}x{k}->{n} {name}", lambda x=x, w=w, bias=bias: F.linear(x, w, bias)))
    for rows, h in ((2048, 256), (8192, 1024), (65536, 1024)):
        a, b = torch.randn(rows, h, device=dev, dtype=dt), torch.randn(rows, h, device=dev, dtype=dt)
        cases.append((f"add {rows}x{h} {name}", lambda a=a, b=b: torch.add(a, b)))
    for batch, c, hw in ((8, 64, 28), (16, 256, 14), (32, 128, 56)):
        conv = torch.nn.Conv2d(c, c, 3, 1, 1, bias=False).to(dev, dt)
        x = torch.randn(batch, c, hw, hw, device=dev, dtype=dt)
        cases.append((f"conv3x3 {batch}x{c}x{hw}x{hw} {name}", lambda conv=conv, x=x: conv(x)))
out = []
with torch.no_grad():
    for label, fn in cases:
        r = {"kernel": label, "isolated_ms": isolated(fn), "queued_ms": queued(fn)}
        try:
            r["graph_ms"] = graphed(fn)
        except Exception as e:  # a kernel that cannot be captured is reported, not fatal
            r["graph_error"] = str(e)[:200]
        out.append(r)
        print(json.dumps(r), flush=True)
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "launch.json"), "w") as f:
    json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": out}, f, indent=1)
