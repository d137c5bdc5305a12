"""Measuring the runs of a plan, as the bundled datasets were measured.

* A **job** is the runs sharing a model, input size, world size and threads: one set of worker processes builds the
  model once and measures each of its runs (in a shuffled order). World size > 1 is PyTorch DDP: gloo on CPUs, NCCL
  on GPUs, one process per worker; times are the slowest rank's.
* A **training** iteration is ``zero_grad`` + forward + cross-entropy + backward (+ all-reduce) + SGD-with-momentum
  step; an **inference** iteration is an eval-mode, ``no_grad`` forward. Each run does ``warmup`` untimed
  iterations, then ``reps`` timed ones (fewer once they exceed ``cap_s``).
* **GPUs** (``device="cuda"``): every iteration is timed with a pair of CUDA events and ends synchronised; the run's
  ``memory_format`` (``channels_last``: ``model.to(memory_format=torch.channels_last)`` and a channels-last input; GPUs
  only, as scaledl predicts CPU runs in NCHW) lays out the feature maps.
  ``precision`` (see :mod:`scaledl_profiler.precision`) sets the TF32 switches, the autocast dtype and, for fp16
  training, a GradScaler. cuDNN autotuning (``torch.backends.cudnn.benchmark``) is off unless ``cudnn_benchmark``.
  A run that runs out of GPU memory is recorded in ``failed.csv`` and the job goes on with its other runs.
* **Passes**: the jobs are measured ``passes`` times, each pass in a new random order over the whole plan, so a slow
  period of the machine spreads over many models instead of biasing one. A **reference** run (the plan's cheapest,
  or ``reference``) is measured before the first pass and after each, into ``drift.csv``: how much the machine
  itself changed during the campaign.
* **Resumable**: passes.csv is appended run by run; measuring into the same folder again skips what is there
  (the order is seeded, so it is the same order).
* runs.csv is rewritten after every job, so an interrupted campaign still leaves a dataset ``scaledl fit`` reads.
* **Budget**: with ``max_seconds`` no job starts after that many seconds, and a one-worker job starts no run after
  it; the runs left are recorded in ``failed.csv`` with status ``skipped``, and the reference is measured once more
  (when anything was measured since it last was), so the drift check covers what was measured. With
  ``fill_budget`` the campaign goes on with further passes (new orders) until the budget is spent, so it takes
  about ``max_seconds`` however well the plan was priced (runs a further pass does not reach are not failures).
  With ``keep_going`` a job that fails (its model does not build) is recorded there too instead of ending the
  campaign.
* **Drift**: a reference more than :data:`DRIFT_LIMIT_PCT` % off its first measurement is a warning here;
  :func:`drift_verdict` gives it to callers that refuse such runs (``here``).
* The plan's graphs become part of the dataset: one in the plan's folder is copied to ``out_dir/graphs/``
  (``scaledl`` reads only graphs inside a dataset's folder); one outside the plan's and the dataset's folders is
  refused (:func:`scaledl_profiler.planfile.adopt_graph`).
* **Checks first**: the plan, the precisions, the packages the plan's models need and the ``out_dir`` folder are
  checked before anything is created.
"""
import filecmp
import os
import queue as queue_mod
import random
import socket
import statistics
import time
import traceback

from scaledl_profiler import backend as backends
from scaledl_profiler import dataset, machine
from scaledl_profiler.models import looks_like_an_image_model
from scaledl_profiler.planfile import PlanError, adopt_graph, read_plan
from scaledl_profiler.precision import CPU_MODEL_PRECISIONS

DRIFT_LIMIT_PCT = 15.0
FILL_MAX_PASSES = 10


def _timed(step, warmup, reps, cap_s, be):
    """``warmup`` untimed calls of ``step``, then up to ``reps`` timed ones (ms), stopping once they exceed
    ``cap_s`` seconds in all."""
    for _ in range(warmup):
        step()
    be.sync()
    times = []
    for _ in range(reps):
        times.append(be.time_ms(step))
        if sum(times) > 1000.0 * cap_s:
            break
    return times


