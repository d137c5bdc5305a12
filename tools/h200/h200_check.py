"""One prepared measurement campaign on a single NVIDIA H200 (a GPU none of scaledl's training data covers).

Run on the lent device machine (see tools/h200/README.md) as ``h200_check.py [BUDGET_S [SECTIONS]]``; every
section writes CSV/JSON under a results folder and re-packs it into ``$OUT/h200.tar.gz`` when it ends, so a campaign
cut short still returns what it measured. ``H200_SEED`` (not 0) shuffles the order of the whole models.

Sections, in order of value:
  e2e       NeuSight's whole-model runs (HuggingFace GPT-2/GPT-3/OPT/BERT from NeuSight's configs, eager attention,
            FP32 without TF32, random weights, input ones(batch, seq)) at every single-GPU configuration NeuSight
            measured on the H100: inference = forward under no_grad (eval mode), training = forward, untimed
            cross-entropy, backward (train mode, dropout on); no optimizer step.
  paired    NeuSight kernel shapes (linear, bmm) sampled from its H100 rows, FP32 (no TF32) and BF16.
  companion scaledl_profiler's own ``kernels`` command (the shipped measurement companion) on CUDA, quick grid.
  deepbench DeepBench's 160 training GEMM shapes in FP32 and FP16 (tensor cores, FP32 accumulation).
  extras    BF16 and FP8 GEMMs at LLM shapes; attention (SDPA) forward+backward with 64- and 128-wide heads.

Timing: CUDA events; a shape's latency is the mean of the fastest ``keep`` of ``reps`` timed calls after ``warm``
untimed ones (NeuSight used 5 of 25; fewer here to fit the lease, stated per section in meta.json).
"""
import csv
import json
import math
import os
import random
import subprocess
import sys
import tarfile
import time
import traceback

T0 = time.time()
OUT = os.environ.get("OUT", "/tmp/out")
RES = "/tmp/h200res"
BUDGET = float(sys.argv[1]) if len(sys.argv) > 1 else 400.0
os.makedirs(RES, exist_ok=True)
os.makedirs(OUT, exist_ok=True)
META = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), "budget_s": BUDGET, "sections": {}}

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
DEV = "cuda"
GPU = torch.cuda.get_device_name()


def left():
    return BUDGET - (time.time() - T0)


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def pack():
    with open(os.path.join(RES, "meta.json"), "w") as f:
        json.dump(META, f, indent=1)
    tmp = os.path.join(OUT, "h200.tar.gz.tmp")
    with tarfile.open(tmp, "w:gz") as t:
        t.add(RES, arcname="h200")
    os.replace(tmp, os.path.join(OUT, "h200.tar.gz"))


def timed(fn, warm, reps, keep, cap_s=3.0):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
        if sum(times) > 1000 * cap_s and len(times) >= keep:
            break
    times.sort()
    return sum(times[:keep]) / min(keep, len(times))


def writer(name, columns):
    f = open(os.path.join(RES, name), "w", newline="")
    w = csv.writer(f)
    w.writerow(columns)
    return f, w


def section(name, fn):
    if left() < 20:
        META["sections"][name] = {"status": "skipped: budget"}
        log(f"{name}: skipped, budget spent")
        return
    s = time.time()
    try:
        info = fn() or {}
        info["status"] = "ok"
    except Exception as e:  # a section's failure is recorded, the campaign goes on
        info = {"status": "error", "error": traceback.format_exc()[-2000:]}
        log(f"{name}: {e}")
    info["seconds"] = round(time.time() - s, 1)
    META["sections"][name] = info
    log(f"{name}: {info['status']} in {info['seconds']} s")
    torch.cuda.empty_cache()
    pack()


