"""Measuring the runs of a plan, as the bundled datasets were measured.

* A **job** is the runs sharing a model, input size, world size and threads: one set of worker processes builds the
  model once and measures each of its runs (in a shuffled order). World size > 1 is PyTorch DDP: gloo on CPUs, NCCL
  on GPUs, one process per worker; times are the slowest rank's.
* A **training** iteration is ``zero_grad`` + forward + cross-entropy + backward (+ all-reduce) + SGD-with-momentum
  step; an **inference** iteration is an eval-mode, ``no_grad`` forward. Each run does ``warmup`` untimed
  iterations, then ``reps`` timed ones (fewer once they exceed ``cap_s``); on GPUs every iteration is synchronised.
* **Passes**: the jobs are measured ``passes`` times, each pass in a new random order over the whole plan, so a slow
  period of the machine spreads over many models instead of biasing one. A **reference** run (the plan's cheapest,
  or ``reference``) is measured before the first pass and after each, into ``drift.csv``: how much the machine
  itself changed during the campaign.
* **Resumable**: passes.csv is appended run by run; measuring into the same folder again skips what is there
  (the order is seeded, so it is the same order).
* runs.csv is rewritten after every job, so an interrupted campaign still leaves a dataset ``scaledl fit`` reads.
* The plan's graphs become part of the dataset: one outside ``out_dir`` is copied to ``out_dir/graphs/``
  (``scaledl`` reads only graphs inside a dataset's folder).
"""
import csv
import os
import random
import socket
import statistics
import time
import traceback

from scaledl_profiler import dataset, machine
from scaledl_profiler.planfile import adopt_graph, read_plan


def _timed(step, warmup, reps, cap_s, sync):
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t)
        if sum(times) > cap_s and len(times) >= 1:
            break
    return times


