"""Export and measurement with real PyTorch on a tiny model; skipped where PyTorch is not installed."""
import csv
import sys

import pytest

torch = pytest.importorskip("torch")

from scaledl_profiler import cli  # noqa: E402
from scaledl_profiler.export import export  # noqa: E402
from scaledl_profiler.measure import measure  # noqa: E402

FACTORY = ["tiny=tinynet:make"]


@pytest.fixture(autouse=True)
def tiny_module(tmp_path, monkeypatch):
    (tmp_path / "tinynet.py").write_text(
        "import torch.nn as nn\n"
        "def make(size=None):\n"
        "    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),\n"
        "                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(8, 10))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)


def test_export_keeps_training_ops_and_a_dynamic_batch(tmp_path):
    out = tmp_path / "graphs" / "tiny_r16.onnx"
    result = export("tiny", 16, str(out), {"tiny": ("tinynet", "make")})
    assert out.stat().st_size > 0
    assert result.params == 3 * 8 * 9 + 8 + 2 * 8 + 8 * 10 + 10
    assert result.nodes >= 7, "the real node count, read from the file"
    onnx = pytest.importorskip("onnx")
    g = onnx.load(str(out)).graph
    assert result.nodes == len(g.node)
    ops = {n.op_type for n in g.node}
    assert "BatchNormalization" in ops and "Dropout" in ops, "training mode keeps them"
    assert g.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert not g.initializer, "graph only"


def test_cli_export_then_measure_writes_a_dataset(tmp_path, capsys):
    assert cli.main(["export", "tiny", "--size", "16", "--factory", FACTORY[0]]) == 0
    plan = tmp_path / "plan.csv"
    plan.write_text("model,resolution,batch,world_size,threads,phase,graph\n"
                    "tiny,16,2,1,1,train,graphs/tiny_r16.onnx\n"
                    "tiny,16,4,1,1,infer,graphs/tiny_r16.onnx\n")
    assert cli.main(["measure", str(plan), "--out", "data", "--passes", "1", "--reps", "2", "--warmup", "1",
                     "--factory", FACTORY[0]]) == 0
    rows = list(csv.DictReader(open(tmp_path / "data" / "runs.csv")))
    assert [(r["batch"], r["phase"]) for r in rows] == [("2", "train"), ("4", "infer")]
    assert all(float(r["iter_ms_p50"]) > 0 and r["params"] == "330" for r in rows)
    assert rows[0]["graph"] == "graphs/tiny_r16.onnx"
    assert (tmp_path / "data" / "graphs" / "tiny_r16.onnx").exists()
    assert {(r["precision"], r["device"]) for r in rows} == {("fp32", "")}, "CPU rows: the machine is machine.json's"
    assert (tmp_path / "data" / "machine.json").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="gloo over loopback")
def test_two_ddp_workers(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("model,resolution,batch,world_size,threads,phase\ntiny,16,2,2,1,train\n")
    n = measure(plan, tmp_path / "ddp", passes=1, warmup=1, reps=2, factories={"tiny": ("tinynet", "make")},
                log=lambda s: None, check_idle=False)
    assert n == 1
    (row,) = csv.DictReader(open(tmp_path / "ddp" / "runs.csv"))
    assert row["world_size"] == "2" and float(row["iter_ms_p50"]) > 0


def test_errors_are_one_line_with_exit_1(tmp_path, capsys):
    (tmp_path / "bad.csv").write_text("model,batch\nx,1\n")
    assert cli.main(["measure", str(tmp_path / "bad.csv"), "--out", "d"]) == 1
    assert "missing column" in capsys.readouterr().err