class Loss:
    """Cross-entropy against random targets (see :func:`scaledl_profiler.models.loss`). On GPUs the targets are
    drawn once per output shape on the GPU's side, so no host-to-device copy falls in a timed iteration."""

    def __init__(self, generator, cache):
        self.generator = generator
        self.cache = cache
        self._target = None

    def __call__(self, output):
        import torch
        import torch.nn.functional as F
        from scaledl_profiler.models import loss
        if not self.cache:
            return loss(output, self.generator)
        if isinstance(output, (tuple, list)):
            output = output[0]
        if hasattr(output, "logits"):
            output = output.logits
        flat = output.reshape(-1, output.shape[-1])
        if self._target is None or self._target.shape[0] != flat.shape[0] or self._target.device != flat.device:
            self._target = torch.randint(0, output.shape[-1], (flat.shape[0],), generator=self.generator).to(
                flat.device)
        return F.cross_entropy(flat, self._target)


def _step(run, model, net, x, be, generator):
    """The iteration of one run as a function of no arguments."""
    import torch
    precision = run["precision"]
    be.apply(precision)
    if run["phase"] == "train":
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        scaler = be.scaler(precision, training=True)
        loss = Loss(generator, cache=be.kind != "cpu")

        def step():
            opt.zero_grad(set_to_none=True)
            with be.autocast(precision):
                value = loss(net(x))
            if scaler is not None:
                scaler.scale(value).backward()
                scaler.step(opt)
                scaler.update()
            else:
                value.backward()
                opt.step()
        return step
    model.eval()

    def step():
        with torch.no_grad(), be.autocast(precision):
            model(x)
    return step


def _worker(rank, world, port, job, options, queue):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from scaledl_profiler.models import Spec
    try:
        torch.set_num_threads(job["threads"])
        be = backends.make(torch, options["device"], rank)
        if be.kind == "cuda":
            torch.backends.cudnn.benchmark = bool(options.get("cudnn_benchmark", False))
        if world > 1:
            os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
            dist.init_process_group(backends.process_group(be.kind), rank=rank, world_size=world)
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(rank)
        spec = Spec(job["model"], options["factories"])
        model = spec.build(job["resolution"]).to(be.device)
        channels_last = job.get("memory_format") == "channels_last"
        if channels_last:
            model = model.to(memory_format=torch.channels_last)  # the convolutions' weights; nothing else moves
        params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        out = []
        net = model
        if world > 1:
            net = nn.parallel.DistributedDataParallel(model, device_ids=[rank] if be.kind == "cuda" else None)
        for run in job["runs"]:
            if options.get("deadline") is not None and time.time() > options["deadline"] and world == 1:
                out.append({"key": run["key"], "error": "time budget", "status": "skipped"})
                continue
            x = spec.example_input(run["batch"], job["resolution"]).to(be.device)
            if channels_last and x.dim() == 4:
                x = x.contiguous(memory_format=torch.channels_last)
            try:
                step = _step(run, model, net if run["phase"] == "train" else model, x, be, gen)
                times = _timed(step, options["warmup"], options["reps"], options["cap_s"], be)
            except Exception as e:  # one run's failure (out of memory, an operator without this dtype)
                if world > 1:
                    raise
                model.zero_grad(set_to_none=True)
                step = None
                be.release()
                status = "oom" if be.is_oom(e) else "error"
                text = "out of memory" if status == "oom" else (str(e).strip().splitlines() or [type(e).__name__])[0]
                out.append({"key": run["key"], "error": text[:300], "status": status})
                continue
            if world > 1:
                t = torch.tensor(times + [0.0] * (options["reps"] - len(times)), device=be.device)
                n = torch.tensor([len(times)], device=be.device)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                dist.all_reduce(n, op=dist.ReduceOp.MIN)
                times = t.tolist()[:int(n.item())]
                dist.barrier()
            # CPU rows leave device empty: scaledl then takes the machine from machine.json (a device name that
            # differs from machine.json's "name" would make scaledl describe the row's machine from the name alone).
            out.append({"key": run["key"], "ms": list(times), "params": params,
                        "device": be.name if be.kind == "cuda" else ""})
        if rank == 0:
            queue.put(("ok", out))
        if world > 1:
            dist.destroy_process_group()
        del model, net
        be.release()
    except Exception:  # reported by the parent, with the job named
        if rank == 0:
            queue.put(("error", traceback.format_exc()))


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _job_name(job):
    return (f"{job['model']} (size {job['resolution']}, {job['world_size']} workers, {job['threads']} threads)")


