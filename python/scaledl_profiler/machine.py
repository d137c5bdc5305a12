"""What machine this is, for machine.json: CPU model, cores, SIMD width, caches, GPUs, and the software that measured.

scaledl reads ``name`` (the machine's name in a dataset), ``cpus``, ``avx512``/``avx2``, ``l2`` and, where known,
``clock_mhz`` and ``memory_bandwidth_gbps``. With ``--device cuda`` it also holds ``gpu`` (``torch.cuda.
get_device_name(0)``, e.g. "NVIDIA A100-SXM4-80GB", which is then also ``name``), ``gpus`` (how many are visible),
``cuda`` (the CUDA version PyTorch was built with), ``cudnn`` (cuDNN version number), ``driver`` (the NVIDIA driver,
from nvidia-smi or /proc), ``gpu_memory_gib``, ``gpu_sms`` and ``gpu_capability`` where available. Everything else
is provenance.
"""
import os
import platform
import re
import subprocess


def _lscpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {k.strip(): v.strip() for k, v in (l.split(":", 1) for l in out.splitlines() if ":" in l)}


def _cpuinfo_flags():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_name():
    """The CPU's model name (lscpu), else what Python knows."""
    return _lscpu().get("Model name") or platform.processor() or platform.machine() or "cpu"


def nvidia_driver():
    """The NVIDIA driver version, from nvidia-smi or /proc/driver/nvidia/version; None when unknown."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
        if out and out[0].strip():
            return out[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            m = re.search(r"Kernel Module\s+([\d.]+)", f.read())
            return m.group(1) if m else None
    except OSError:
        return None


def describe_gpus(torch):
    """The GPU fields of machine.json (empty when CUDA is not available)."""
    cuda = torch.cuda
    if not cuda.is_available():
        return {}
    d = {"gpu": cuda.get_device_name(0), "gpus": cuda.device_count()}
    if getattr(torch.version, "cuda", None):
        d["cuda"] = torch.version.cuda
    try:
        v = torch.backends.cudnn.version()
        if v:
            d["cudnn"] = v
    except (RuntimeError, AttributeError):
        pass
    try:
        p = cuda.get_device_properties(0)
        d["gpu_memory_gib"] = round(p.total_memory / 2 ** 30, 1)
        d["gpu_sms"] = p.multi_processor_count
        d["gpu_capability"] = f"{p.major}.{p.minor}"
    except (RuntimeError, AttributeError, AssertionError):
        pass
    driver = nvidia_driver()
    if driver:
        d["driver"] = driver
    return d


def describe(device="cpu", threads_note=None):
    """A description of this machine (no PyTorch needed; its version, and the GPUs with ``device="cuda"``, are
    added when it imports)."""
    info = _lscpu()
    flags = set(info.get("Flags", "").split()) or _cpuinfo_flags()
    name = info.get("Model name") or platform.processor() or platform.machine() or "cpu"
    host = platform.node()
    # The CPU's model name does not identify a machine (VMs of one name differ by several times on some
    # operators): the host name is part of the machine's name in a dataset. Edit machine.json to group hosts.
    d = {"name": f"{name} @ {host}" if host else name, "cpu": name, "host": host, "cpus": os.cpu_count(),
         "avx512": "avx512f" in flags, "avx2": "avx2" in flags,
         "python": platform.python_version(), "kernel": platform.release(), "os": platform.system()}
    for key, field in (("l2", "L2 cache"), ("l3", "L3 cache")):
        if info.get(field):
            d[key] = info[field]
    mhz = info.get("CPU max MHz") or info.get("CPU MHz")
    if mhz:
        try:
            d["clock_mhz"] = round(float(mhz))
        except ValueError:
            pass
    try:
        import torch
        d["torch"] = torch.__version__
        if device == "cuda":
            d.update(describe_gpus(torch))
            if "gpu" in d:
                d["name"] = d["gpu"]
    except ImportError:
        pass
    if threads_note:
        d["note"] = threads_note
    return d


def busy_processes(threshold=20.0):
    """Other processes using more than ``threshold`` % CPU right now (Linux ``ps``); empty when unknown."""
    try:
        out = subprocess.run(["ps", "-eo", "pid,ppid,pcpu,comm", "--no-headers"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    me = os.getpid()
    busy = []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(\d+)\s+([\d.]+)\s+(.*)", line)
        if not m:
            continue
        pid, parent, cpu, name = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        # this process and its own children (the ps just started, whose CPU share is its short life's) are not
        # other processes
        if me not in (pid, parent) and float(cpu) > threshold:
            busy.append(f"{name} (pid {pid}, {cpu} % CPU)")
    return busy
