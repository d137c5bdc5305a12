"""Kernel tables: single PyTorch operators timed in isolation, in NeuSight's layout (one CSV per table under
``DIR/kernels/``), plus an attention table and a ``precision`` column.

=============  =======================================================================================================
table          columns (each table ends with ``precision``: fp32, tf32, fp16 or bf16)
=============  =======================================================================================================
bmm.csv        row_id, gpu, op, B, M, N, K, flops, latency_ms: ``torch.bmm(A[B,M,N], X[B,N,K])`` (N is the
               contraction), flops = 2·B·M·N·K
linear.csv     same columns: ``F.linear`` of ``x[1,M,N]`` with weight ``[K,N]`` and bias (``nn.Linear(N, K)``), B = 1
elem.csv       row_id, gpu, op, B, H, n_inputs, latency_ms: element-wise ops on ``[B,H]``: add, mul, div, pow (two
               tensors), addu, mulu, divu, powu (tensor and scalar), relu, gelu, tanh
ln.csv         same columns: ``F.layer_norm`` over H (op ``ln``, n_inputs 1)
softmax.csv    same columns: ``torch.softmax`` over H (op ``softmax``, n_inputs 1)
conv.csv       row_id, gpu, op, batch, Cin, Cout, kernel, stride, padding, H, W, out_H, out_W, flops, latency_ms:
               ``nn.Conv2d(Cin, Cout, kernel, stride, padding, bias=False)`` on ``[batch,Cin,H,W]``, H = W,
               flops = 2·batch·Cout·Cin·kernel²·out_H·out_W
attention.csv  row_id, gpu, op, B, heads, seq, head_dim, causal, flops, latency_ms: op ``sdpa``
               (``F.scaled_dot_product_attention``) or ``explicit`` (softmax(QKᵀ/√d)V, where PyTorch has no SDPA) on
               Q, K, V ``[B,heads,seq,head_dim]``; causal 0 or 1; flops = 4·B·heads·seq²·head_dim (not halved for
               causal)
=============  =======================================================================================================

``gpu`` is ``torch.cuda.get_device_name()`` (the CPU's model name with ``--device cpu``). ``latency_ms`` is, as in
NeuSight, the mean of the 5 fastest of ``reps`` (25) timed calls, each timed with CUDA events after ``warmup`` (3)
untimed calls; cuDNN autotuning is on (``cudnn.benchmark``), gradients off: **forward only**. Tensors are created
in the precision's dtype (fp32 and tf32: float32, with TF32 math only for tf32).

Shapes: a seeded grid (``--seed``) of log-spaced and transformer- and CNN-typical shapes from small to large (GEMMs
up to 8192³), each measured in every requested precision; the shapes are shuffled over all tables, so a time budget
(``--max-seconds``) that ends the campaign early leaves a random subset of every table rather than whole tables.
Shapes over ``max_bytes`` of tensors are left out of the grid. A failed or out-of-memory shape, and every shape the
budget left out, is a row of ``kernels/failed.csv``.
"""
import csv
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from scaledl_profiler import dataset
from scaledl_profiler.precision import parse_list

GEMM_COLUMNS = ["row_id", "gpu", "op", "B", "M", "N", "K", "flops", "latency_ms", "precision"]
VECTOR_COLUMNS = ["row_id", "gpu", "op", "B", "H", "n_inputs", "latency_ms", "precision"]
COLUMNS = {
    "bmm": GEMM_COLUMNS,
    "linear": GEMM_COLUMNS,
    "elem": VECTOR_COLUMNS,
    "ln": VECTOR_COLUMNS,
    "softmax": VECTOR_COLUMNS,
    "conv": ["row_id", "gpu", "op", "batch", "Cin", "Cout", "kernel", "stride", "padding", "H", "W", "out_H", "out_W",
             "flops", "latency_ms", "precision"],
    "attention": ["row_id", "gpu", "op", "B", "heads", "seq", "head_dim", "causal", "flops", "latency_ms",
                  "precision"],
}
TABLES = tuple(COLUMNS)
BINARY = ("add", "mul", "div", "pow")
SCALAR = ("addu", "mulu", "divu", "powu")
UNARY = ("relu", "gelu", "tanh")
ELEM_OPS = BINARY + SCALAR + UNARY
FAIL_COLUMNS = ["table", "op", "shape", "precision", "status", "error"]
GRIDS = ("full", "quick", "tiny")
MAX_FLOPS = 1.2e12  # 2·8192³ = 1.1e12 is in


