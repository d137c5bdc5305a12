"""Reading the plan a ``scaledl plan --out plan.csv`` wrote (or any table with its columns).

Columns: ``model``, ``batch``, ``world_size``, ``threads``, ``phase`` (required); ``resolution`` (input size:
image side in pixels, or sequence length), ``family``, ``graph`` (relative to the plan's folder), ``predicted_ms``,
``cost_s``, ``precision`` (fp32, tf32, fp16 or bf16; rows without one take ``measure --precision``),
``memory_format`` (nchw or channels_last: how the run lays out its feature maps; rows without one take
``measure --memory-format``) (optional).
Every problem is a :class:`PlanError` naming the file and line.

A plan's graphs are taken only from the folders the companion was given: the plan's own folder (and the folders
under it) and the dataset folder, after following symbolic links; a graph elsewhere, or one that is not a regular
file (a device, a FIFO, a file of ``/proc``), is refused (see :func:`adopt_graph`).
"""
import csv
import filecmp
import io
import math
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field
from typing import List, Optional

from scaledl_profiler.precision import PRECISIONS

REQUIRED = ("model", "batch", "world_size", "threads", "phase")
MEMORY_FORMATS = ("nchw", "channels_last")
_FORMAT_NAMES = {"nchw": "nchw", "channels_first": "nchw", "contiguous": "nchw", "contiguous_format": "nchw",
                 "channels_last": "channels_last", "nhwc": "channels_last"}


def memory_format(text):
    """``nchw`` or ``channels_last`` from what scaledl reads for them (any case, ``-`` for ``_``; empty: nchw), or
    ValueError naming the text."""
    t = (text or "").strip().lower().replace("-", "_")
    if not t:
        return "nchw"
    if t not in _FORMAT_NAMES:
        raise ValueError(f"memory format must be nchw or channels_last, got '{text}'")
    return _FORMAT_NAMES[t]
PHASES = ("train", "infer")


OPTIONAL = ("resolution", "family", "graph", "predicted_ms", "cost_s", "precision", "memory_format")


