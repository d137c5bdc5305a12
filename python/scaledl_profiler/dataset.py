"""Writing scaledl's dataset format: ``passes.csv`` (one row per pass and run, appended as measured),
``runs.csv`` (per run: the median over its passes) and ``machine.json``.

``runs.csv`` columns: model, family, resolution, batch, world_size, threads, phase, iter_ms_p50 (median over passes
of each pass's median iteration), iter_ms_min, iter_ms_max (over all timed iterations), reps (timed iterations in
all), passes, params, graph, precision (fp32, tf32, fp16 or bf16), device (``torch.cuda.get_device_name()`` on GPUs,
which is also machine.json's ``name``; empty on CPUs, where scaledl takes the machine from machine.json). This is
what ``scaledl fit --data DIR`` reads. ``passes.csv`` has the same columns per pass (``pass``, ``at_s`` instead of
``passes``); a passes.csv written before the precision and device columns existed is upgraded in place (its rows
were FP32, device unknown).

Crash safety: tables that grow (``passes.csv``, ``failed.csv``, ``drift.csv``, the kernel tables) are appended to
line by line, and a last line without its newline (a write cut short by a full disk, a power cut or a killed
process) is dropped with a one-line warning before anything is appended (:func:`repair_tail`) and never read as a
row; its run is measured again. Every row read back is checked (a damaged line is an error naming the file and
line, never a made-up run). Files that are rewritten (``runs.csv``, ``machine.json``) are written whole to a
temporary file that replaces them. Files are created with the process's umask, as any other file.
"""
import csv
import io
import json
import math
import os
import statistics
import sys

from scaledl_profiler.planfile import MEMORY_FORMATS
from scaledl_profiler.precision import PRECISIONS

PASS_FIELDS = ["pass", "model", "family", "resolution", "batch", "world_size", "threads", "phase", "iter_ms_p50",
               "iter_ms_min", "iter_ms_max", "reps", "params", "graph", "at_s", "precision", "device",
               "memory_format"]
RUN_FIELDS = ["model", "family", "resolution", "batch", "world_size", "threads", "phase", "iter_ms_p50",
              "iter_ms_min", "iter_ms_max", "reps", "passes", "params", "graph", "precision", "device",
              "memory_format"]
KEY = ("model", "resolution", "batch", "world_size", "threads", "phase", "precision", "memory_format")
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
            "at_s": round(at_s, 1), "precision": run.precision, "device": device, "memory_format": run.memory_format}


class Passes:
    """passes.csv in a dataset folder: appended to row by row, so an interrupted campaign resumes."""

    def __init__(self, out_dir):
        self.path = os.path.join(out_dir, "passes.csv")

    def done(self):
        """The (pass, run key) pairs already measured."""
        return {(int(r["pass"]), tuple(r[k] for k in KEY)) for r in self.rows()}

    def _upgrade(self):
        """Rewrites a passes.csv of an older column set with today's columns (FP32, device unknown, NCHW)."""
        header, rows = read_table(self.path)
        if header == PASS_FIELDS or header is None:
            return
        rows = [_check_pass_row(self.path, line, r) for line, r in rows]
        write_atomically(self.path, lambda f: _write_csv(f, PASS_FIELDS, [
            {**{k: "" for k in PASS_FIELDS}, "precision": "fp32", "memory_format": "nchw",
             **{k: v for k, v in r.items() if v}}
            for r in rows]))

    def append(self, rows, log=None):
        """Appends rows (a torn last line is dropped first, see :func:`repair_tail`)."""
        repair_tail(self.path, log)
        if os.path.exists(self.path):
            self._upgrade()
        append_rows(self.path, PASS_FIELDS, rows, repaired=True)

    def rows(self):
        """The rows, each checked (ValueError naming the file and line for a damaged one); a torn last line is
        left out."""
        header, rows = read_table(self.path)
        if header is None:
            return []
        # the key's last two (precision, memory format) came later: an older file's rows are FP32 and NCHW
        missing = [k for k in ("pass",) + KEY[:-2] + ("iter_ms_p50", "iter_ms_min", "iter_ms_max", "reps")
                   if k not in header]
        if missing:
            raise ValueError(f"{self.path}:1: no column(s) {', '.join(missing)}: not a passes.csv; measure into a "
                             "new folder")
        out = []
        seen = {}
        for line, r in rows:
            r = _check_pass_row(self.path, line, r)
            key = (r["pass"], tuple(r.get(k, "") for k in KEY))
            if key in seen:
                # one run measured twice in one pass would count twice in runs.csv's median and reps
                raise ValueError(f"{self.path}:{line}: pass {r['pass']} of this run is also line {seen[key]}: a "
                                 "damaged line (delete it)")
            seen[key] = line
            out.append(r)
        return out