def run_job(job, options, timeout_s=None):
    """Measures one job in fresh worker processes; returns [{key, ms, params, device} or {key, error, status}] or
    raises RuntimeError (the job failed, or took longer than ``timeout_s``, default ``options["job_timeout_s"]``)."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, job["world_size"], port, job, options, q))
             for r in range(job["world_size"])]
    for p in procs:
        p.start()
    timeout_s = timeout_s or options.get("job_timeout_s", 3600)
    try:
        status, payload = q.get(timeout=timeout_s)
    except queue_mod.Empty:
        status, payload = "error", f"no result after {timeout_s:.0f} s (workers stopped)"
    for p in procs:
        p.join(timeout=60)
        if p.is_alive():
            p.kill()
    if status != "ok":
        raise RuntimeError(f"{_job_name(job)} failed:\n{payload}")
    return payload


class _ListQueue:
    def __init__(self):
        self.items = []

    def put(self, item):
        self.items.append(item)


def run_job_inline(job, options):
    """Measures a one-worker job in this process (no start-up of a fresh interpreter: faster on GPUs, but a crash of
    PyTorch ends the campaign); jobs of several workers go to :func:`run_job`."""
    if job["world_size"] > 1:
        return run_job(job, options)
    q = _ListQueue()
    _worker(0, 1, 0, job, options, q)
    status, payload = q.items[0]
    if status != "ok":
        raise RuntimeError(f"{_job_name(job)} failed:\n{payload}")
    return payload


def _jobs(runs):
    by = {}
    for r in runs:
        by.setdefault(r.job(), []).append(r)
    return by


def check_device_precisions(device, precisions, where="--precision"):
    """ValueError for a precision the device cannot measure (tf32/fp16 on CPUs)."""
    if device not in backends.DEVICES:
        raise ValueError(f"--device must be one of {', '.join(backends.DEVICES)}, got '{device}'")
    if device == "cpu":
        bad = [p for p in precisions if p not in CPU_MODEL_PRECISIONS]
        if bad:
            raise ValueError(f"{where} {bad[0]} needs --device cuda (on CPUs only "
                             f"{' and '.join(CPU_MODEL_PRECISIONS)} mean something)")


def check_device_memory_format(device, memory_format, where="--memory-format"):
    """ValueError for a layout the device's runs cannot have (channels-last on CPUs, which scaledl predicts in
    NCHW)."""
    if device != "cuda" and memory_format != "nchw":
        raise ValueError(f"{where} {memory_format} needs --device cuda (scaledl predicts CPU runs as they measured "
                         "them, in NCHW)")


def _fail_row(p, r, status, error, at_s):
    return {"pass": p, "model": r.model, "resolution": "" if r.resolution is None else r.resolution,
            "batch": r.batch, "world_size": r.world_size, "threads": r.threads, "phase": r.phase,
            "precision": r.precision, "status": status, "error": error, "at_s": round(at_s, 1)}


def check_dependencies(runs, factories=None):
    """:class:`~scaledl_profiler.deps.MissingDependency` (one line, naming the package and how to install it) for a
    package the plan's models need: PyTorch always; torchvision, timm or transformers by the models' names."""
    from scaledl_profiler import deps
    from scaledl_profiler.models import Spec
    deps.require("torch")
    for model in sorted({r.model for r in runs}):
        spec = Spec(model, factories)
        if spec.kind == "hf":
            deps.transformers_with_torch()
        elif spec.kind == "vision" and model.startswith("tv:"):
            deps.require("torchvision", f"it builds torchvision model '{model}'")
        elif spec.kind == "vision" and model.startswith("timm:"):
            deps.require("timm")
        elif spec.kind == "vision":
            try:
                deps.require("torchvision")
            except ImportError:
                deps.require("timm", f"'{model}' needs torchvision or timm (Debian: apt install "
                                     "python3-torchvision)")


def measure(plan_path, out_dir, passes=2, warmup=2, reps=3, cap_s=8.0, seed=1, device="cpu", factories=None,
            reference=None, log=print, runner=run_job, check_idle=True, precision="fp32", keep_going=False,
            max_seconds=None, cudnn_benchmark=False, fill_budget=False, clock=time.time, memory_format="nchw"):
    """Measures a plan into ``out_dir``; returns the number of runs in runs.csv. ``runner`` is :func:`run_job`
    (fresh processes per job), :func:`run_job_inline`, or a stand-in in tests (with ``clock`` a stand-in for
    ``time.time``: the budget's deadline is on that clock)."""
    runs = read_plan(plan_path, default_precision=precision, default_memory_format=memory_format)
    check_device_precisions(device, [precision])
    check_device_memory_format(device, memory_format)
    for r in runs:
        try:
            check_device_precisions(device, [r.precision], "precision")
            check_device_memory_format(device, r.memory_format, "memory_format")
        except ValueError as e:
            raise ValueError(f"{plan_path}:{r.line}: {e}") from None
        if r.resolution is None and looks_like_an_image_model(r.model, factories):
            raise PlanError(f"{plan_path}:{r.line}: {r.model} is an image model: its row needs a resolution (the "
                            "input size)")
    dataset.check_folder(out_dir, "--out")
    copies = {}
    for r in runs:
        name = adopt_graph(r.graph, plan_path, out_dir, r.line, dry_run=True)
        _one_graph_a_name(name, r, plan_path, out_dir, copies)
    ref = _reference(runs, reference)
    ref = _resumed_reference(out_dir, runs, ref, reference)
    if runner in (run_job, run_job_inline):
        check_dependencies(runs, factories)
    # every check above creates nothing: the dataset folder is made only for a plan that can be measured
    dataset.make_folder(out_dir, "--out")
    desc = machine.describe(device)
    dataset.write_machine(out_dir, desc)
    dataset.repair(out_dir, log)
    if check_idle:
        busy = machine.busy_processes()
        if busy:
            log("warning: other processes are busy; figures from a busy machine are not data: " + "; ".join(busy))
    start = clock()
    options = {"warmup": warmup, "reps": reps, "cap_s": cap_s, "device": device, "factories": factories or {},
               "cudnn_benchmark": cudnn_benchmark,
               "deadline": None if max_seconds is None else start + max_seconds}
    graphs = {}
    for r in runs:
        if r.graph not in graphs:
            graphs[r.graph] = adopt_graph(r.graph, plan_path, out_dir, r.line)
    by_key = {r.key(): r for r in runs}
    jobs = _jobs(runs)
    store = dataset.Passes(out_dir)
    done = store.done()
    rng = random.Random(seed)
    total = passes * len(runs)
    finished = sum(1 for p in range(passes) for r in runs if (p, r.key()) in done)
    spent = 0.0
    measured = 0

    def over_budget():
        return max_seconds is not None and clock() - start > max_seconds

    def more_passes(p):
        if p < passes:
            return True
        return fill_budget and max_seconds is not None and p < max(passes, FILL_MAX_PASSES) and not over_budget()

    _drift(out_dir, ref, options, runner, "start", start, log, keep_going, clock)
    since_reference = 0
    budget_closed = False
    p = 0
    while more_passes(p):
        extra = p >= passes
        where = f"extra pass {p + 1} (budget left)" if extra else f"pass {p + 1}/{passes}"
        order = list(jobs)
        rng.shuffle(order)
        for jkey in order:
            todo = [r for r in jobs[jkey] if (p, r.key()) not in done]
            rng.shuffle(todo)
            if not todo:
                continue
            if over_budget():
                if not extra:
                    dataset.append_failures(out_dir, [_fail_row(p, r, "skipped", "time budget", clock() - start)
                                                      for r in todo], log)
                    finished += len(todo)
                continue
            model, res, world, threads, fmt = jkey
            job = {"model": model, "resolution": res, "world_size": world, "threads": threads,
                   "memory_format": fmt,
                   "runs": [{"key": r.key(), "batch": r.batch, "phase": r.phase, "precision": r.precision}
                            for r in todo]}
            t0 = clock()
            try:
                results = runner(job, options)
            except RuntimeError as e:
                if not keep_going:
                    raise
                text = str(e).strip().splitlines()
                log(f"{where}: {model}: failed, recorded in failed.csv ({text[-1] if text else e})")
                dataset.append_failures(out_dir, [_fail_row(p, r, "error", text[-1][:300] if text else "failed",
                                                            clock() - start) for r in todo], log)
                finished += len(todo)
                continue
            now = clock()
            rows, failures = [], []
            for res_ in results:
                r = by_key[tuple(res_["key"])]
                if "error" in res_:
                    if not (extra and res_.get("status") == "skipped"):
                        failures.append(_fail_row(p, r, res_.get("status", "error"), res_["error"], now - start))
                    continue
                rows.append(dataset.pass_row(p, r, res_["ms"], res_["params"],
                                             graphs[r.graph], now - start,
                                             device=res_.get("device", "")))
            if rows:
                store.append(rows, log)
                dataset.merge(out_dir)
                since_reference += len(rows)
            if failures:
                dataset.append_failures(out_dir, failures, log)
                failed = [f for f in failures if f["status"] != "skipped"]
                if failed:
                    log(f"  {len(failed)} run(s) of {model} failed (failed.csv): {failed[0]['error']}")
                if len(failed) < len(failures):
                    log(f"  {len(failures) - len(failed)} run(s) of {model} not started: the time budget is spent "
                        "(failed.csv, status skipped)")
            finished += len(results)
            measured += len(results)
            spent += now - t0
            eta = max(total - finished, 0) * spent / max(measured, 1)
            if max_seconds is not None:
                budget_left = max(0.0, max_seconds - (now - start))
                eta = budget_left if extra else min(eta, budget_left)
            log(f"{where}: {model}" + (f" r{res}" if res else "") + f" w{world} t{threads}: "
                f"{len(rows)} runs in {now - t0:.1f} s ({min(finished, total)}/{total}, about {eta / 60:.1f} min "
                "left)")
        if over_budget():
            if not budget_closed:
                budget_closed = True
                log(f"time budget of {max_seconds:.0f} s spent in pass {p + 1}"
                    + ("" if extra else ": runs left are in failed.csv (status skipped)"))
                if since_reference:
                    _drift(out_dir, ref, options, runner, f"after pass {p + 1}", start, log, keep_going, clock)
                    since_reference = 0
        elif since_reference:
            _drift(out_dir, ref, options, runner, f"after pass {p + 1}", start, log, keep_going, clock)
            since_reference = 0
        p += 1
    return dataset.merge(out_dir) if os.path.exists(store.path) else 0


def _one_graph_a_name(name, run, plan_path, out_dir, copies):
    """Refuses, before anything is written, two different graphs of a plan that would be copied to one name in the
    dataset's ``graphs/`` folder (``a/m.onnx`` and ``b/m.onnx``); ``copies`` maps the names seen to their source."""
    if not run.graph or not name.startswith("graphs/"):
        return
    source = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(plan_path)), run.graph))
    if not os.path.isfile(source):
        return
    seen = copies.setdefault(name, (source, run))
    if seen[0] != source and not filecmp.cmp(seen[0], source, shallow=False):
        raise PlanError(f"{plan_path}:{run.line}: graph {run.graph} would be copied to "
                        f"{os.path.join(out_dir, name)}, as line {seen[1].line}'s {seen[1].graph} is: two graphs "
                        "of one name (rename one)")