def _distance(a, b):
    """Edit distance (insertions, deletions, substitutions) of two short texts."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _key(name):
    return "".join(ch for ch in name.lower() if ch.isascii() and ch.isalnum())


def _misspelt(column):
    """The column of a plan a header name looks like a misspelling of, by scaledl's rule for a table's extra columns
    (``Suggestions.misspelt``): the same letters and digits ignoring case, or within two edits where both have five
    or more; None for a known column and for one far from all."""
    c = column.strip()
    if c in REQUIRED + OPTIONAL:
        return None
    t = _key(c)
    for known in REQUIRED + OPTIONAL:
        k = _key(known)
        if t == k or min(len(t), len(k)) >= 5 and _distance(t, k) <= 2:
            return known
    return None


def _warn(message):
    print(message, file=sys.stderr)


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
    memory_format: str = "nchw"

    def key(self):
        """Identity of the run in passes.csv and runs.csv."""
        return (self.model, "" if self.resolution is None else str(self.resolution), str(self.batch),
                str(self.world_size), str(self.threads), self.phase, self.precision, self.memory_format)

    def job(self):
        """Runs with the same job share one set of worker processes (one model build); a job's runs may differ in
        batch, phase and precision, not in memory format (the model is laid out once)."""
        return (self.model, self.resolution, self.world_size, self.threads, self.memory_format)


# The bounds scaledl's own readers keep (DatasetReader.MAX_BATCH, MAX_WORLD_SIZE, MAX_THREADS): a run beyond them is
# no run a machine could measure (a world size of a million would start a million processes).
MAXIMA = {"batch": 1 << 20, "world_size": 1 << 20, "threads": 1 << 16, "resolution": 1 << 16}


def _positive(path, line, row, col):
    text = (row.get(col) or "").strip()
    # ASCII digits only: Python's int() also reads '6_4', '+64' and other scripts' digits
    if not (text.isascii() and text.isdigit()):
        raise PlanError(f"{path}:{line}: {col} must be a positive integer, got '{text}'")
    v = int(text)
    if v < 1:
        raise PlanError(f"{path}:{line}: {col} must be a positive integer, got '{text}'")
    most = MAXIMA.get(col)
    if most is not None and v > most:
        raise PlanError(f"{path}:{line}: {col} {text} is out of range (1..{most})")
    return v


# The largest plan read, bytes (the Java side's cap on a table).
MAX_PLAN_BYTES = 64 << 20


def read_plan(path, default_precision="fp32", default_memory_format="nchw") -> List[Run]:
    """Reads a plan; graph paths are returned relative to the plan's folder, as written. Rows without a
    ``precision`` take ``default_precision``, rows without a ``memory_format`` ``default_memory_format``."""
    if os.path.isdir(path):
        raise PlanError(f"{path}: is a folder, not a plan file (scaledl plan --out plan.csv writes one)")
    try:
        # read through a cap, whatever the path names (/dev/zero is one line that never ends)
        with open(path, "rb") as f:
            raw = f.read(MAX_PLAN_BYTES + 1)
        if len(raw) > MAX_PLAN_BYTES:
            raise PlanError(f"{path}: larger than {MAX_PLAN_BYTES:,} bytes: not a plan file")
        # utf-8-sig: a byte-order mark (a spreadsheet's export) is no part of the first column's name
        text = raw.decode("utf-8-sig")
        runs = _read_rows(path, csv.DictReader(io.StringIO(text, newline="")), default_precision,
                          memory_format(default_memory_format))
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file (scaledl plan --out plan.csv writes one)") from None
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text: not a plan file") from None
    except csv.Error as e:
        raise PlanError(f"{path}: {e}: not a plan file") from None
    if not runs:
        raise PlanError(f"{path}:2: no runs in the plan")
    seen = {}
    for r in runs:
        if r.key() in seen:
            raise PlanError(f"{path}:{r.line}: the same run as line {seen[r.key()]}")
        seen[r.key()] = r.line
    return runs


def _read_rows(path, reader, default_precision, default_memory_format="nchw"):
    """The runs of a plan's rows, each checked (a PlanError naming the file and line)."""
    if reader.fieldnames is None:
        raise PlanError(f"{path}:1: empty file: no header line")
    header = [h.strip() for h in reader.fieldnames]
    for i, h in enumerate(header):
        if h in header[:i]:
            # a dictionary reader keeps the last of two equal columns: the first one's values would be dropped
            raise PlanError(f"{path}:1: duplicate column '{h}'")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise PlanError(f"{path}:1: missing column(s) {', '.join(missing)} (a plan has {', '.join(REQUIRED)})")
    for h in header:
        known = _misspelt(h)
        if known and known not in header:
            # a misspelt optional column leaves every row at that column's default, silently
            _warn(f"warning: {path}:1: column '{h}' is not one the companion reads (did you mean '{known}'?); every "
                  f"row takes {known}'s default")
    runs = []
    for raw in reader:
        # the reader's own count: blank lines it skips are lines of the file
        line = reader.line_num
        extra = raw.get(None)
        short = [k for k, v in raw.items() if k is not None and v is None]
        if extra or short:
            fields = len(header) + len(extra or []) - len(short)
            raise PlanError(f"{path}:{line}: {fields} fields where the header has {len(header)}")
        row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if all(row.get(h) == h for h in header):
            raise PlanError(f"{path}:{line}: the header line again (two plans joined?): keep one header")
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
                pred = math.nan
            if not (math.isfinite(pred) and pred >= 0):
                raise PlanError(f"{path}:{line}: predicted_ms is not a number >= 0: '{row['predicted_ms']}'")
        precision = (row.get("precision") or default_precision).lower()
        if precision not in PRECISIONS:
            raise PlanError(f"{path}:{line}: precision must be one of {', '.join(PRECISIONS)}, got "
                            f"'{row.get('precision')}'")
        try:
            fmt = memory_format(row.get("memory_format")) if row.get("memory_format") else default_memory_format
        except ValueError as e:
            raise PlanError(f"{path}:{line}: {e}") from None
        runs.append(Run(model=row["model"], batch=_positive(path, line, row, "batch"),
                        world_size=_positive(path, line, row, "world_size"),
                        threads=_positive(path, line, row, "threads"), phase=phase, resolution=res,
                        family=row.get("family", ""), graph=row.get("graph", ""), predicted_ms=pred, line=line,
                        precision=precision, memory_format=fmt))
    return runs


