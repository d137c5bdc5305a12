"""The CUDA paths on a CPU: torch.cuda is faked (events that always say 7 ms, a GPU name, no-op synchronisation),
tensors stay on the CPU (backend.PLACE), autocast and GradScaler are recorded. Skipped without PyTorch."""
import csv
import json
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from scaledl_profiler import backend, cli, kernels, machine  # noqa: E402
from scaledl_profiler.measure import _step, measure, run_job_inline  # noqa: E402

GPU = "Fake GPU 80GB"
NET = '''
import contextlib
import torch
import torch.nn as nn

RECORDS = []
ACTIVE = [None]


@contextlib.contextmanager
def fake_autocast(device_type, dtype):
    ACTIVE.append((device_type, dtype))
    try:
        yield
    finally:
        ACTIVE.pop()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        RECORDS.append((torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, ACTIVE[-1]))
        return self.fc(x)


def make(size=None):
    return Net()


def scaledl_input(batch, size):
    return torch.randn(batch, 8)
'''


class FakeEvent:
    created = 0

    def __init__(self, enable_timing=False):
        assert enable_timing, "timing events"
        FakeEvent.created += 1
        self.recorded = False

    def record(self, stream=None):
        self.recorded = True

    def synchronize(self):
        assert self.recorded

    def elapsed_time(self, end):
        assert self.recorded and end.recorded
        return 7.0


class FakeScaler:
    instances = []

    def __init__(self, *args, **kwargs):
        self.calls = []
        FakeScaler.instances.append(self)

    def scale(self, value):
        self.calls.append("scale")
        return value

    def step(self, opt):
        self.calls.append("step")
        opt.step()

    def update(self):
        self.calls.append("update")


@pytest.fixture
def fake_cuda(monkeypatch, tmp_path):
    (tmp_path / "fakegpu_net.py").write_text(NET)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    net = importlib.import_module("fakegpu_net")
    net.RECORDS.clear()
    cuda = torch.cuda
    monkeypatch.setattr(cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuda, "device_count", lambda: 1)
    monkeypatch.setattr(cuda, "set_device", lambda i: None)
    monkeypatch.setattr(cuda, "get_device_name", lambda i=0: GPU)
    monkeypatch.setattr(cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(cuda, "Event", FakeEvent)
    monkeypatch.setattr(cuda, "get_device_properties", lambda i: SimpleNamespace(
        total_memory=80 * 2 ** 30, multi_processor_count=132, major=9, minor=0))
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch, "autocast", net.fake_autocast)
    if hasattr(getattr(torch, "amp", None), "GradScaler"):
        monkeypatch.setattr(torch.amp, "GradScaler", FakeScaler)
    monkeypatch.setattr(torch.cuda.amp, "GradScaler", FakeScaler)
    monkeypatch.setattr(backend, "PLACE", "cpu")
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", torch.backends.cuda.matmul.allow_tf32)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", torch.backends.cudnn.allow_tf32)
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", torch.backends.cudnn.benchmark)
    FakeScaler.instances.clear()
    FakeEvent.created = 0
    monkeypatch.chdir(tmp_path)
    return net


EXPECTED = {"fp32": (False, False, None), "tf32": (True, True, None),
            "fp16": (False, False, ("cuda", torch.float16)), "bf16": (False, False, ("cuda", torch.bfloat16))}


@pytest.mark.parametrize("precision", list(EXPECTED))
@pytest.mark.parametrize("phase", ["train", "infer"])
def test_each_precision_sets_its_switches_and_autocast(fake_cuda, precision, phase):
    be = backend.make(torch, "cuda")
    model = fake_cuda.make()
    step = _step({"phase": phase, "precision": precision}, model, model, torch.randn(2, 8), be,
                 torch.Generator().manual_seed(0))
    step()
    assert fake_cuda.RECORDS[-1] == EXPECTED[precision]
    scalers = [s for s in FakeScaler.instances if s.calls]
    if precision == "fp16" and phase == "train":
        assert [s.calls for s in scalers] == [["scale", "step", "update"]]
    else:
        assert not scalers, "a GradScaler for fp16 training only"


