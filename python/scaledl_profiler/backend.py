"""Where a measurement runs and how it is timed: CPU (wall clock) or one CUDA GPU (CUDA events).

A backend times one call: on CPUs ``time.perf_counter`` around it; on GPUs a pair of ``torch.cuda.Event(
enable_timing=True)`` recorded on the current stream before and after it, then ``end.synchronize()`` and
``start.elapsed_time(end)``, so the time is the GPU's and not the launch queue's. It also applies a precision (TF32
switches, autocast context, GradScaler) and recognises out-of-memory errors.

Tests run the CUDA path without a GPU by faking ``torch.cuda`` and setting :data:`PLACE` to ``"cpu"`` (tensors then
live on the CPU while every timing, synchronisation and precision call goes through the CUDA code).
"""
import time

from scaledl_profiler import precision as prec

PLACE = None
"""Test hook: a torch device string used instead of ``cuda:RANK`` for tensors (None: the real GPU)."""

DEVICES = ("cpu", "cuda")


class CpuBackend:
    kind = "cpu"

    def __init__(self, torch, rank=0):
        self.torch = torch
        self.rank = rank
        self.device = torch.device("cpu")
        self._name = None

    @property
    def name(self):
        """The CPU's model name (for the ``device`` column)."""
        if self._name is None:
            from scaledl_profiler.machine import cpu_name
            self._name = cpu_name()
        return self._name

    def sync(self):
        pass

    def time_ms(self, fn):
        t = time.perf_counter()
        fn()
        return 1000.0 * (time.perf_counter() - t)

    def apply(self, precision):
        """Sets the global math switches of ``precision`` (none on CPUs: TF32 is a GPU format)."""
        prec.check(precision)

    def autocast(self, precision):
        return prec.autocast(self.torch, "cpu", precision)

    def scaler(self, precision, training):
        return None

    def is_oom(self, error):
        return isinstance(error, MemoryError)

    def release(self):
        pass


class CudaBackend:
    kind = "cuda"

    def __init__(self, torch, rank=0):
        cuda = torch.cuda
        if not cuda.is_available():
            raise ValueError("--device cuda: no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is "
                             "False); use --device cpu, or a PyTorch built with CUDA")
        if rank >= cuda.device_count():
            raise ValueError(f"--device cuda: worker {rank} needs GPU {rank}, but only {cuda.device_count()} "
                             "GPU(s) are visible (world_size must not exceed the GPUs)")
        self.torch = torch
        self.rank = rank
        cuda.set_device(rank)
        self.device = torch.device(PLACE or f"cuda:{rank}")
        self.name = cuda.get_device_name(rank)

    def sync(self):
        self.torch.cuda.synchronize(self.rank)

    def time_ms(self, fn):
        cuda = self.torch.cuda
        start = cuda.Event(enable_timing=True)
        end = cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end))

    def apply(self, precision):
        prec.set_math_flags(self.torch, precision)

    def autocast(self, precision):
        return prec.autocast(self.torch, "cuda", precision)

    def scaler(self, precision, training):
        return prec.grad_scaler(self.torch, precision, "cuda") if training else None

    def is_oom(self, error):
        oom = getattr(self.torch.cuda, "OutOfMemoryError", None)
        return (oom is not None and isinstance(error, oom)) or (
            isinstance(error, RuntimeError) and "out of memory" in str(error))

    def release(self):
        self.torch.cuda.empty_cache()


def make(torch, kind, rank=0):
    """The backend of ``kind`` (cpu or cuda) for worker ``rank``; ValueError when the device is not there."""
    if kind == "cpu":
        return CpuBackend(torch, rank)
    if kind == "cuda":
        return CudaBackend(torch, rank)
    raise ValueError(f"--device must be one of {', '.join(DEVICES)}, got '{kind}'")


def process_group(kind):
    """The torch.distributed backend for DDP workers on ``kind``: NCCL on GPUs, gloo on CPUs."""
    return "nccl" if kind == "cuda" else "gloo"


def fastest_mean(times_ms, k=5):
    """Mean of the ``k`` smallest times (NeuSight's kernel statistic); all of them when there are fewer."""
    if not times_ms:
        raise ValueError("no timed runs")
    best = sorted(times_ms)[:k]
    return sum(best) / len(best)
