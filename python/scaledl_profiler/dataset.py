"""Writing scaledl's dataset format: ``passes.csv`` (one row per pass and run, appended as measured),
``runs.csv`` (per run: the median over its passes) and ``machine.json``.

``runs.csv`` columns: model, family, resolution, batch, world_size, threads, phase, iter_ms_p50 (median over passes
of each pass's median iteration), iter_ms_min, iter_ms_max (over all timed iterations), reps (timed iterations in
all), passes, params, graph, precision (fp32, tf32, fp16 or bf16), device (``torch.cuda.get_device_name()`` on GPUs,
which is also machine.json's ``name``; empty on CPUs, where scaledl takes the machine from machine.json). This is
what ``scaledl fit --data DIR`` reads. ``passes.csv`` has the same columns per pass (``pass``, ``at_s`` instead of
``passes``); a passes.csv written before the precision and device columns existed is upgraded in place (its rows
were FP32, device unknown).
"""
import csv
import json
import os
import statistics

PASS_FIELDS = ["pass", "model", "family", "resolution", "batch", "world_size", "threads", "phase", "iter_ms_p50",
               "iter_ms_min", "iter_ms_max", "reps", "params", "graph", "at_s", "precision", "device"]
RUN_FIELDS = ["model", "family", "resolution", "batch", "world_size", "threads", "phase", "iter_ms_p50",
              "iter_ms_min", "iter_ms_max", "reps", "passes", "params", "graph", "precision", "device"]
KEY = ("model", "resolution", "batch", "world_size", "threads", "phase", "precision")
FAIL_FIELDS = ["pass", "model", "resolution", "batch", "world_size", "threads", "phase", "precision", "status",
               "error", "at_s"]


def pass_row(pass_index, run, times_ms, params, graph, at_s, device=""):
    """One passes.csv row from a run's timed iterations (ms)."""
    ms = sorted(times_ms)
    if not ms:
        raise ValueError("no timed iterations")
    return {"pass": pass_index, "model": run.model, "family": run.family,
            "resolution": "" if run.resolution is None else run.resolution, "batch": run.batch,
            "world_size": run.world_size, "threads": run.threads, "phase": run.phase,
            "iter_ms_p50": round(statistics.median(ms), 3), "iter_ms_min": round(ms[0], 3),
            "iter_ms_max": round(ms[-1], 3), "reps": len(ms), "params": params, "graph": graph,
            "at_s": round(at_s, 1), "precision": run.precision, "device": device}


class Passes:
    """passes.csv in a dataset folder: appended to row by row, so an interrupted campaign resumes."""

    def __init__(self, out_dir):
        self.path = os.path.join(out_dir, "passes.csv")

    def done(self):
        """The (pass, run key) pairs already measured."""
        return {(int(r["pass"]), tuple(r[k] for k in KEY)) for r in self.rows()}

    def _upgrade(self):
        """Rewrites a passes.csv of an older column set with today's columns (FP32, device unknown)."""
        with open(self.path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames == PASS_FIELDS:
                return
            rows = list(reader)
        tmp = self.path + ".tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=PASS_FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({**{k: "" for k in PASS_FIELDS}, "precision": "fp32", **{k: v for k, v in r.items() if v}})
        os.replace(tmp, self.path)

    def append(self, rows):
        new = not os.path.exists(self.path)
        if not new:
            self._upgrade()
        with open(self.path, "a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=PASS_FIELDS)
            if new:
                w.writeheader()
            for r in rows:
                w.writerow(r)

    def rows(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path, newline="", encoding="utf-8") as f:
            return [{**r, "precision": r.get("precision") or "fp32", "device": r.get("device") or ""}
                    for r in csv.DictReader(f)]


def append_failures(out_dir, rows):
    """Appends to ``failed.csv`` the runs that failed (``status`` error or out-of-memory) or were skipped
    (``status`` skipped: the time budget ran out); each row names the run, the pass and why."""
    path = os.path.join(out_dir, "failed.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FAIL_FIELDS)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow(r)


def merge(out_dir):
    """Writes runs.csv from passes.csv: one row per run, the median over its passes. Returns the row count."""
    rows = Passes(out_dir).rows()
    by = {}
    for r in rows:
        by.setdefault(tuple(r[k] for k in KEY), []).append(r)
    tmp = os.path.join(out_dir, "runs.csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=RUN_FIELDS)
        w.writeheader()
        for key in sorted(by, key=lambda k: (k[0], k[1], int(k[2]), int(k[3]), int(k[4]), k[5], k[6])):
            rs = by[key]
            w.writerow(dict(zip(KEY, key), family=rs[0].get("family", ""),
                            iter_ms_p50=round(statistics.median(float(r["iter_ms_p50"]) for r in rs), 3),
                            iter_ms_min=min(float(r["iter_ms_min"]) for r in rs),
                            iter_ms_max=max(float(r["iter_ms_max"]) for r in rs),
                            reps=sum(int(r["reps"]) for r in rs), passes=len(rs), params=rs[0]["params"],
                            graph=rs[0]["graph"], device=rs[-1]["device"]))
    os.replace(tmp, os.path.join(out_dir, "runs.csv"))
    return len(by)


def write_machine(out_dir, description):
    """Writes machine.json; refuses to mix machines: an existing file must describe the same CPU and core count."""
    path = os.path.join(out_dir, "machine.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        for k in ("name", "cpus", "gpu"):
            if old.get(k) != description.get(k):
                raise ValueError(f"{path} describes another machine ({k}: {old.get(k)!r}, this one: "
                                 f"{description.get(k)!r}); measure into a new folder")
        return path
    with open(path, "w", encoding="utf-8") as f:
        json.dump(description, f, indent=1, sort_keys=True)
        f.write("\n")
    return path


def read_machine_name(out_dir):
    """The ``name`` of ``out_dir/machine.json``, or None when there is none."""
    path = os.path.join(out_dir, "machine.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f).get("name")