def test_measure_on_a_fake_gpu_times_with_events_and_writes_precision_and_device(fake_cuda, tmp_path):
    rows = ["fakenet,,2,1,1,infer,fp32"] + [f"fakenet,,2,1,1,{ph},{p}" for p in EXPECTED for ph in ("train", "infer")
                                           if (ph, p) != ("infer", "fp32")]
    (tmp_path / "plan.csv").write_text("model,resolution,batch,world_size,threads,phase,precision\n"
                                       + "\n".join(rows) + "\n")
    n = measure(tmp_path / "plan.csv", tmp_path / "data", passes=1, warmup=1, reps=2, device="cuda",
                factories={"fakenet": ("fakegpu_net", "make")}, log=lambda s: None, runner=run_job_inline,
                check_idle=False)
    assert n == 8
    runs = list(csv.DictReader(open(tmp_path / "data" / "runs.csv")))
    assert {(r["phase"], r["precision"]) for r in runs} == {(ph, p) for p in EXPECTED for ph in ("train", "infer")}
    assert {r["device"] for r in runs} == {GPU}
    assert {r["iter_ms_p50"] for r in runs} == {"7.0"}, "CUDA event times, not the wall clock"
    assert FakeEvent.created >= 2 * 2 * 8
    assert set(fake_cuda.RECORDS) == set(EXPECTED.values())
    m = json.load(open(tmp_path / "data" / "machine.json"))
    assert m["gpu"] == GPU and m["name"] == GPU and m["gpus"] == 1 and m["cuda"] == "12.4"
    assert m["gpu_sms"] == 132 and m["gpu_capability"] == "9.0" and m["gpu_memory_gib"] == 80.0
    assert m["cpus"] >= 1, "the CPU fields stay"


def test_an_out_of_memory_run_is_recorded_and_the_job_goes_on(fake_cuda, tmp_path, monkeypatch):
    real = fake_cuda.Net.forward

    def forward(self, x):
        if x.shape[0] == 64:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(self, x)
    monkeypatch.setattr(fake_cuda.Net, "forward", forward)
    (tmp_path / "plan.csv").write_text("model,batch,world_size,threads,phase\nfakenet,2,1,1,train\n"
                                       "fakenet,64,1,1,train\n")
    n = measure(tmp_path / "plan.csv", tmp_path / "data", passes=1, warmup=1, reps=1, device="cuda",
                factories={"fakenet": ("fakegpu_net", "make")}, log=lambda s: None, runner=run_job_inline,
                check_idle=False, reference="fakenet")
    assert n == 1
    (failed,) = list(csv.DictReader(open(tmp_path / "data" / "failed.csv")))
    assert (failed["batch"], failed["status"], failed["error"]) == ("64", "oom", "out of memory")


def test_kernel_tables_on_a_fake_gpu(fake_cuda, tmp_path):
    ex = kernels.TorchExecutor(torch, backend.make(torch, "cuda"), reps=3, warmup=1)
    s = kernels.run(tmp_path, ["fp32", "tf32"], ex, "tiny", log=lambda m: None)
    assert s.failed == 0
    for table in kernels.TABLES:
        rows = list(csv.DictReader(open(tmp_path / "kernels" / f"{table}.csv")))
        assert list(rows[0]) == kernels.COLUMNS[table]
        assert {r["gpu"] for r in rows} == {GPU} and {float(r["latency_ms"]) for r in rows} == {7.0}
        assert {r["precision"] for r in rows} == {"fp32", "tf32"}
    att = list(csv.DictReader(open(tmp_path / "kernels" / "attention.csv")))
    assert {r["op"] for r in att} == {ex.attention_op} and {r["causal"] for r in att} == {"0", "1"}
    assert torch.backends.cudnn.benchmark is True, "as NeuSight measured"


def test_kernels_compute_what_they_claim_on_the_cpu():
    ex = kernels.TorchExecutor(torch, backend.make(torch, "cpu"), reps=1, warmup=0)
    cases = {
        kernels._gemm("bmm", 2, 3, 4, 5): (2, 3, 5),
        kernels._gemm("linear", 1, 3, 4, 5): (1, 3, 5),
        kernels._vector("elem", "add", 3, 4): (3, 4),
        kernels._vector("ln", "ln", 3, 4): (3, 4),
        kernels._conv(2, 3, 6, 3, 2, 1, 9): (2, 6, 5, 5),
        kernels._attention(ex.attention_op, 2, 3, 8, 4, 1): (2, 3, 8, 4),
    }
    for shape, out in cases.items():
        assert tuple(ex._call(shape, torch.float32)().shape) == out, shape
    causal = kernels._attention("explicit", 1, 1, 4, 2, 1)
    q = ex._call(causal, torch.float32)
    assert torch.isfinite(q()).all()


def test_kernels_without_a_gpu_say_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cli.main(["kernels", "--out", str(tmp_path / "k"), "--quick"]) == 1
    assert "no CUDA GPU is visible" in capsys.readouterr().err


def test_describe_without_cuda_has_no_gpu_fields(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    d = machine.describe("cuda")
    assert "gpu" not in d and d["cpus"] >= 1
