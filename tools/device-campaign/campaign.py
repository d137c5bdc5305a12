"""One GPU, a hard time budget: kernel tables and whole-model iterations into a scaledl dataset folder.

Phases (progress on stderr, every phase within the budget; what the budget leaves out is recorded, not lost):

1. **exports** (background, on the CPU, ``CUDA_VISIBLE_DEVICES=""``): every model's graph with the companion,
   ``python -m scaledl_profiler export`` (opset 13; 17 where 13 cannot express an operator), into ``graphs/``;
2. **kernels** (GPU, while the exports run): ``kernels.run`` in FP32, TF32, BF16 and FP16 over the full shuffled
   grid, cut by its share of the budget;
3. **models** (GPU, after the exports, or after a bounded wait for them): ``measure`` of a plan of about a dozen
   CNNs and transformers x batches x phases x precisions (the CNNs in BF16 and TF32 also channels-last), 2 passes
   in shuffled orders, one-worker jobs in this process, a budget that starts no run past it;
4. **finish**: rows whose graph did not export go to ``runs-without-graph.csv`` (``runs.csv`` stays readable by
   scaledl), ``PROVENANCE.md`` records the date, command, versions, settings and counts.

The folder: ``runs.csv``, ``passes.csv``, ``failed.csv``, ``drift.csv``, ``plan.csv``, ``graphs/*.onnx``,
``kernels/*.csv`` (+ ``kernels/failed.csv``), ``machine.json``, ``exports.csv``, ``PROVENANCE.md``.

``--dry-run``: the same on the CPU in seconds, with tiny models and shapes (FP32 and BF16). Without PyTorch, or with
``--fake``, a stand-in backend replaces every measurement and export (the numbers are not data; PROVENANCE says so),
so the planning and writing logic still runs.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, wait

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PY_DIR = os.path.join(REPO, "python")
if PY_DIR not in sys.path:
    sys.path.insert(0, PY_DIR)

from scaledl_profiler import dataset, hf, kernels, machine  # noqa: E402
from scaledl_profiler.measure import measure, run_job_inline  # noqa: E402

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
DRY_PRECISIONS = ("fp32", "bf16")
# the convolutional networks are measured channels-last too (GPU only), in the precisions whose NCHW factor scaledl
# charges on Hopper and Blackwell: the check of MemoryFormat's constants on networks other than ResNet-50
CHANNELS_LAST_FAMILIES = ("resnet", "mobilenet", "efficientnet", "vgg", "densenet", "convnext")
CHANNELS_LAST_PRECISIONS = ("bf16", "tf32")


def models(dry):
    """(model, family, size, batches) of the campaign; ``size`` is the image side or the sequence length."""
    if dry:
        return [("tiny_cnn", "tiny", 16, (2, 4)), ("resnet18", "resnet", 32, (2,)),
                ("hf:" + os.path.join("configs", "tiny-gpt2.json"), "gpt2", 16, (2,))]
    cnn = (16, 64)
    return [("resnet50", "resnet", 224, cnn), ("resnet18", "resnet", 224, (32, 128)),
            ("mobilenet_v3_large", "mobilenet", 224, (32, 128)), ("efficientnet_b0", "efficientnet", 224, cnn),
            ("vgg16", "vgg", 224, cnn), ("densenet121", "densenet", 224, cnn), ("vit_b_16", "vit", 224, cnn),
            ("convnext_tiny", "convnext", 224, cnn), ("bert-base-uncased", "bert", 128, (8, 32)),
            ("gpt2", "gpt2", 128, (8, 32)), ("t5-small", "t5", 128, (8, 32)),
            ("llama-small", "llama", 128, (8, 32))]


TINY_GPT2 = {"model_type": "gpt2", "n_embd": 32, "n_head": 2, "n_layer": 2, "vocab_size": 128, "n_positions": 64}


def tiny_cnn(size=None):
    """The dry run's always-available model (a factory: ``tiny_cnn=campaign:tiny_cnn``)."""
    import torch.nn as nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 10))


FACTORIES = {"tiny_cnn": ("campaign", "tiny_cnn")}


def _usable(module):
    try:
        __import__(module)
        return True
    except Exception:  # absent, or built for another PyTorch
        return False