def _worker(rank, world, port, job, options, queue):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from scaledl_profiler.models import Spec, loss
    try:
        torch.set_num_threads(job["threads"])
        cuda = options["device"] == "cuda"
        dev = torch.device(f"cuda:{rank}" if cuda else "cpu")
        if world > 1:
            os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
            dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(rank)
        spec = Spec(job["model"], options["factories"])
        model = spec.build(job["resolution"]).to(dev)
        params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        sync = (lambda: torch.cuda.synchronize(dev)) if cuda else (lambda: None)
        out = []
        for run in job["runs"]:
            x = spec.example_input(run["batch"], job["resolution"]).to(dev)
            if run["phase"] == "train":
                model.train()
                net = nn.parallel.DistributedDataParallel(model) if world > 1 else model
                opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

                def step():
                    opt.zero_grad(set_to_none=True)
                    loss(net(x), gen).backward()
                    opt.step()
            else:
                model.eval()

                def step():
                    with torch.no_grad():
                        model(x)
            times = _timed(step, options["warmup"], options["reps"], options["cap_s"], sync)
            if world > 1:
                t = torch.tensor(times + [0.0] * (options["reps"] - len(times)), device=dev)
                n = torch.tensor([len(times)], device=dev)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                dist.all_reduce(n, op=dist.ReduceOp.MIN)
                times = t.tolist()[:int(n.item())]
                dist.barrier()
            out.append({"key": run["key"], "ms": [1000 * v for v in times], "params": params})
        if rank == 0:
            queue.put(("ok", out))
        if world > 1:
            dist.destroy_process_group()
    except Exception:  # reported by the parent, with the job named
        if rank == 0:
            queue.put(("error", traceback.format_exc()))


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_job(job, options, timeout_s=3600):
    """Measures one job in fresh worker processes; returns [{key, ms, params}] or raises RuntimeError."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, job["world_size"], port, job, options, queue))
             for r in range(job["world_size"])]
    for p in procs:
        p.start()
    status, payload = queue.get()
    for p in procs:
        p.join(timeout=60)
        if p.is_alive():
            p.kill()
    if status != "ok":
        raise RuntimeError(f"{job['model']} (size {job['resolution']}, {job['world_size']} workers, "
                           f"{job['threads']} threads) failed:\n{payload}")
    return payload


def _jobs(runs):
    by = {}
    for r in runs:
        by.setdefault(r.job(), []).append(r)
    return by


def measure(plan_path, out_dir, passes=2, warmup=2, reps=3, cap_s=8.0, seed=1, device="cpu", factories=None,
            reference=None, log=print, runner=run_job, check_idle=True):
    """Measures a plan into ``out_dir``; returns the number of runs in runs.csv. ``runner`` is for tests."""
    runs = read_plan(plan_path)
    os.makedirs(out_dir, exist_ok=True)
    desc = machine.describe(device)
    dataset.write_machine(out_dir, desc)
    if check_idle:
        busy = machine.busy_processes()
        if busy:
            log("warning: other processes are busy; figures from a busy machine are not data: " + "; ".join(busy))
    options = {"warmup": warmup, "reps": reps, "cap_s": cap_s, "device": device, "factories": factories or {}}
    graphs = {r.graph: adopt_graph(r.graph, plan_path, out_dir) for r in runs}
    by_key = {r.key(): r for r in runs}
    jobs = _jobs(runs)
    ref = _reference(runs, reference)
    store = dataset.Passes(out_dir)
    done = store.done()
    rng = random.Random(seed)
    total = passes * len(runs)
    finished = sum(1 for p in range(passes) for r in runs if (p, r.key()) in done)
    start = time.time()
    spent = 0.0
    measured = 0
    _drift(out_dir, ref, options, runner, "start", start, log)
    for p in range(passes):
        order = list(jobs)
        rng.shuffle(order)
        for jkey in order:
            todo = [r for r in jobs[jkey] if (p, r.key()) not in done]
            rng.shuffle(todo)
            if not todo:
                continue
            model, res, world, threads = jkey
            job = {"model": model, "resolution": res, "world_size": world, "threads": threads,
                   "runs": [{"key": r.key(), "batch": r.batch, "phase": r.phase} for r in todo]}
            t0 = time.time()
            results = runner(job, options)
            now = time.time()
            rows = []
            for res_ in results:
                r = by_key[tuple(res_["key"])]
                rows.append(dataset.pass_row(p, r, res_["ms"], res_["params"],
                                             graphs[r.graph], now - start))
            store.append(rows)
            dataset.merge(out_dir)
            finished += len(rows)
            measured += len(rows)
            spent += now - t0
            eta = (total - finished) * spent / max(measured, 1)
            log(f"pass {p + 1}/{passes}: {model}" + (f" r{res}" if res else "") + f" w{world} t{threads}: "
                f"{len(rows)} runs in {now - t0:.1f} s ({finished}/{total}, about {eta / 60:.1f} min left)")
        _drift(out_dir, ref, options, runner, f"after pass {p + 1}", start, log)
    return dataset.merge(out_dir) if os.path.exists(store.path) else 0


def _reference(runs, name):
    if name:
        hits = [r for r in runs if r.model == name]
        if not hits:
            raise ValueError(f"--reference {name}: no run of that model in the plan")
        return hits[0]
    priced = [r for r in runs if r.predicted_ms is not None]
    return min(priced, key=lambda r: r.predicted_ms) if priced else runs[0]


def _drift(out_dir, ref, options, runner, label, start, log):
    job = {"model": ref.model, "resolution": ref.resolution, "world_size": ref.world_size, "threads": ref.threads,
           "runs": [{"key": ref.key(), "batch": ref.batch, "phase": ref.phase}]}
    ms = statistics.median(runner(job, options)[0]["ms"])
    path = os.path.join(out_dir, "drift.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["when", "at_s", "model", "batch", "phase", "iter_ms_p50"])
        w.writerow([label, round(time.time() - start, 1), ref.model, ref.batch, ref.phase, round(ms, 3)])
    with open(path, newline="", encoding="utf-8") as f:
        first = float(next(csv.DictReader(f))["iter_ms_p50"])
    change = 100 * (ms / first - 1)
    log(f"reference {ref.model} batch {ref.batch} {ref.phase} {label}: {ms:.1f} ms ({change:+.1f} % since the first)")
    if abs(change) > 15:
        log("warning: the machine's speed changed by more than 15 % during the campaign (see drift.csv)")
    return ms