def _reference(runs, name):
    if name:
        hits = [r for r in runs if r.model == name]
        if not hits:
            raise ValueError(f"--reference {name}: no run of that model in the plan")
        return hits[0]
    priced = [r for r in runs if r.predicted_ms is not None]
    return min(priced, key=lambda r: r.predicted_ms) if priced else runs[0]


def _resumed_reference(out_dir, runs, ref, asked):
    """The reference of a resumed campaign: the one its drift.csv measured first (its speed is what the drift
    compares), where the plan still has that run and no other was asked for; a different one is refused."""
    rows = read_drift(out_dir) if os.path.isdir(out_dir) else []
    if not rows:
        return ref
    line, first = rows[0]

    def same(r):
        # model, batch and phase always; the other columns where the folder's drift.csv has them
        run = _drift_run(r)
        return all(run[k] == str(first.get(k)) for k in DRIFT_RUN if k in DRIFT_RUN[:3] or first.get(k, "") != "")
    if same(ref):
        return ref
    hits = [r for r in runs if same(r) and (not asked or r.model == asked)]
    if hits:
        return hits[0]
    raise ValueError(f"{os.path.join(out_dir, 'drift.csv')}:{line}: this folder's drift reference is "
                     f"{first.get('model')} batch {first.get('batch')} {first.get('phase')}, the run now chosen "
                     f"{ref.model} batch {ref.batch} {ref.phase}: their speeds do not compare; resume with "
                     f"--reference {first.get('model')} (a plan holding that run), or measure into a new folder")