def _check_pass_row(path, line, r):
    """A passes.csv row with its precision, device and memory format filled in, or ValueError naming the file and
    line."""
    r = {**r, "precision": r.get("precision") or "fp32", "device": r.get("device") or "",
         "memory_format": r.get("memory_format") or "nchw"}

    def bad(what):
        return ValueError(f"{path}:{line}: {what}: a damaged line (delete it, and its run is measured again)")
    if not r.get("model"):
        raise bad("empty model")
    for col, lowest in (("pass", 0), ("batch", 1), ("world_size", 1), ("threads", 1), ("reps", 1)):
        try:
            v = int(r.get(col, ""))
        except ValueError:
            raise bad(f"{col} is not an integer: '{r.get(col)}'") from None
        if v < lowest:
            raise bad(f"{col} must be >= {lowest}, got {v}")
    if r.get("resolution"):
        try:
            ok = int(r["resolution"]) >= 1
        except ValueError:
            ok = False
        if not ok:
            raise bad(f"resolution is not a positive integer: '{r['resolution']}'")
    if r.get("phase") not in ("train", "infer"):
        raise bad(f"phase must be train or infer, got '{r.get('phase')}'")
    if r["precision"] not in PRECISIONS:
        raise bad(f"precision must be one of {', '.join(PRECISIONS)}, got '{r['precision']}'")
    if r["memory_format"] not in MEMORY_FORMATS:
        raise bad(f"memory_format must be {' or '.join(MEMORY_FORMATS)}, got '{r['memory_format']}'")
    for col in ("iter_ms_p50", "iter_ms_min", "iter_ms_max"):
        try:
            v = float(r.get(col, ""))
        except ValueError:
            raise bad(f"{col} is not a number: '{r.get(col)}'") from None
        if not (math.isfinite(v) and v >= 0):
            raise bad(f"{col} must be a finite time >= 0, got '{r.get(col)}'")
    return r


def _warn(message):
    print(message, file=sys.stderr, flush=True)


def repair_tail(path, log=None):
    """Drops a torn last line of a table appended to line by line: the bytes after its last newline are what an
    interrupted write left (a full disk, a power cut, a killed process), and appending after them would glue the next
    row onto them. Says so in one line through ``log`` (default: stderr). Returns True when it dropped something (a
    torn header leaves an empty file, which is then written as new)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    if size == 0:
        return False
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return False
        keep, pos = 0, size
        while pos > 0:
            start = max(0, pos - 65536)
            f.seek(start)
            i = f.read(pos - start).rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            pos = start
        f.seek(keep)
        torn = f.read(min(size - keep, 60)).decode("utf-8", "replace").replace("\x00", "\\0").strip()
        f.truncate(keep)
    (log or _warn)(f"warning: {path}: dropped its last line, cut short by an interrupted write "
                   f"({size - keep} bytes without a newline: '{torn}'); its run is measured again")
    return True


def read_table(path):
    """(header, [(line, row dict)]) of a CSV file; (None, []) when it is missing or empty. A last line without its
    newline (torn, see :func:`repair_tail`) is left out; a line whose field count differs from the header's, and any
    text the csv module cannot read, is a ValueError naming the file and line."""
    if not os.path.exists(path):
        return None, []
    with open(path, "rb") as f:
        data = f.read()
    data = data[:data.rfind(b"\n") + 1]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: not UTF-8 text: a damaged file") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    # lines end at \n or \r only, as the csv module writes them (str.splitlines would also split a field at a form
    # feed, U+0085 or U+2028, which the writer leaves unquoted)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            return None, []
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}:{reader.line_num}: {len(row)} fields where the header has {len(header)}: a "
                                 "damaged line (delete it)")
            rows.append((reader.line_num, dict(zip(header, row))))
    except csv.Error as e:
        raise ValueError(f"{path}:{reader.line_num}: {e}: a damaged line") from None
    return header, rows


def _write_csv(f, fields, rows):
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow(r)


def write_atomically(path, write, binary=False):
    """Writes ``path`` whole or not at all: ``write(f)`` fills a temporary file beside it, which replaces it once
    complete and on disk."""
    tmp = path + ".tmp"
    mode, kw = ("wb", {}) if binary else ("w", {"newline": "", "encoding": "utf-8"})
    try:
        with open(tmp, mode, **kw) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def append_rows(path, fields, rows, log=None, repaired=False):
    """Appends rows to a CSV table (its header first when the file is new or empty), after dropping a torn last
    line (:func:`repair_tail`) unless ``repaired``."""
    if not repaired:
        repair_tail(path, log)
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow(r)


def append_failures(out_dir, rows, log=None):
    """Appends to ``failed.csv`` the runs that failed (``status`` error or out-of-memory) or were skipped
    (``status`` skipped: the time budget ran out); each row names the run, the pass and why."""
    append_rows(os.path.join(out_dir, "failed.csv"), FAIL_FIELDS, rows, log)


def repair(out_dir, log=None):
    """Drops the torn last lines of a dataset folder's growing tables (passes.csv, failed.csv, drift.csv) before a
    campaign resumes, each with a one-line warning; see :func:`repair_tail`."""
    for name in ("passes.csv", "failed.csv", "drift.csv"):
        repair_tail(os.path.join(out_dir, name), log)


def _folder_problem(path):
    """None when ``path`` is a folder this process may write in, or one it may create; else what stops it, said of
    the path itself (``is a file, not a folder``, ``is not writable ...``) or of the nearest folder above it that
    exists."""
    if os.path.exists(path) and not os.path.isdir(path):
        return "is a file, not a folder"
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        return f"cannot be created: {existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return "is not writable (permission denied)" if existing == os.path.abspath(path) \
            else f"cannot be created: {existing} is not writable (permission denied)"
    return None


def check_folder(path, option="--out"):
    """ValueError (one line naming ``option`` and the path) unless ``path`` is a folder this process may write in,
    or one it may create; creates nothing."""
    path = os.fspath(path)
    problem = _folder_problem(path)
    if problem:
        raise ValueError(f"{option} {path}: {problem}; name a folder you may write in (it is created if missing)")


def check_file(path, option="--out", example="a file name"):
    """ValueError (one line naming ``option``) unless ``path`` can be written as a file: not a folder, in a folder
    this process may write in (or create); creates nothing."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a folder; name the file to write ({example})")
    if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
        # the file is replaced whole (write_atomically): a link or a device would be replaced, not written through
        raise ValueError(f"{option} {path}: is a link or a special file, not a regular file; name a file to write "
                         f"({example})")
    parent = os.path.dirname(os.path.abspath(path))
    problem = _folder_problem(parent)
    if problem:
        raise ValueError(f"{option} {path}: its folder {parent} {problem}; name a file in a folder you may write in "
                         f"({example})")


