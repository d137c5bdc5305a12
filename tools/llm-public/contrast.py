#!/usr/bin/env python3
"""Within-cluster contrasts of held-out errors: is a kind of job predicted too fast or too slow against the other
jobs of its own cluster?

A residual that follows a column (context parallelism, a precision, a micro-batch size) across clusters can be a
cluster's level in disguise: one system and release may run every job slower than the model says. This script
compares, inside each cluster (system and release), the mean signed error of the jobs a condition selects with that
of the cluster's other jobs, so that each cluster's own level cancels, and prints the per-cluster differences, their
mean and in how many clusters the difference has the mean's sign.

    java -jar scaledl-examples/target/scaledl.jar evaluate-clusters --each-cluster --out held.csv
    python3 tools/llm-public/contrast.py --held held.csv --split family --where 'context>1' --dense

``--held`` is ``evaluate-clusters --out``'s table (``split``, ``id``, ``system``, ``release``, ``error``: predicted
over measured, minus one), ``--runs`` the published runs (default ``datasets/gpu/llm-public/runs.csv``) whose columns
``--where`` reads, ``--models`` the architectures (default ``models.csv`` beside the runs) that ``--dense`` reads
(``arch_type`` not ``moe``: jobs without routed experts); ``--only`` keeps the jobs a condition holds for (a model,
a system) before comparing. ``--where`` and ``--only`` take ``column OP value`` with OP one of
``== != >= <= > <`` (numbers compared as numbers, else text); repeat either to require every condition. Standard library
only; exit 1 with the file and line on bad input, 2 on bad options.
"""
import argparse
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
CONDITION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=|>=|<=|>|<)\s*(.*?)\s*$")


class BadInput(Exception):
    """Bad input data: the message names the file and line."""


def condition(text):
    """``column OP value`` as (column, op, value); argparse reports a ValueError as a usage error."""
    m = CONDITION.match(text)
    if not m:
        raise argparse.ArgumentTypeError("%r is not 'column OP value' (OP one of == != >= <= > <)" % text)
    return m.group(1), m.group(2), m.group(3)


def holds(value, op, wanted):
    try:
        a, b = float(value), float(wanted)
    except ValueError:
        a, b = value, wanted
    return {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op] \
        if type(a) is type(b) else op == "!="


def read_table(path, needed):
    """The rows of a CSV file (comment lines starting with '#' skipped) with their line numbers."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            lines = [(n, line) for n, line in enumerate(f, 1) if not line.startswith("#")]
    except OSError as e:
        raise BadInput("%s: cannot read: %s" % (path, e.strerror or e))
    except UnicodeDecodeError:
        raise BadInput("%s: not UTF-8 text" % path)
    if not lines:
        raise BadInput("%s: empty" % path)
    reader = csv.DictReader([line for _, line in lines])
    missing = [c for c in needed if c not in (reader.fieldnames or [])]
    if missing:
        raise BadInput("%s: no column %s" % (path, ", ".join(missing)))
    rows = []
    for (n, _), r in zip(lines[1:], reader):
        if None in r or any(v is None for v in r.values()):
            raise BadInput("%s:%d: %d fields where the header has %d" % (
                path, n, len(r) - (1 if None in r else 0) + len(r.get(None) or []), len(reader.fieldnames)))
        rows.append((n, r))
    return rows


def contrast(held, runs, split, where, dense_keys=None, held_path="held", only=()):
    """Per cluster (sorted): (cluster, errors of the other jobs, errors of the selected jobs), clusters with both."""
    clusters = {}
    for n, h in held:
        if h["split"] != split:
            continue
        r = runs.get(h["id"])
        if r is None:
            raise BadInput("%s:%d: run %r is not in the runs table" % (held_path, n, h["id"]))
        if dense_keys is not None and r.get("model_key") not in dense_keys:
            continue
        for column, _, _ in list(where) + list(only):
            if column not in r:
                raise BadInput("--where or --only names %r, which is no column of the runs table" % column)
        if not all(holds(r[c], op, v) for c, op, v in only):
            continue
        try:
            error = float(h["error"])
        except ValueError:
            raise BadInput("%s:%d: error %r is not a number" % (held_path, n, h["error"]))
        selected = all(holds(r[c], op, v) for c, op, v in where)
        key = "%s %s" % (h["system"], h["release"])
        clusters.setdefault(key, ([], []))[1 if selected else 0].append(error)
    return [(k, a, b) for k, (a, b) in sorted(clusters.items()) if a and b]


def mean(v):
    return sum(v) / len(v)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--held", required=True, help="evaluate-clusters --out table")
    p.add_argument("--runs", default=str(RUNS), help="the published runs (default: %(default)s)")
    p.add_argument("--models", help="architectures for --dense (default: models.csv beside --runs)")
    p.add_argument("--split", default="family", help="the split to read (default: %(default)s)")
    p.add_argument("--where", type=condition, action="append", required=True, help="column OP value (repeatable)")
    p.add_argument("--only", type=condition, action="append", default=[],
                   help="column OP value: compare only the jobs this holds for (repeatable)")
    p.add_argument("--dense", action="store_true", help="only jobs without routed experts")
    a = p.parse_args(argv)
    try:
        held = read_table(a.held, ("split", "id", "system", "release", "error"))
        runs = {r["id"]: r for _, r in read_table(a.runs, ("id",))}
        dense_keys = None
        if a.dense:
            models = a.models or str(Path(a.runs).with_name("models.csv"))
            dense_keys = {r["model_key"] for _, r in read_table(models, ("model_key", "arch_type"))
                          if "moe" not in r["arch_type"].lower()}
        rows = contrast(held, runs, a.split, a.where, dense_keys, a.held, a.only)
    except BadInput as e:
        print("contrast.py: %s" % e, file=sys.stderr)
        return 1
    if not rows:
        print("contrast.py: no cluster of split %r holds jobs both with and without %s" % (
            a.split, " and ".join("".join(w) for w in a.where)), file=sys.stderr)
        return 1
    print("%-28s %18s %18s %9s" % ("cluster", "others (n, bias)", "selected (n, bias)", "diff"))
    diffs = []
    for key, others, selected in rows:
        d = mean(selected) - mean(others)
        diffs.append(d)
        print("%-28s %4d %+12.1f%% %4d %+12.1f%% %+8.1f" % (key, len(others), 100 * mean(others), len(selected),
                                                          100 * mean(selected), 100 * d))
    m = mean(diffs)
    same = sum(1 for d in diffs if (d < 0) == (m < 0) and d != 0)
    print("mean difference %+.1f points over %d clusters; %d of them %s" % (
        100 * m, len(diffs), same, "below" if m < 0 else "above"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