DRIFT_FIELDS = ["when", "at_s", "model", "batch", "phase", "iter_ms_p50", "precision", "resolution", "world_size",
                "threads", "memory_format"]
#: The columns of drift.csv that name its reference run (an older file has the first four).
DRIFT_RUN = ("model", "batch", "phase", "precision", "resolution", "world_size", "threads", "memory_format")


def _drift_run(run):
    """A plan run's :data:`DRIFT_RUN` columns as drift.csv writes them."""
    return {"model": run.model, "batch": str(run.batch), "phase": run.phase, "precision": run.precision,
            "resolution": "" if run.resolution is None else str(run.resolution), "world_size": str(run.world_size),
            "threads": str(run.threads), "memory_format": run.memory_format}


def read_drift(out_dir):
    """The rows of ``out_dir/drift.csv`` as (line, row), each with a checked ``iter_ms_p50`` (ValueError naming the
    file and line for a damaged one); a torn last line is left out."""
    path = os.path.join(out_dir, "drift.csv")
    header, rows = dataset.read_table(path)
    if header is None:
        return []
    if "iter_ms_p50" not in header or "when" not in header:
        raise ValueError(f"{path}:1: no iter_ms_p50 or when column: not a drift.csv; measure into a new folder")
    out = []
    for line, r in rows:
        try:
            ms = float(r["iter_ms_p50"])
        except ValueError:
            ms = -1.0
        if not (0 <= ms < float("inf")):
            raise ValueError(f"{path}:{line}: iter_ms_p50 is not a time >= 0: '{r['iter_ms_p50']}': a damaged line "
                             "(delete it)")
        out.append((line, {**r, "iter_ms_p50": ms}))
    return out