def info():
    p = torch.cuda.get_device_properties(0)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,"
                          "clocks.max.mem,power.limit", "--format=csv"], capture_output=True, text=True).stdout
    import transformers
    return {"gpu": GPU, "sms": p.multi_processor_count, "memory_GiB": round(p.total_memory / 2 ** 30, 1),
            "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "transformers": transformers.__version__, "nvidia_smi": smi}


# ---------------------------------------------------------------- e2e
def build(model, cfgs):
    import transformers as tr
    c = cfgs[model]
    n, h, heads, ffn, vocab = (int(c[k]) for k in ("n_layer", "hidden", "heads", "ffn", "vocab"))
    arch = c["architecture"]
    if arch == "GPT2LMHeadModel":
        cfg = tr.GPT2Config(vocab_size=vocab, n_positions=int(c["max_pos"]), n_embd=h, n_layer=n, n_head=heads,
                            n_inner=ffn, activation_function=c["activation"])
        cls = tr.GPT2LMHeadModel
    elif arch == "OPTForCausalLM":
        cfg = tr.OPTConfig(vocab_size=vocab, hidden_size=h, num_hidden_layers=n, ffn_dim=ffn,
                           num_attention_heads=heads, max_position_embeddings=int(c["max_pos"]),
                           activation_function=c["activation"], word_embed_proj_dim=h)
        cls = tr.OPTForCausalLM
    elif arch == "BertLMHeadModel":
        cfg = tr.BertConfig(vocab_size=vocab, hidden_size=h, num_hidden_layers=n, num_attention_heads=heads,
                            intermediate_size=ffn, max_position_embeddings=int(c["max_pos"]),
                            hidden_act=c["activation"])
        cls = tr.BertLMHeadModel
    else:
        raise ValueError(arch)
    try:
        cfg._attn_implementation = "eager"
    except Exception:
        pass
    with torch.device(DEV):
        m = cls(cfg)
    return m.to(DEV, torch.float32)


def e2e():
    root = "datasets/gpu/neusight/models"
    cfgs = {r["model"]: r for r in csv.DictReader(open(os.path.join(root, "model_configs.csv")))}
    rows = [r for r in csv.DictReader(open(os.path.join(root, "e2e.csv")))
            if r["gpu"] == "NVIDIA_H100_80GB_HBM3" and r["parallel"] == "none" and r["fusion"] == "false"
            and r["model"] in cfgs and cfgs[r["model"]]["architecture"] != "SwitchTransformersForConditionalGeneration"]
    warm, reps, keep = 2, 6, 3
    f, w = writer("e2e.csv", ["gpu", "gpu_device_name", "model", "phase", "seq_len", "batch", "parallel", "n_gpus",
                              "fusion", "num_layer", "model_n_layer", "e2e_ms", "fw_ms", "bw_ms", "h100_e2e_ms",
                              "status"])
    done = 0
    models = sorted({r["model"] for r in rows})
    seed = int(os.environ.get("H200_SEED", "0"))  # a repeat campaign shuffles the models' order
    if seed:
        random.Random(seed).shuffle(models)
    for model in models:
        if left() < 60:
            break
        m = build(model, cfgs)
        META.setdefault("attn_implementation", {})[model] = str(getattr(m.config, "_attn_implementation", "?"))
        vocab = int(cfgs[model]["vocab"])
        for r in [r for r in rows if r["model"] == model]:
            if left() < 45:
                break
            b, s = int(r["batch"]), int(r["seq_len"])
            ids = torch.ones(b, s, dtype=torch.long, device=DEV)
            try:
                if r["phase"] == "inf":
                    m.eval()

                    def fw():
                        with torch.no_grad():
                            m(input_ids=ids)
                    fw_ms = timed(fw, warm, reps, keep)
                    bw_ms = 0.0
                else:
                    m.train()
                    fws, bws = [], []
                    for i in range(warm + reps):
                        a, bb, c = (torch.cuda.Event(enable_timing=True) for _ in range(3))
                        torch.cuda.synchronize()
                        a.record()
                        logits = m(input_ids=ids).logits
                        bb.record()
                        bb.synchronize()
                        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), ids.view(-1) % vocab)
                        torch.cuda.synchronize()
                        s1 = torch.cuda.Event(enable_timing=True)
                        s1.record()
                        loss.backward()
                        c.record()
                        c.synchronize()
                        if i >= warm:
                            fws.append(a.elapsed_time(bb))
                            bws.append(s1.elapsed_time(c))
                        del logits, loss
                        m.zero_grad(set_to_none=True)
                    fws.sort()
                    bws.sort()
                    fw_ms, bw_ms = sum(fws[:keep]) / keep, sum(bws[:keep]) / keep
                status = "ok"
            except torch.cuda.OutOfMemoryError:
                fw_ms = bw_ms = float("nan")
                status = "oom"
            torch.cuda.empty_cache()
            w.writerow(["NVIDIA_H200", GPU, model, r["phase"], s, b, "none", 1, "false", r["num_layer"],
                        r["model_n_layer"], round(fw_ms + bw_ms, 4), round(fw_ms, 4), round(bw_ms, 4),
                        r["e2e_ms"], status])
            f.flush()
            done += 1
            log(f"e2e {model} {r['phase']} {s}x{b}: {fw_ms + bw_ms:.1f} ms (H100 {float(r['e2e_ms']):.1f})")
        del m
        torch.cuda.empty_cache()
    f.close()
    return {"rows": done, "of": len(rows), "protocol": f"warm {warm}, reps {reps}, mean of fastest {keep}"}