@dataclass(frozen=True)
class Shape:
    """One operator at one shape: ``table`` (a CSV), ``op`` (its ``op`` column) and the shape columns in order."""
    table: str
    op: str
    dims: Tuple[Tuple[str, int], ...]

    def get(self, name):
        return dict(self.dims)[name]

    def label(self):
        return " ".join(f"{k}={v}" for k, v in self.dims)

    def flops(self):
        d = dict(self.dims)
        if self.table in ("bmm", "linear"):
            return 2 * d["B"] * d["M"] * d["N"] * d["K"]
        if self.table == "conv":
            return 2 * d["batch"] * d["Cout"] * d["Cin"] * d["kernel"] ** 2 * d["out_H"] * d["out_W"]
        if self.table == "attention":
            return 4 * d["B"] * d["heads"] * d["seq"] ** 2 * d["head_dim"]
        return None

    def elements(self, explicit_attention=True):
        """Elements of all tensors the operator reads and writes (its memory need, in elements)."""
        d = dict(self.dims)
        if self.table in ("bmm", "linear"):
            return d["B"] * (d["M"] * d["N"] + d["N"] * d["K"] + d["M"] * d["K"])
        if self.table in ("elem", "ln", "softmax"):
            return d["B"] * d["H"] * (d["n_inputs"] + 1)
        if self.table == "conv":
            return (d["batch"] * d["Cin"] * d["H"] * d["W"] + d["Cout"] * d["Cin"] * d["kernel"] ** 2
                    + d["batch"] * d["Cout"] * d["out_H"] * d["out_W"])
        qkv = 4 * d["B"] * d["heads"] * d["seq"] * d["head_dim"]
        return qkv + (2 * d["B"] * d["heads"] * d["seq"] ** 2 if explicit_attention else 0)


def _gemm(table, b, m, n, k):
    return Shape(table, table, (("B", b), ("M", m), ("N", n), ("K", k)))


def _vector(table, op, b, h):
    n_inputs = 2 if op in BINARY else 1
    return Shape(table, op, (("B", b), ("H", h), ("n_inputs", n_inputs)))


def _conv(batch, cin, cout, kernel, stride, padding, h):
    out = (h + 2 * padding - kernel) // stride + 1
    return Shape("conv", "conv", (("batch", batch), ("Cin", cin), ("Cout", cout), ("kernel", kernel),
                                  ("stride", stride), ("padding", padding), ("H", h), ("W", h), ("out_H", out),
                                  ("out_W", out)))


def _attention(op, b, heads, seq, head_dim, causal):
    return Shape("attention", op, (("B", b), ("heads", heads), ("seq", seq), ("head_dim", head_dim),
                                   ("causal", int(causal))))


def _loguniform(rng, lo, hi, multiple=1):
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return max(lo, int(round(v / multiple)) * multiple)


CONV_SPECS = ((3, 1, 1), (1, 1, 0), (3, 2, 1), (5, 1, 2), (7, 2, 3), (1, 2, 0))
"""(kernel, stride, padding) of the convolutions in the grid."""