def make_folder(path, option="--out"):
    """Creates the folder ``path`` (and its parents) after :func:`check_folder`; an OSError becomes a one-line
    ValueError naming ``option``."""
    check_folder(path, option)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"{option} {path}: cannot create the folder ({e.strerror or e})") from None
    return path


def merge(out_dir):
    """Writes runs.csv from passes.csv: one row per run, the median over its passes. Returns the row count."""
    rows = Passes(out_dir).rows()
    by = {}
    for r in rows:
        by.setdefault(tuple(r[k] for k in KEY), []).append(r)
    out = []
    for key in sorted(by, key=lambda k: (k[0], k[1], int(k[2]), int(k[3]), int(k[4]), k[5], k[6], k[7])):
        rs = by[key]
        out.append(dict(zip(KEY, key), family=rs[0].get("family", ""),
                        iter_ms_p50=round(statistics.median(float(r["iter_ms_p50"]) for r in rs), 3),
                        iter_ms_min=min(float(r["iter_ms_min"]) for r in rs),
                        iter_ms_max=max(float(r["iter_ms_max"]) for r in rs),
                        reps=sum(int(r["reps"]) for r in rs), passes=len(rs), params=rs[0].get("params", ""),
                        graph=rs[0].get("graph", ""), device=rs[-1]["device"]))
    write_atomically(os.path.join(out_dir, "runs.csv"), lambda f: _write_csv(f, RUN_FIELDS, out))
    return len(by)


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text: a damaged file") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not JSON ({e.msg}): a damaged file; delete it if this folder was "
                         "measured on this machine") from None
    if not isinstance(d, dict):
        raise ValueError(f"{path}: not a JSON object: a damaged file; delete it if this folder was measured on this "
                         "machine")
    return d


def write_machine(out_dir, description):
    """Writes machine.json; refuses to mix machines: an existing file must describe the same CPU and core count."""
    path = os.path.join(out_dir, "machine.json")
    if os.path.exists(path):
        old = _read_json(path)
        for k in ("name", "cpus", "gpu"):
            if old.get(k) != description.get(k):
                raise ValueError(f"{path} describes another machine ({k}: {old.get(k)!r}, this one: "
                                 f"{description.get(k)!r}); measure into a new folder")
        return path
    write_atomically(path, lambda f: f.write(json.dumps(description, indent=1, sort_keys=True) + "\n"))
    return path


def read_machine_name(out_dir):
    """The ``name`` of ``out_dir/machine.json``, or None when there is none."""
    path = os.path.join(out_dir, "machine.json")
    if not os.path.exists(path):
        return None
    return _read_json(path).get("name")