# ---------------------------------------------------------------- paired kernels
def paired():
    warm, reps, keep = 3, 10, 5
    f, w = writer("kernels_paired.csv", ["row_id", "gpu", "op", "B", "M", "N", "K", "flops", "latency_ms",
                                         "precision", "h100_row_id", "h100_latency_ms"])
    n = 0
    for table in ("linear", "bmm"):
        rows = [r for r in csv.DictReader(open(f"datasets/gpu/neusight/kernels/{table}.csv"))
                if r["gpu"] == "NVIDIA H100 80GB HBM3" and float(r["latency_ms"]) <= 15]
        for r in random.Random(1).sample(rows, min(400, len(rows))):
            if left() < 150:
                break
            B, M, N, K = (int(r[k]) for k in ("B", "M", "N", "K"))
            for prec, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
                try:
                    if table == "linear":
                        x, wt, bias = (torch.randn(*sz, device=DEV, dtype=dt) for sz in ((B, M, N), (K, N), (K,)))
                        fn = (lambda x=x, wt=wt, bias=bias: F.linear(x, wt, bias))
                    else:
                        a, xx = torch.randn(B, M, N, device=DEV, dtype=dt), torch.randn(B, N, K, device=DEV, dtype=dt)
                        fn = (lambda a=a, xx=xx: torch.bmm(a, xx))
                    with torch.no_grad():
                        ms = timed(fn, warm, reps, keep)
                except torch.cuda.OutOfMemoryError:
                    continue
                w.writerow([n, GPU, table, B, M, N, K, 2 * B * M * N * K, round(ms, 6), prec, r["row_id"],
                            r["latency_ms"]])
                n += 1
            torch.cuda.empty_cache()
        f.flush()
    f.close()
    return {"rows": n, "protocol": f"warm {warm}, reps {reps}, mean of fastest {keep}"}