def grid(kind="full", tables=TABLES, seed=1, attention_op="sdpa", max_bytes=2 ** 31, element_bytes=4):
    """The shapes of a grid (``full``, ``quick`` or ``tiny``), deduplicated and shuffled with ``seed``.

    Shapes whose tensors take more than ``max_bytes`` (at ``element_bytes`` per element) or more than 1.2e12 flops
    are left out."""
    if kind not in GRIDS:
        raise ValueError(f"--grid must be one of {', '.join(GRIDS)}, got '{kind}'")
    rng = random.Random(seed)
    out = []
    tiny, quick = kind == "tiny", kind == "quick"
    n_random = 0 if tiny else 12 if quick else 80

    if "linear" in tables:
        cubes = (32, 64) if tiny else (256, 1024, 4096, 8192) if quick else (256, 512, 1024, 2048, 4096, 8192)
        out += [_gemm("linear", 1, s, s, s) for s in cubes]
        hidden = (32,) if tiny else (768, 4096) if quick else (768, 1024, 2048, 4096)
        tokens = (16,) if tiny else (2048,) if quick else (512, 2048, 8192, 16384)
        for h in hidden:
            for m in tokens:
                out += [_gemm("linear", 1, m, n, k) for n, k in ((h, 3 * h), (h, h), (h, 4 * h), (4 * h, h))]
        for _ in range(n_random):
            out.append(_gemm("linear", 1, _loguniform(rng, 16, 32768), _loguniform(rng, 64, 16384),
                             _loguniform(rng, 64, 16384)))
    if "bmm" in tables:
        for b in (1, 4) if tiny else (1, 64) if quick else (1, 8, 64):
            for s in (16, 32) if tiny else (256, 1024, 4096) if quick else (128, 256, 512, 1024, 2048, 4096, 8192):
                out.append(_gemm("bmm", b, s, s, s))
        for bh in (8,) if tiny else (96, 384) if quick else (96, 192, 384, 768):
            for s in (16,) if tiny else (128, 1024) if quick else (128, 256, 512, 1024, 2048):
                for d in (8,) if tiny else (64,) if quick else (64, 128):
                    out += [_gemm("bmm", bh, s, d, s), _gemm("bmm", bh, s, s, d)]  # QKᵀ and PV
        for _ in range(n_random):
            out.append(_gemm("bmm", _loguniform(rng, 1, 512), _loguniform(rng, 16, 4096), _loguniform(rng, 16, 4096),
                             _loguniform(rng, 16, 4096)))
    vec_b = (8,) if tiny else (512, 32768) if quick else (64, 512, 4096, 32768, 262144)
    vec_h = (32,) if tiny else (1024, 4096) if quick else (768, 1024, 4096, 16384)
    if "elem" in tables:
        for op in ELEM_OPS:
            out += [_vector("elem", op, b, h) for b in vec_b for h in vec_h]
            for _ in range(n_random // 8):
                out.append(_vector("elem", op, _loguniform(rng, 16, 1 << 20), _loguniform(rng, 64, 16384)))
    for table in ("ln", "softmax"):
        if table in tables:
            hs = vec_h + (() if tiny or quick or table == "ln" else (128, 512, 2048))
            out += [_vector(table, table, b, h) for b in vec_b for h in hs]
            for _ in range(n_random // 4):
                out.append(_vector(table, table, _loguniform(rng, 16, 1 << 20), _loguniform(rng, 64, 16384)))
    if "conv" in tables:
        if tiny:
            typical = ((4, 8, 3, 1, 1, 8), (4, 8, 1, 1, 0, 8))
            out += [_conv(2, c, c2, k, s, p, h) for c, c2, k, s, p, h in typical]
        else:
            stages = ((64, 56), (128, 28), (256, 14), (512, 7)) if quick else (
                (16, 112), (32, 112), (64, 56), (96, 56), (128, 28), (192, 28), (256, 14), (384, 14), (512, 7),
                (1024, 14), (2048, 7))
            for batch in (8, 32) if quick else (1, 8, 32, 64):
                out.append(_conv(batch, 3, 64, 7, 2, 3, 224))
                for c, h in stages:
                    out.append(_conv(batch, c, c, 3, 1, 1, h))
                    if not quick:
                        out.append(_conv(batch, c, 4 * c if c <= 512 else c // 4, 1, 1, 0, h))
                        out.append(_conv(batch, c, 2 * c, 3, 2, 1, h))
            for _ in range(n_random):
                k, s, p = rng.choice(CONV_SPECS)
                h = _loguniform(rng, 7, 224)
                if h + 2 * p >= k:
                    out.append(_conv(_loguniform(rng, 1, 128), _loguniform(rng, 3, 2048),
                                     _loguniform(rng, 8, 2048), k, s, p, h))
    if "attention" in tables:
        bs = (2,) if tiny else (8,) if quick else (1, 8, 32)
        heads = (2,) if tiny else (12,) if quick else (12, 32)
        seqs = (16, 32) if tiny else (256, 1024) if quick else (128, 256, 512, 1024, 2048, 4096)
        dims = (8,) if tiny else (64,) if quick else (64, 128)
        for b in bs:
            for h in heads:
                for s in seqs:
                    for d in dims:
                        for causal in (0, 1):
                            out.append(_attention(attention_op, b, h, s, d, causal))
    seen = set()
    unique = []
    explicit = attention_op != "sdpa"
    for sh in out:
        if sh in seen:
            continue
        seen.add(sh)
        f = sh.flops()
        if (f is not None and f > MAX_FLOPS) or sh.elements(explicit) * element_bytes > max_bytes:
            continue
        unique.append(sh)
    rng.shuffle(unique)
    return unique


class KernelWriter:
    """Appends rows to ``DIR/kernels/<table>.csv`` (row ids continue an existing file, whose header must match),
    and failures to ``DIR/kernels/failed.csv``; every row is flushed as written, so a killed campaign keeps its
    tables. A torn last line an interrupted write left is dropped (with a warning through ``log``) before a table is
    extended (:func:`scaledl_profiler.dataset.repair_tail`)."""

    def __init__(self, out_dir, log=None):
        self.dir = os.path.join(out_dir, "kernels")
        os.makedirs(self.dir, exist_ok=True)
        self._next = {}
        self._done = {}
        self.counts = {t: 0 for t in TABLES}
        self.log = log

    def path(self, table):
        return os.path.join(self.dir, f"{table}.csv")

    def _open(self, table, columns):
        path = self.path(table) if table in COLUMNS else os.path.join(self.dir, f"{table}.csv")
        if table in self._next:
            return path
        dataset.repair_tail(path, self.log)
        header, rows = dataset.read_table(path)
        if header is not None:
            if header != columns:
                raise ValueError(f"{path}: has columns {','.join(header)}, not {','.join(columns)}; write the "
                                 "kernel tables into a new folder")
            ids = set()
            repeated = []
            for line, r in rows:
                # a rerun keeps what the table holds: each row read back is checked, as passes.csv's are
                for c in ("row_id", "latency_ms") if table in COLUMNS else ():
                    try:
                        v = float(r[c])
                    except ValueError:
                        v = math.nan
                    if not (math.isfinite(v) and v >= 0) or c == "row_id" and v != int(v):
                        raise ValueError(f"{path}:{line}: {c} is not a number >= 0: '{r[c][:40]}': a damaged line "
                                         "(delete it)")
                    if c == "row_id":
                        if int(v) in ids and not repeated:
                            # an earlier release continued ids at the row count: after a deleted line, a repeat
                            repeated.append(line)
                        ids.add(int(v))
            if repeated:
                self.log(f"warning: {path}:{repeated[0]}: a row_id repeats an earlier one (an earlier release "
                         "numbered a table extended after a deleted line so); new rows continue after the largest")
            self._next[table] = max(ids) + 1 if ids else len(rows)
            if table in COLUMNS:
                # what the table already holds: a rerun measures only the rest (an interrupted campaign resumes)
                dims = [c for c in columns if c not in ("row_id", "gpu", "op", "flops", "latency_ms", "precision")]
                self._done[table] = {(r.get("gpu"), r.get("op"), tuple(r.get(c) for c in dims), r.get("precision"))
                                     for _, r in rows}
        else:
            with open(path, "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerow(columns)
            self._next[table] = 0
        return path

    def has(self, shape, gpu, precision):
        """Whether the table already holds this shape on this GPU in this precision (a row of an earlier run)."""
        self._open(shape.table, COLUMNS[shape.table])
        return (gpu, shape.op, tuple(str(v) for _, v in shape.dims), precision) in self._done.get(shape.table, ())

    def write(self, shape, gpu, precision, latency_ms):
        columns = COLUMNS[shape.table]
        path = self._open(shape.table, columns)
        row = {"row_id": self._next[shape.table], "gpu": gpu, "op": shape.op, **dict(shape.dims),
               "latency_ms": repr(float(latency_ms)), "precision": precision}
        if "flops" in columns:
            row["flops"] = shape.flops()
        with open(path, "a", newline="", encoding="utf-8") as f:
            csv.DictWriter(f, fieldnames=columns).writerow(row)
        self._next[shape.table] += 1
        self.counts[shape.table] += 1

    def fail(self, shape, precision, status, error):
        path = self._open("failed", FAIL_COLUMNS)
        with open(path, "a", newline="", encoding="utf-8") as f:
            csv.DictWriter(f, fieldnames=FAIL_COLUMNS).writerow(
                {"table": shape.table, "op": shape.op, "shape": shape.label(), "precision": precision,
                 "status": status, "error": error})


class TorchExecutor:
    """Times shapes with PyTorch on a backend (see :mod:`scaledl_profiler.backend`)."""

    def __init__(self, torch, backend, reps=25, warmup=3, fastest=5, cap_s=2.0):
        self.torch = torch
        self.be = backend
        self.reps, self.warmup, self.fastest, self.cap_s = reps, warmup, fastest, cap_s
        self.name = backend.name
        f = torch.nn.functional
        self.attention_op = "sdpa" if hasattr(f, "scaled_dot_product_attention") else "explicit"
        if backend.kind == "cuda":
            torch.backends.cudnn.benchmark = True

    def _call(self, shape, dtype):
        """The operator as a function of no arguments, with its tensors made."""
        torch = self.torch
        F = torch.nn.functional
        dev = self.be.device
        d = dict(shape.dims)

        def randn(*size):
            return torch.randn(*size, device=dev, dtype=dtype)

        if shape.table == "bmm":
            a, x = randn(d["B"], d["M"], d["N"]), randn(d["B"], d["N"], d["K"])
            return lambda: torch.bmm(a, x)
        if shape.table == "linear":
            x, w, b = randn(d["B"], d["M"], d["N"]), randn(d["K"], d["N"]), randn(d["K"])
            return lambda: F.linear(x, w, b)
        if shape.table in ("elem", "ln", "softmax"):
            a = randn(d["B"], d["H"])
            op = shape.op
            if op == "ln":
                w, b = randn(d["H"]), randn(d["H"])
                return lambda: F.layer_norm(a, (d["H"],), w, b)
            if op == "softmax":
                return lambda: torch.softmax(a, dim=-1)
            if op in ("div", "divu", "pow", "powu"):
                a = torch.rand(d["B"], d["H"], device=dev, dtype=dtype) + 0.5  # no zeros, no negative bases
            other = torch.rand(d["B"], d["H"], device=dev, dtype=dtype) + 0.5 if op in BINARY else None
            return {
                "add": lambda: torch.add(a, other), "mul": lambda: torch.mul(a, other),
                "div": lambda: torch.div(a, other), "pow": lambda: torch.pow(a, other),
                "addu": lambda: torch.add(a, 1.7), "mulu": lambda: torch.mul(a, 1.7),
                "divu": lambda: torch.div(a, 1.7), "powu": lambda: torch.pow(a, 1.7),
                "relu": lambda: torch.relu(a), "gelu": lambda: F.gelu(a), "tanh": lambda: torch.tanh(a),
            }[op]
        if shape.table == "conv":
            conv = torch.nn.Conv2d(d["Cin"], d["Cout"], d["kernel"], d["stride"], d["padding"], bias=False).to(
                device=dev, dtype=dtype)
            x = randn(d["batch"], d["Cin"], d["H"], d["W"])
            return lambda: conv(x)
        if shape.table == "attention":
            q, k, v = (randn(d["B"], d["heads"], d["seq"], d["head_dim"]) for _ in range(3))
            causal = bool(d["causal"])
            if shape.op == "sdpa":
                return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            scale = 1.0 / math.sqrt(d["head_dim"])
            mask = torch.ones(d["seq"], d["seq"], device=dev, dtype=torch.bool).triu(1) if causal else None

            def explicit():
                s = torch.matmul(q, k.transpose(-2, -1)) * scale
                if mask is not None:
                    s = s.masked_fill(mask, float("-inf"))
                return torch.matmul(torch.softmax(s, dim=-1), v)
            return explicit
        raise ValueError(f"unknown kernel table '{shape.table}'")

    def measure(self, shape, precision):
        """latency_ms: the mean of the fastest ``fastest`` of ``reps`` timed calls (fewer past ``cap_s``)."""
        from scaledl_profiler.backend import fastest_mean
        from scaledl_profiler.precision import tensor_dtype
        torch = self.torch
        self.be.apply(precision)
        with torch.no_grad():
            fn = self._call(shape, tensor_dtype(torch, precision))
            for _ in range(self.warmup):
                fn()
            self.be.sync()
            times = []
            for _ in range(self.reps):
                times.append(self.be.time_ms(fn))
                if sum(times) > 1000.0 * self.cap_s and len(times) >= self.fastest:
                    break
        return fastest_mean(times, self.fastest)


class FakeExecutor:
    """A stand-in without PyTorch, for dry runs and tests: a deterministic latency from flops and bytes (a
    roofline of 10 TFLOP/s and 500 GB/s plus 5 µs), never a measurement."""
    name = "fake device (no measurement)"
    attention_op = "sdpa"

    def measure(self, shape, precision):
        bytes_ = shape.elements(False) * (2 if precision in ("fp16", "bf16") else 4)
        return 0.005 + max((shape.flops() or 0) / 1e10, bytes_ / 5e8)


@dataclass
class Summary:
    rows: Dict[str, int] = field(default_factory=dict)
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    shapes: int = 0
    already: int = 0
    capped: int = 0

    def line(self):
        total = sum(self.rows.values())
        per = ", ".join(f"{t} {n}" for t, n in self.rows.items() if n)
        return (f"{total} kernel rows ({per or 'none'}) in {self.seconds:.0f} s; {self.failed} failed, "
                f"{self.skipped} left out by the time budget"
                + (f"; {self.already} already measured (kept, not measured again)" if self.already else "")
                + (f"; {self.capped} shape-precisions over --max-gib left out" if self.capped else ""))


def run(out_dir, precisions, executor, kind="full", seed=1, max_seconds=None, tables=TABLES, log=print,
        max_bytes=2 ** 31, clock=time.monotonic):
    """Measures a grid into ``out_dir/kernels/``; returns a :class:`Summary`. Each shape is measured in every
    precision (in a shuffled order) before the next shape starts."""
    precisions = parse_list(",".join(precisions))
    unknown = [t for t in tables if t not in COLUMNS]
    if unknown:
        raise ValueError(f"--ops: unknown table '{unknown[0]}' (tables: {', '.join(TABLES)})")
    small = min(2 if p in ("fp16", "bf16") else 4 for p in precisions)
    shapes = grid(kind, tables, seed, executor.attention_op, max_bytes, small)
    uncapped = len(grid(kind, tables, seed, executor.attention_op, math.inf, small))
    writer = KernelWriter(out_dir, log)
    rng = random.Random(seed + 1)
    summary = Summary(shapes=len(shapes), capped=(uncapped - len(shapes)) * len(precisions))
    start = clock()
    last_log = start
    for i, shape in enumerate(shapes):
        order = list(precisions)
        rng.shuffle(order)
        if max_seconds is not None and clock() - start > max_seconds:
            for sh in shapes[i:]:
                for p in precisions:
                    writer.fail(sh, p, "skipped", "time budget")
                    summary.skipped += 1
            log(f"kernels: time budget of {max_seconds:.0f} s spent: {len(shapes) - i} of {len(shapes)} shapes "
                "left out (kernels/failed.csv)")
            break
        for p in order:
            bytes_ = shape.elements(executor.attention_op != "sdpa") * (2 if p in ("fp16", "bf16") else 4)
            if bytes_ > max_bytes:
                summary.capped += 1
                continue
            if writer.has(shape, executor.name, p):
                summary.already += 1
                continue
            try:
                ms = executor.measure(shape, p)
            except Exception as e:  # an operator without this dtype here, or out of memory: recorded, not fatal
                be = getattr(executor, "be", None)
                oom = be is not None and be.is_oom(e)
                if be is not None:
                    be.release()
                text = "out of memory" if oom else (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
                writer.fail(shape, p, "oom" if oom else "error", text)
                summary.failed += 1
                continue
            writer.write(shape, executor.name, p, ms)
        now = clock()
        if now - last_log > 10 or i == len(shapes) - 1:
            last_log = now
            log(f"kernels: {i + 1}/{len(shapes)} shapes, {sum(writer.counts.values())} rows, {now - start:.0f} s")
    summary.rows = dict(writer.counts)
    summary.seconds = clock() - start
    return summary


def make_executor(device, reps=25, warmup=3, fastest=5):
    """A :class:`TorchExecutor` on ``device`` (cpu or cuda)."""
    from scaledl_profiler import backend
    from scaledl_profiler.deps import require
    torch = require("torch")
    return TorchExecutor(torch, backend.make(torch, device), reps=reps, warmup=warmup, fastest=fastest)


def tables_option(text):
    """``--ops bmm,linear`` -> the tables, validated."""
    out: List[str] = []
    for part in (text or "").split(","):
        t = part.strip()
        if not t:
            continue
        if t not in COLUMNS:
            raise ValueError(f"--ops: unknown table '{t}' (tables: {', '.join(TABLES)})")
        if t not in out:
            out.append(t)
    if not out:
        raise ValueError(f"--ops needs at least one of {', '.join(TABLES)}")
    return tuple(out)
