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
(it leaves out the jobs of models whose ``arch_type`` names ``moe``: routed experts; a model the file does not list
is kept); ``--only`` keeps the jobs a condition holds for (a model,
a system) before comparing. ``--where`` and ``--only`` take ``column OP value`` with OP one of
``== != >= <= > <`` (numbers compared as numbers, text as text, a number against text only differs; a quoted value
is its text); repeat either to require every condition. Standard library
only; exit 1 with the file and line on bad input, 2 on bad options.
"""
import argparse
import csv
import math
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
    value = m.group(3)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return m.group(1), m.group(2), value


def number(text):
    """The number a cell holds, or None (blank, text, or not finite)."""
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def holds(value, op, wanted):
    """Whether ``value OP wanted``: numbers as numbers, text as text; a number against text (a blank cell among
    them) only differs."""
    a, b = number(value), number(wanted)
    if (a is None) != (b is None):
        return op == "!="
    if a is None:
        a, b = value, wanted
    return {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]


def read_table(path, needed):
    """The rows of a CSV file with the physical line each ends on (comment lines starting with '#' and blank lines
    skipped; a quoted field may span lines)."""
    line = [0]

    def physical(f):
        for n, text in enumerate(f, 1):
            line[0] = n
            if not text.startswith("#"):
                yield text
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(physical(f))
            header = next(reader, None)
            if header is None:
                raise BadInput("%s: empty" % path)
            missing = [c for c in needed if c not in header]
            if missing:
                raise BadInput("%s: no column %s" % (path, ", ".join(missing)))
            rows = []
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise BadInput("%s:%d: %d fields where the header has %d" % (path, line[0], len(fields),
                                                                                 len(header)))
                rows.append((line[0], dict(zip(header, fields))))
            return rows
    except OSError as e:
        raise BadInput("%s: cannot read: %s" % (path, e.strerror or e))
    except UnicodeDecodeError:
        raise BadInput("%s: not UTF-8 text" % path)
    except csv.Error as e:
        raise BadInput("%s:%d: %s" % (path, line[0], e))


def contrast(held, runs, split, where, expert_keys=None, held_path="held", only=()):
    """Per cluster (sorted): (cluster, errors of the other jobs, errors of the selected jobs), clusters with both."""
    splits = sorted({h["split"] for _, h in held})
    if split not in splits:
        raise BadInput("%s: no split %r (it holds %s)" % (held_path, split, ", ".join(splits)))
    clusters = {}
    for n, h in held:
        if h["split"] != split:
            continue
        r = runs.get(h["id"])
        if r is None:
            raise BadInput("%s:%d: run %r is not in the runs table" % (held_path, n, h["id"]))
        if expert_keys is not None and r.get("model_key") in expert_keys:
            continue
        for column, _, _ in list(where) + list(only):
            if column not in r:
                raise BadInput("--where or --only names %r, which is no column of the runs table" % column)
        if not all(holds(r[c], op, v) for c, op, v in only):
            continue
        error = number(h["error"])
        if error is None:
            raise BadInput("%s:%d: error %r is not a finite number" % (held_path, n, h["error"]))
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
        runs = {}
        for n, r in read_table(a.runs, ("id",)):
            if r["id"] in runs:
                raise BadInput("%s:%d: run id %r given twice" % (a.runs, n, r["id"]))
            runs[r["id"]] = r
        expert_keys = None
        if a.dense:
            models = a.models or str(Path(a.runs).with_name("models.csv"))
            expert_keys = {r["model_key"] for _, r in read_table(models, ("model_key", "arch_type"))
                           if "moe" in r["arch_type"].lower()}
        rows = contrast(held, runs, a.split, a.where, expert_keys, a.held, a.only)
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