def rebase_graph(graph, plan_path, out_dir):
    """A plan's graph path (relative to the plan) made relative to the dataset folder ``out_dir``."""
    if not graph:
        return ""
    absolute = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(plan_path)), graph))
    return os.path.relpath(absolute, os.path.abspath(out_dir)).replace(os.sep, "/")


PSEUDO_FILE_SYSTEMS = ("/proc", "/sys", "/dev")


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def adopt_graph(graph, plan_path, out_dir, line=0, dry_run=False):
    """A plan's graph as part of the dataset folder ``out_dir``, named relative to it: a graph already inside the
    folder keeps its path; one in the plan's folder (or below it) is copied to ``out_dir/graphs/`` (scaledl reads only
    graphs inside a dataset's folder, so a dataset can be moved, and a ``runs.csv`` from elsewhere cannot name any
    file). A graph that does not exist (yet) keeps its rebased path, which ``scaledl fit`` reports.

    Refused with a :class:`PlanError` naming the plan, its line and the path: a graph outside the plan's folder and
    the dataset folder once symbolic links are followed (``/etc/shadow``, ``../../secret``, a link out), and one
    that is not a regular file (a device, a FIFO, a folder, a file of ``/proc``, ``/sys`` or ``/dev``). A copy gets
    no more permission than its source has (and the umask allows). ``dry_run`` checks without writing anything."""
    if not graph:
        return ""
    where = f"{plan_path}:{line}" if line else f"{plan_path}"
    plan_dir = os.path.dirname(os.path.abspath(plan_path))
    source = os.path.normpath(os.path.join(plan_dir, graph))
    real = os.path.realpath(source)
    roots = [os.path.realpath(plan_dir), os.path.realpath(out_dir)]
    if not any(_inside(real, root) for root in roots):
        via = "" if real == source else f" (a link to {real})"
        raise PlanError(f"{where}: graph '{graph}'{via} is outside the plan's folder {roots[0]} and the dataset "
                        f"folder {roots[1]}: the companion copies graphs only from those folders (and the folders "
                        "under them); put the graph there and name it relative to the plan")
    if any(_inside(real, p) for p in PSEUDO_FILE_SYSTEMS):
        raise PlanError(f"{where}: graph '{graph}' ({real}) is not a regular file: refused")
    if not os.path.lexists(source):
        return rebase_graph(graph, plan_path, out_dir)
    st = os.stat(real) if os.path.exists(real) else None
    if st is None or not stat.S_ISREG(st.st_mode):
        kind = "a dangling link" if st is None else "a folder" if stat.S_ISDIR(st.st_mode) else \
            "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
            stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file"
        raise PlanError(f"{where}: graph '{graph}' is {kind}, not a regular file: refused")
    out_real = roots[1]
    if _inside(real, out_real):
        return os.path.relpath(real, out_real).replace(os.sep, "/")
    name = "graphs/" + os.path.basename(real)
    target = os.path.join(out_dir, name)
    if os.path.lexists(target):
        if os.path.islink(target) or not os.path.isfile(target):
            raise PlanError(f"{where}: graph {graph} would be copied to {target}, which is not a regular file")
        if not filecmp.cmp(real, target, shallow=False):
            raise PlanError(f"{where}: graph {graph} would be copied to {target}, which holds another graph "
                            "of that name")
        return name
    if dry_run:
        return name
    os.makedirs(os.path.dirname(target), exist_ok=True)
    _copy_regular(real, target, graph, where)
    return name


def _copy_regular(source, target, graph, where):
    """Copies a regular file (checked again on the open file, a link not followed) to ``target`` through a
    temporary file created with the source's permission bits at most."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(source, flags)
    except OSError as e:
        raise PlanError(f"{where}: graph '{graph}' cannot be read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(src.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise PlanError(f"{where}: graph '{graph}' is not a regular file: refused")
        tmp = target + ".tmp"
        if os.path.lexists(tmp):
            os.remove(tmp)
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                      stat.S_IMODE(st.st_mode) & 0o666)
        try:
            with os.fdopen(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
                dst.flush()
                os.fsync(dst.fileno())
            os.replace(tmp, target)
        finally:
            if os.path.lexists(tmp):
                os.remove(tmp)