# ---------------------------------------------------------------- the shipped companion
def companion():
    env = dict(os.environ, PYTHONPATH="python")
    out = os.path.join(RES, "companion")
    secs = max(20, min(75, left() - 120))
    p = subprocess.run([sys.executable, "-m", "scaledl_profiler", "kernels", "--out", out, "--device", "cuda",
                        "--precision", "fp32,bf16", "--grid", "quick", "--ops", "linear,bmm,elem,ln,softmax,attention",
                        "--max-seconds", str(secs), "--reps", "10"], env=env, capture_output=True, text=True,
                       timeout=secs + 90)
    with open(os.path.join(RES, "companion.log"), "w") as f:
        f.write(f"rc={p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
    return {"rc": p.returncode, "max_seconds": secs, "tail": (p.stdout + p.stderr)[-600:]}


# ---------------------------------------------------------------- DeepBench GEMMs
def deepbench():
    rows = [r for r in csv.DictReader(open("datasets/gpu/deepbench/gemm.csv"))
            if r["benchmark"] == "train" and r["gpu"] == "V100" and r["precision"] == "fp32"]
    f, w = writer("deepbench_gemm.csv", ["benchmark", "gpu", "precision", "M", "N", "K", "transA", "transB",
                                         "time_ms", "tflops_calc", "v100_time_ms"])
    n = 0
    for r in rows:
        if left() < 90:
            break
        M, N, K = int(r["M"]), int(r["N"]), int(r["K"])
        for prec, dt in (("fp32", torch.float32), ("fp16_in_fp16_mul_fp32_acc", torch.float16)):
            a = torch.randn(K, M, device=DEV, dtype=dt).t() if r["transA"] == "T" else torch.randn(M, K, device=DEV,
                                                                                                   dtype=dt)
            b = torch.randn(N, K, device=DEV, dtype=dt).t() if r["transB"] == "T" else torch.randn(K, N, device=DEV,
                                                                                                   dtype=dt)
            with torch.no_grad():
                ms = timed(lambda: torch.matmul(a, b), 3, 10, 5)
            w.writerow(["train", GPU, prec, M, N, K, r["transA"], r["transB"], round(ms, 6),
                        round(2 * M * N * K / ms / 1e9, 3), r["time_ms"]])
            n += 1
    f.close()
    return {"rows": n}


# ---------------------------------------------------------------- extras
def extras():
    out = {"gemm": [], "attention": []}
    shapes = [(8192, 8192, 8192), (8192, 28672, 8192), (8192, 8192, 28672), (8192, 10240, 8192),
              (8192, 1280, 8192), (4096, 14336, 4096), (16384, 4096, 4096),
              (1024, 5760, 2880), (1024, 2880, 2880), (4096, 5760, 2880), (4096, 2880, 2880)]
    for M, N, K in shapes:
        if left() < 40:
            break
        a = torch.randn(M, K, device=DEV, dtype=torch.bfloat16)
        wt = torch.randn(N, K, device=DEV, dtype=torch.bfloat16)
        rec = {"M": M, "N": N, "K": K}
        with torch.no_grad():
            ms = timed(lambda: torch.matmul(a, wt.t()), 3, 10, 5)
            rec["bf16_ms"] = ms
            rec["bf16_tflops"] = 2 * M * N * K / ms / 1e9
            try:
                a8, w8 = a.to(torch.float8_e4m3fn), wt.to(torch.float8_e4m3fn)
                one = torch.ones((), device=DEV, dtype=torch.float32)
                ms8 = timed(lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one,
                                                     out_dtype=torch.bfloat16), 3, 10, 5)
                rec["fp8_ms"] = ms8
                rec["fp8_tflops"] = 2 * M * N * K / ms8 / 1e9
            except Exception as e:
                rec["fp8_error"] = str(e)[:200]
        out["gemm"].append(rec)
        log(f"gemm {M}x{N}x{K}: bf16 {rec['bf16_tflops']:.0f} TFLOP/s, fp8 {rec.get('fp8_tflops', float('nan')):.0f}")
    for seq in (4096, 8192):
        for heads, d in ((64, 64), (32, 128)):
            if left() < 25:
                break
            q, k, v = (torch.randn(1, heads, seq, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            g = torch.randn(1, heads, seq, d, device=DEV, dtype=torch.bfloat16)

            def fwd():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)

            def fwbw():
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                o.backward(g)
            f_ms = timed(fwd, 3, 10, 5)
            fb_ms = timed(fwbw, 3, 10, 5)
            flops = 4 * heads * seq * seq * d / 2  # causal forward
            out["attention"].append({"seq": seq, "heads": heads, "head_dim": d, "fwd_ms": f_ms, "fwd_bwd_ms": fb_ms,
                                     "fwd_tflops": flops / f_ms / 1e9, "fwd_bwd_tflops": 3.5 * flops / fb_ms / 1e9})
            log(f"sdpa seq {seq} {heads}x{d}: fwd {f_ms:.2f} ms, fwd+bwd {fb_ms:.2f} ms")
    with open(os.path.join(RES, "extras.json"), "w") as f:
        json.dump(out, f, indent=1)
    return {"gemm": len(out["gemm"]), "attention": len(out["attention"])}


if __name__ == "__main__":
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else ["e2e", "paired", "companion", "deepbench", "extras"]
    section("info", info)
    for name in chosen:
        section(name, {"e2e": e2e, "paired": paired, "companion": companion, "deepbench": deepbench,
                       "extras": extras}[name])
    log("done")