def drift_verdict(out_dir, limit_pct=DRIFT_LIMIT_PCT):
    """None when every reference measurement in drift.csv is within ``limit_pct`` % of the first; else (change %,
    row) of the one furthest off: the machine's speed changed while it measured, so its runs are not data."""
    rows = [r for _, r in read_drift(out_dir)]
    if rows:
        # only the first's reference run compares with it (a folder written before the reference was kept)
        rows = [r for r in rows if all(r.get(k) == rows[0].get(k) for k in DRIFT_RUN)]
    if len(rows) < 2:
        return None
    first = rows[0]["iter_ms_p50"]
    if first <= 0:
        return None
    change, worst = max(((100 * (r["iter_ms_p50"] / first - 1), r) for r in rows[1:]), key=lambda x: abs(x[0]))
    return (change, worst) if abs(change) > limit_pct else None


def _drift(out_dir, ref, options, runner, label, start, log, keep_going=False, clock=time.time):
    job = {"model": ref.model, "resolution": ref.resolution, "world_size": ref.world_size, "threads": ref.threads,
           "memory_format": ref.memory_format,
           "runs": [{"key": ref.key(), "batch": ref.batch, "phase": ref.phase, "precision": ref.precision}]}
    try:
        result = runner(job, dict(options, deadline=None))[0]  # the closing reference comes after the deadline
    except RuntimeError:
        if not keep_going:
            raise
        log(f"reference {ref.model} {label}: failed; no drift row")
        return None
    if "error" in result:
        log(f"reference {ref.model} {label}: {result['error']}; no drift row")
        return None
    ms = statistics.median(result["ms"])
    path = os.path.join(out_dir, "drift.csv")
    dataset.repair_tail(path, log)
    header, _ = dataset.read_table(path)
    fields = header or DRIFT_FIELDS
    row = {"when": label, "at_s": round(clock() - start, 1), "iter_ms_p50": round(ms, 3), **_drift_run(ref)}
    dataset.append_rows(path, fields, [{k: row.get(k, "") for k in fields}], repaired=True)
    first = read_drift(out_dir)[0][1]["iter_ms_p50"]
    change = 100 * (ms / first - 1) if first > 0 else 0.0
    log(f"reference {ref.model} batch {ref.batch} {ref.phase} {label}: {ms:.1f} ms ({change:+.1f} % since the first)")
    if abs(change) > DRIFT_LIMIT_PCT:
        log(f"warning: the machine's speed changed by more than {DRIFT_LIMIT_PCT:.0f} % during the campaign (see "
            "drift.csv)")
    return ms
