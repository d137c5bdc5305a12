"""What machine this is, for machine.json: CPU model, cores, SIMD width, caches, and the software that measured.

scaledl reads ``name`` (the machine's name in a dataset), ``cpus``, ``avx512``/``avx2``, ``l2`` and, where known,
``clock_mhz`` and ``memory_bandwidth_gbps``. Everything else is provenance.
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


def describe(device="cpu", threads_note=None):
    """A description of this machine (no PyTorch needed; its version is added when it imports)."""
    info = _lscpu()
    flags = set(info.get("Flags", "").split()) or _cpuinfo_flags()
    name = info.get("Model name") or platform.processor() or platform.machine() or "cpu"
    host = platform.node()
    # The CPU's model name does not identify a machine (VMs of one name differ by several times on some
    # operators): the host name is part of the machine's name in a dataset. Edit machine.json to group hosts.
    d = {"name": f"{name} @ {host}" if host else name, "cpu": name, "host": host, "cpus": os.cpu_count(), "avx512": "avx512f" in flags, "avx2": "avx2" in flags,
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
        if device == "cuda" and torch.cuda.is_available():
            d["gpu"] = torch.cuda.get_device_name(0)
            d["name"] = d["gpu"]
    except ImportError:
        pass
    if threads_note:
        d["note"] = threads_note
    return d


def busy_processes(threshold=20.0):
    """Other processes using more than ``threshold`` % CPU right now (Linux ``ps``); empty when unknown."""
    try:
        out = subprocess.run(["ps", "-eo", "pid,pcpu,comm", "--no-headers"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    me = os.getpid()
    busy = []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+([\d.]+)\s+(.*)", line)
        if m and int(m.group(1)) != me and float(m.group(2)) > threshold:
            busy.append(f"{m.group(3)} (pid {m.group(1)}, {m.group(2)} % CPU)")
    return busy