def graph_name(model, size):
    stem = os.path.splitext(os.path.basename(model))[0] if model.endswith(".json") else model
    for prefix in ("hf:", "tv:", "timm:"):
        stem = stem[len(prefix):] if stem.startswith(prefix) else stem
    return f"graphs/{stem.replace('/', '_')}_r{size}.onnx"


class Clock:
    """Seconds since the campaign started, and what is left of its budget."""

    def __init__(self, budget_s):
        self.t0 = time.monotonic()
        self.budget = budget_s

    def now(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.budget - self.now()


class Campaign:
    def __init__(self, args):
        self.args = args
        self.out = os.path.abspath(args.out)
        self.clock = Clock(args.budget_s)
        self.dry = args.dry_run
        self.fake = args.fake or (self.dry and not _usable("torch"))
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.exports = {}
        self.procs = {}
        self.notes = []
        self.kernel_summary = None
        self.model_counts = {}
        self.stopped = None
        self.futures = {}

    def log(self, msg):
        print(f"[{self.clock.now():6.1f} s] {msg}", file=sys.stderr, flush=True)

    # ---- exports -------------------------------------------------------------------------------------------
    def _export_one(self, model, size):
        path = graph_name(model, size)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS=str(self.args.export_threads),
                   PYTHONPATH=os.pathsep.join([PY_DIR, HERE] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        t = time.monotonic()
        last = ""
        for opset in (13, 17):
            cmd = [sys.executable, "-m", "scaledl_profiler", "export", model, "--size", str(size), "--out", path,
                   "--opset", str(opset)]
            if model in FACTORIES:
                cmd += ["--factory", f"{model}={FACTORIES[model][0]}:{FACTORIES[model][1]}"]
            timeout = max(5.0, min(self.args.export_timeout_s, self.clock.left() - 5))
            try:
                proc = subprocess.Popen(cmd, cwd=self.out, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
                self.procs[model] = proc
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return {"model": model, "graph": path, "status": "timeout", "opset": opset,
                        "seconds": round(time.monotonic() - t, 1), "detail": f"no graph after {timeout:.0f} s"}
            finally:
                self.procs.pop(model, None)
            if proc.returncode == 0:
                return {"model": model, "graph": path, "status": "ok", "opset": opset,
                        "seconds": round(time.monotonic() - t, 1), "detail": out.strip()}
            last = (err.strip().splitlines() or ["failed"])[0]
            if "opset" not in last or self.stopped:
                break
        return {"model": model, "graph": path, "status": "failed", "opset": opset,
                "seconds": round(time.monotonic() - t, 1), "detail": last[:300]}

    def start_exports(self, todo):
        pool = ThreadPoolExecutor(max_workers=self.args.export_workers)
        self.futures = {m: pool.submit(self._export_one, m, s) for m, _, s, _ in todo}
        pool.shutdown(wait=False)

    def fake_exports(self, todo):
        for m, _, s, _ in todo:
            self.exports[m] = {"model": m, "graph": "", "status": "fake", "opset": "", "seconds": 0,
                               "detail": "no export with the fake backend"}

    def collect(self, wait_s):
        """Records the exports that finish within ``wait_s`` seconds."""
        pending = [f for m, f in self.futures.items() if m not in self.exports]
        if pending and wait_s > 0:
            wait(pending, timeout=wait_s)
        for m, f in self.futures.items():
            if m in self.exports or not f.done():
                continue
            try:
                e = f.result()
            except Exception as err:  # a bug in the driver, not in the model: recorded, the campaign goes on
                e = {"model": m, "graph": "", "status": "error", "opset": "", "seconds": "", "detail": repr(err)}
            self.exports[m] = e
            self.log(f"export {m}: {e['status']} (opset {e['opset']}, {e['seconds']} s) {e['detail']}")

    def stop_exports(self):
        for proc in list(self.procs.values()):
            proc.kill()

    # ---- phases --------------------------------------------------------------------------------------------
    def run_kernels(self, share_s):
        if share_s <= 1:
            self.log("kernels: no time left in the budget")
            return
        precisions = DRY_PRECISIONS if self.dry else PRECISIONS
        if self.fake:
            executor = kernels.FakeExecutor()
        else:
            executor = kernels.make_executor("cpu" if self.dry else "cuda", reps=5 if self.dry else 25,
                                             warmup=1 if self.dry else 3)
        grid = "tiny" if self.dry else "full"
        self.log(f"kernels: {grid} grid, {', '.join(precisions)}, at most {share_s:.0f} s")
        self.kernel_summary = kernels.run(self.out, precisions, executor, grid, self.args.seed, share_s,
                                          log=self.log, max_bytes=(2 ** 26 if self.dry else 2 ** 31))
        self.log("kernels: " + self.kernel_summary.line())

    def write_plan(self, todo):
        precisions = DRY_PRECISIONS if self.dry else PRECISIONS
        path = os.path.join(self.out, "plan.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["model", "family", "resolution", "batch", "world_size", "threads", "phase", "precision",
                        "graph", "memory_format"])
            for model, family, size, batches in todo:
                graph = self.exports.get(model, {}).get("graph", graph_name(model, size))
                for b in batches:
                    for phase in ("train", "infer"):
                        for p in precisions:
                            w.writerow([model, family, size, b, 1, 1, phase, p, graph, "nchw"])
                            if not self.dry and family in CHANNELS_LAST_FAMILIES and p in CHANNELS_LAST_PRECISIONS:
                                w.writerow([model, family, size, b, 1, 1, phase, p, graph, "channels_last"])
        return path

    def fake_runner(self, job, options):
        return [{"key": r["key"], "ms": [1.0 + 0.25 * r["batch"]] * options["reps"], "params": 0, "device": "fake"}
                for r in job["runs"]]

    def run_models(self, todo, seconds):
        if not todo:
            self.log("models: nothing to measure")
            return
        if seconds <= 1:
            self.log("models: no time left in the budget")
            return
        plan = self.write_plan(todo)
        runner = self.fake_runner if self.fake else run_job_inline
        self.log(f"models: {len(todo)} models, at most {seconds:.0f} s, 2 passes")
        measure(plan, self.out, passes=2, warmup=1 if self.dry else 2, reps=2 if self.dry else 5,
                cap_s=1.0 if self.dry else 2.0, seed=self.args.seed, device="cpu" if self.dry else "cuda",
                factories=FACTORIES, log=self.log, runner=runner, check_idle=False, keep_going=True,
                max_seconds=seconds)

    # ---- finish --------------------------------------------------------------------------------------------
    def split_runs(self):
        """Moves runs whose graph file is missing to runs-without-graph.csv (scaledl refuses a missing graph)."""
        path = os.path.join(self.out, "runs.csv")
        if not os.path.exists(path):
            return 0, 0
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames, list(reader)
        keep = [r for r in rows if r["graph"] and os.path.isfile(os.path.join(self.out, r["graph"]))]
        lost = [r for r in rows if r not in keep]
        if lost:
            for name, part in (("runs.csv", keep), ("runs-without-graph.csv", lost)):
                tmp = os.path.join(self.out, name + ".tmp")
                with open(tmp, "w", newline="", encoding="utf-8") as f:
                    w = csv.DictWriter(f, fieldnames=fields)
                    w.writeheader()
                    w.writerows(part)
                os.replace(tmp, os.path.join(self.out, name))
        return len(keep), len(lost)

    def write_exports(self):
        with open(os.path.join(self.out, "exports.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["model", "graph", "status", "opset", "seconds", "detail"])
            w.writeheader()
            for m in sorted(self.exports):
                w.writerow(self.exports[m])

    def versions(self):
        v = {"python": platform.python_version()}
        for mod in ("torch", "torchvision", "timm", "transformers", "onnx"):
            try:
                v[mod] = __import__(mod).__version__
            except Exception:  # absent or unusable: left out
                pass
        return v

    def counts(self, name):
        path = os.path.join(self.out, name)
        if not os.path.exists(path):
            return []
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    def write_provenance(self, kept, lost):
        m = {}
        if os.path.exists(os.path.join(self.out, "machine.json")):
            with open(os.path.join(self.out, "machine.json"), encoding="utf-8") as f:
                m = json.load(f)
        failed = self.counts("failed.csv")
        status = {}
        for r in failed:
            status[r["status"]] = status.get(r["status"], 0) + 1
        passes = self.counts("passes.csv")
        ks = self.kernel_summary
        lines = [
            "# Device campaign" + (" (FAKE backend: no measurement, not data)" if self.fake else
                                   " (dry run on the CPU: tiny sizes, not data)" if self.dry else ""),
            "",
            f"- started: {self.started.isoformat(timespec='seconds')}; took {self.clock.now():.0f} s of a "
            f"{self.clock.budget:.0f} s budget" + (f"; stopped early: {self.stopped}" if self.stopped else ""),
            f"- command: `{' '.join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:])}` "
            f"(from {REPO})",
            f"- machine: {m.get('gpu') or m.get('cpu', '?')}"
            + (f" ({m.get('gpus')} visible; CUDA {m.get('cuda')}, cuDNN {m.get('cudnn')}, driver {m.get('driver')})"
               if m.get("gpu") else "") + f"; host {platform.node()}, {os.cpu_count()} CPUs",
            "- software: " + ", ".join(f"{k} {v}" for k, v in self.versions().items()),
            f"- seed {self.args.seed}; kernels: {'tiny' if self.dry else 'full'} grid, "
            f"{', '.join(DRY_PRECISIONS if self.dry else PRECISIONS)}, forward only, mean of the 5 fastest of "
            f"{5 if self.dry else 25} timed calls ({'wall clock' if self.dry else 'CUDA events'}), cudnn.benchmark on",
            f"- models: 2 passes in shuffled orders, warm-up {1 if self.dry else 2}, {2 if self.dry else 5} timed "
            "iterations (fewer past 2 s), one worker, cudnn.benchmark off (PyTorch's default); training = SGD "
            "with momentum, cross-entropy; fp16 training with a GradScaler; Hugging Face models with eager "
            "attention (as exported), random weights from built-in configurations; torchvision stochastic depth "
            "off",
            "- exports ran on the CPU while the kernel tables were measured (exports.csv); the model phase waited "
            "for them (a bounded wait: exports still running then overlapped the first model jobs)",
            "",
            "## Counts",
            "",
            "- kernel rows: " + (ks.line() if ks else "none"),
            f"- whole-model runs in runs.csv: {kept} ({len(passes)} pass rows); runs whose graph did not export "
            f"(runs-without-graph.csv): {lost}; failed.csv: "
            + (", ".join(f"{k} {v}" for k, v in sorted(status.items())) or "none"),
            "- exports: " + (", ".join(f"{k} {e['status']}" + (f" (opset {e['opset']})" if e["status"] == "ok"
                                                                and str(e["opset"]) != "13" else "")
                                       for k, e in sorted(self.exports.items())) or "none"),
        ]
        lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes] if self.notes else []
        with open(os.path.join(self.out, "PROVENANCE.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def finish(self):
        self.collect(0 if self.stopped else max(0.0, self.clock.left() - 3))
        for m in self.futures:
            if m not in self.exports:
                self.exports[m] = {"model": m, "graph": "", "status": "cut", "opset": "", "seconds": "",
                                   "detail": "the time budget ended it"}
        self.stop_exports()
        self.write_exports()
        kept, lost = self.split_runs()
        self.write_provenance(kept, lost)
        self.log(f"done: {kept} runs in runs.csv, {lost} without a graph; {self.out}")
        return kept

    def run(self):
        os.makedirs(os.path.join(self.out, "graphs"), exist_ok=True)
        if not self.fake and not self.dry:
            import torch
            if not torch.cuda.is_available():
                raise SystemExit("campaign: no CUDA GPU is visible (torch.cuda.is_available() is False); "
                                 "use --dry-run to try it on the CPU")
        if self.dry:
            os.makedirs(os.path.join(self.out, "configs"), exist_ok=True)
            with open(os.path.join(self.out, "configs", "tiny-gpt2.json"), "w", encoding="utf-8") as f:
                json.dump(TINY_GPT2, f)
        dataset.write_machine(self.out, machine.describe("cpu" if self.dry or self.fake else "cuda"))
        todo = [t for t in models(self.dry) if self._buildable(t[0])]
        if self.fake:
            self.fake_exports(todo)
        else:
            self.start_exports(todo)
        self.log(f"campaign: {len(todo)} models, budget {self.clock.budget:.0f} s, out {self.out}"
                 + (" (fake backend)" if self.fake else " (dry run)" if self.dry else ""))
        reserve = 5 if self.dry else 15
        self.guarded("kernels", self.run_kernels,
                     min(self.clock.budget * self.args.kernel_share, self.clock.left() - reserve - 30))
        self.collect(min(self.clock.left() * 0.25, 90))
        pending = [m for m in self.futures if m not in self.exports]
        if pending:
            self.notes.append(f"exports still running when the models phase began: {', '.join(pending)}")
        failed = [m for m, e in self.exports.items() if e["status"] not in ("ok", "fake")]
        measured = [t for t in todo if t[0] not in failed]
        if failed:
            self.log(f"models: left out, their graph did not export: {', '.join(failed)}")
        self.guarded("models", self.run_models, measured, self.clock.left() - reserve)
        return self.finish()

    def guarded(self, phase, fn, *args):
        """Runs a phase; an error in it is recorded and the campaign goes on to the next."""
        try:
            fn(*args)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:
            text = (str(e).strip().splitlines() or [type(e).__name__])
            self.notes.append(f"{phase} phase failed: {type(e).__name__}: {text[-1]}")
            self.log(self.notes[-1])

    def _buildable(self, model):
        """Whether the package that builds ``model`` is usable here (the reason is noted when not)."""
        if self.fake or model in FACTORIES:
            return True
        from scaledl_profiler.capture import Captured
        from scaledl_profiler.deps import message, require, transformers_with_torch
        try:
            with Captured():  # transformers announces at import what it cannot do
                transformers_with_torch() if hf.is_hf(model) else require("torchvision")
            return True
        except (ImportError, RuntimeError) as e:
            self.notes.append(f"{model}: not measured: {message(e) if isinstance(e, ImportError) else e}")
            self.log(self.notes[-1])
            return False

def _parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=None, help="dataset folder (default campaign-<UTC date>-<time>)")
    p.add_argument("--budget-s", type=float, default=None,
                   help="hard time budget of the driver (default 450 s; 60 s with --dry-run)")
    p.add_argument("--dry-run", action="store_true", help="CPU, tiny models and shapes, seconds")
    p.add_argument("--fake", action="store_true", help="a stand-in backend: no PyTorch needed, no data")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--kernel-share", type=float, default=0.35, help="budget share of the kernel tables")
    p.add_argument("--export-workers", type=int, default=None, help="parallel exports (default by CPUs)")
    p.add_argument("--export-threads", type=int, default=2, help="CPU threads per export (default 2)")
    p.add_argument("--export-timeout-s", type=float, default=None, help="per export (default 150; dry 120)")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.budget_s is None:
        args.budget_s = 60.0 if args.dry_run or args.fake else 450.0
    if args.export_workers is None:
        args.export_workers = 2 if args.dry_run else max(1, min(6, (os.cpu_count() or 2) // 3))
    if args.export_timeout_s is None:
        args.export_timeout_s = 120.0 if args.dry_run else 150.0
    if args.out is None:
        args.out = "campaign-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    if args.budget_s <= 0 or not 0 <= args.kernel_share < 1:
        print("campaign: --budget-s must be positive and --kernel-share in [0, 1)", file=sys.stderr)
        return 2
    c = Campaign(args)
    cwd = os.getcwd()
    os.makedirs(c.out, exist_ok=True)
    os.chdir(c.out)  # model names may hold paths relative to the dataset folder (the dry run's configs/)

    def stop(signum, frame):
        c.stopped = f"signal {signum} at {c.clock.now():.0f} s"
        raise KeyboardInterrupt

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM,)} if hasattr(signal, "SIGTERM") else {}
    try:
        c.run()
        return 0
    except KeyboardInterrupt:
        c.stopped = c.stopped or f"interrupted at {c.clock.now():.0f} s"
        c.log(f"stopped ({c.stopped}); writing what was measured")
        c.finish()
        return 124
    finally:
        os.chdir(cwd)
        for s, h in old.items():
            signal.signal(s, h)


if __name__ == "__main__":
    sys.modules.setdefault("campaign", sys.modules[__name__])
    raise SystemExit(main())
