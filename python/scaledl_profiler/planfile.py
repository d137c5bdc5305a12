"""Reading the plan a ``scaledl plan --out plan.csv`` wrote (or any table with its columns).

Columns: ``model``, ``batch``, ``world_size``, ``threads``, ``phase`` (required); ``resolution`` (input size:
image side in pixels, or sequence length), ``family``, ``graph`` (relative to the plan's folder), ``predicted_ms``,
``cost_s``, ``precision`` (fp32, tf32, fp16 or bf16; rows without one take ``measure --precision``) (optional).
Every problem is a :class:`PlanError` naming the file and line.
"""
import csv
import filecmp
import os
import shutil
from dataclasses import dataclass, field
from typing import List, Optional

from scaledl_profiler.precision import PRECISIONS

REQUIRED = ("model", "batch", "world_size", "threads", "phase")
PHASES = ("train", "infer")


class PlanError(ValueError):
    """A malformed plan file; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Run:
    """One planned run: a model at an input size, batch, phase, threads and world size."""
    model: str
    batch: int
    world_size: int
    threads: int
    phase: str
    resolution: Optional[int] = None
    family: str = ""
    graph: str = ""
    predicted_ms: Optional[float] = None
    line: int = field(default=0, compare=False)
    precision: str = "fp32"

    def key(self):
        """Identity of the run in passes.csv and runs.csv."""
        return (self.model, "" if self.resolution is None else str(self.resolution), str(self.batch),
                str(self.world_size), str(self.threads), self.phase, self.precision)

    def job(self):
        """Runs with the same job share one set of worker processes (one model build); a job's runs may differ in
        batch, phase and precision."""
        return (self.model, self.resolution, self.world_size, self.threads)


def _positive(path, line, row, col):
    text = (row.get(col) or "").strip()
    try:
        v = int(text)
    except ValueError:
        raise PlanError(f"{path}:{line}: {col} must be a positive integer, got '{text}'") from None
    if v < 1:
        raise PlanError(f"{path}:{line}: {col} must be a positive integer, got '{text}'")
    return v


def read_plan(path, default_precision="fp32") -> List[Run]:
    """Reads a plan; graph paths are returned relative to the plan's folder, as written. Rows without a
    ``precision`` take ``default_precision``."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise PlanError(f"{path}:1: empty file: no header line")
        header = [h.strip() for h in reader.fieldnames]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise PlanError(f"{path}:1: missing column(s) {', '.join(missing)} (a plan has {', '.join(REQUIRED)})")
        runs = []
        for i, raw in enumerate(reader):
            line = i + 2
            row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
            if not row.get("model"):
                raise PlanError(f"{path}:{line}: empty model name")
            phase = row["phase"].lower()
            if phase not in PHASES:
                raise PlanError(f"{path}:{line}: phase must be train or infer, got '{row['phase']}'")
            res = _positive(path, line, row, "resolution") if row.get("resolution") else None
            pred = None
            if row.get("predicted_ms"):
                try:
                    pred = float(row["predicted_ms"])
                except ValueError:
                    raise PlanError(f"{path}:{line}: predicted_ms is not a number: '{row['predicted_ms']}'") from None
            precision = (row.get("precision") or default_precision).lower()
            if precision not in PRECISIONS:
                raise PlanError(f"{path}:{line}: precision must be one of {', '.join(PRECISIONS)}, got "
                                f"'{row.get('precision')}'")
            runs.append(Run(model=row["model"], batch=_positive(path, line, row, "batch"),
                            world_size=_positive(path, line, row, "world_size"),
                            threads=_positive(path, line, row, "threads"), phase=phase, resolution=res,
                            family=row.get("family", ""), graph=row.get("graph", ""), predicted_ms=pred, line=line,
                            precision=precision))
    if not runs:
        raise PlanError(f"{path}:2: no runs in the plan")
    seen = {}
    for r in runs:
        if r.key() in seen:
            raise PlanError(f"{path}:{r.line}: the same run as line {seen[r.key()]}")
        seen[r.key()] = r.line
    return runs


def rebase_graph(graph, plan_path, out_dir):
    """A plan's graph path (relative to the plan) made relative to the dataset folder ``out_dir``."""
    if not graph:
        return ""
    absolute = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(plan_path)), graph))
    return os.path.relpath(absolute, os.path.abspath(out_dir)).replace(os.sep, "/")


def adopt_graph(graph, plan_path, out_dir):
    """A plan's graph as part of the dataset folder ``out_dir``, named relative to it: a graph already inside the
    folder keeps its path; one outside it is copied to ``out_dir/graphs/`` (scaledl reads only graphs inside a
    dataset's folder, so a dataset can be moved, and a ``runs.csv`` from elsewhere cannot name any file). A graph that
    does not exist (yet) keeps its rebased path, which ``scaledl fit`` reports."""
    rel = rebase_graph(graph, plan_path, out_dir)
    if not rel or not (rel == ".." or rel.startswith("../") or os.path.isabs(rel)):
        return rel
    source = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(plan_path)), graph))
    if not os.path.isfile(source):
        return rel
    name = "graphs/" + os.path.basename(source)
    target = os.path.join(out_dir, name)
    if os.path.exists(target):
        if not filecmp.cmp(source, target, shallow=False):
            raise PlanError(f"{plan_path}: graph {graph} would be copied to {target}, which holds another graph "
                            "of that name")
        return name
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(source, target + ".tmp")
    os.replace(target + ".tmp", target)
    return name
