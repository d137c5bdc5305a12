import csv
import json

import pytest

from scaledl_profiler import dataset
from scaledl_profiler.planfile import Run


def run(batch=8, phase="train", res=112):
    return Run("resnet18", batch, 1, 1, phase, res, "resnet", "graphs/resnet18_r112.onnx")


def test_pass_rows_take_the_median_and_range():
    row = dataset.pass_row(0, run(), [30.0, 10.0, 20.0], 11689512, "graphs/x.onnx", 12.34)
    assert row["iter_ms_p50"] == 20.0 and row["iter_ms_min"] == 10.0 and row["iter_ms_max"] == 30.0
    assert row["reps"] == 3 and row["at_s"] == 12.3 and row["family"] == "resnet"
    with pytest.raises(ValueError):
        dataset.pass_row(0, run(), [], 1, "", 0)


def test_merge_writes_one_row_per_run_with_the_median_over_passes(tmp_path):
    store = dataset.Passes(tmp_path)
    store.append([dataset.pass_row(0, run(), [10, 11, 12], 5, "g.onnx", 1),
                  dataset.pass_row(0, run(batch=2), [4, 4, 4], 5, "g.onnx", 2)])
    store.append([dataset.pass_row(1, run(), [20, 21, 22], 5, "g.onnx", 3),
                  dataset.pass_row(2, run(), [14, 15, 16], 5, "g.onnx", 4)])
    assert dataset.merge(tmp_path) == 2
    rows = list(csv.DictReader(open(tmp_path / "runs.csv")))
    assert list(rows[0]) == dataset.RUN_FIELDS
    assert [r["batch"] for r in rows] == ["2", "8"], "sorted by batch numerically"
    b8 = rows[1]
    assert float(b8["iter_ms_p50"]) == 15.0 and b8["passes"] == "3" and b8["reps"] == "9"
    assert float(b8["iter_ms_min"]) == 10 and float(b8["iter_ms_max"]) == 22
    assert store.done() == {(0, run().key()), (0, run(batch=2).key()), (1, run().key()), (2, run().key())}


def test_machine_json_refuses_another_machine(tmp_path):
    dataset.write_machine(tmp_path, {"name": "box", "cpus": 2})
    dataset.write_machine(tmp_path, {"name": "box", "cpus": 2, "extra": 1})
    assert json.load(open(tmp_path / "machine.json")) == {"name": "box", "cpus": 2}
    with pytest.raises(ValueError, match="another machine"):
        dataset.write_machine(tmp_path, {"name": "other", "cpus": 2})


def test_new_columns_come_last_and_the_old_ones_are_unchanged():
    old = ["model", "family", "resolution", "batch", "world_size", "threads", "phase", "iter_ms_p50", "iter_ms_min",
           "iter_ms_max", "reps", "passes", "params", "graph"]
    assert dataset.RUN_FIELDS == old + ["precision", "device", "memory_format"]
    assert dataset.PASS_FIELDS[-3:] == ["precision", "device", "memory_format"]


def test_precision_and_device_are_written_and_part_of_the_run_identity(tmp_path):
    fp16 = Run("bert", 8, 1, 1, "train", 128, "bert", "", precision="fp16")
    fp32 = Run("bert", 8, 1, 1, "train", 128, "bert", "")
    store = dataset.Passes(tmp_path)
    store.append([dataset.pass_row(0, fp16, [5.0], 9, "", 1, device="NVIDIA H100 80GB HBM3"),
                  dataset.pass_row(0, fp32, [9.0], 9, "", 2, device="NVIDIA H100 80GB HBM3")])
    assert dataset.merge(tmp_path) == 2
    rows = list(csv.DictReader(open(tmp_path / "runs.csv")))
    assert [(r["precision"], r["device"], r["iter_ms_p50"]) for r in rows] == [
        ("fp16", "NVIDIA H100 80GB HBM3", "5.0"), ("fp32", "NVIDIA H100 80GB HBM3", "9.0")]


def test_an_old_passes_file_is_upgraded_on_resume(tmp_path):
    old_fields = dataset.PASS_FIELDS[:-3]
    with open(tmp_path / "passes.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=old_fields)
        w.writeheader()
        w.writerow({k: v for k, v in dataset.pass_row(0, run(), [10.0], 5, "g.onnx", 1).items() if k in old_fields})
    store = dataset.Passes(tmp_path)
    assert store.done() == {(0, run().key())}, "old rows were FP32"
    store.append([dataset.pass_row(1, run(), [12.0], 5, "g.onnx", 2, device="cpu x")])
    rows = list(csv.DictReader(open(tmp_path / "passes.csv")))
    assert list(rows[0]) == dataset.PASS_FIELDS
    assert [(r["pass"], r["precision"], r["device"], r["memory_format"]) for r in rows] == [
        ("0", "fp32", "", "nchw"), ("1", "fp32", "cpu x", "nchw")]


def test_failures_are_appended_with_a_header(tmp_path):
    r = {k: "" for k in dataset.FAIL_FIELDS}
    dataset.append_failures(tmp_path, [dict(r, model="a", status="oom")])
    dataset.append_failures(tmp_path, [dict(r, model="b", status="skipped")])
    rows = list(csv.DictReader(open(tmp_path / "failed.csv")))
    assert [(x["model"], x["status"]) for x in rows] == [("a", "oom"), ("b", "skipped")]


def test_repair_tail_drops_only_bytes_after_the_last_newline(tmp_path):
    path = tmp_path / "t.csv"
    assert not dataset.repair_tail(path), "missing: nothing to do"
    path.write_bytes(b"")
    assert not dataset.repair_tail(path)
    path.write_bytes(b"a,b\r\n1,2\r\n")
    assert not dataset.repair_tail(path) and path.read_bytes() == b"a,b\r\n1,2\r\n"
    logs = []
    path.write_bytes(b"a,b\r\n1,2\r\n3,")
    assert dataset.repair_tail(path, logs.append) and path.read_bytes() == b"a,b\r\n1,2\r\n"
    assert len(logs) == 1 and "'3,'" in logs[0] and "t.csv" in logs[0]
    path.write_bytes(b"a,b\r\n1,2\r\n" + b"\0" * 70000)  # a power cut can leave a block of zeros
    assert dataset.repair_tail(path, logs.append) and path.read_bytes() == b"a,b\r\n1,2\r\n"
    path.write_bytes(b"a,")
    assert dataset.repair_tail(path, logs.append) and path.read_bytes() == b""


def test_appending_after_a_torn_line_never_glues_rows(tmp_path):
    store = dataset.Passes(tmp_path)
    store.append([dataset.pass_row(0, run(), [10.0], 5, "g.onnx", 1)])
    store.append([dataset.pass_row(0, run(batch=2), [4.0], 5, "g.onnx", 2)])
    text = (tmp_path / "passes.csv").read_bytes()
    (tmp_path / "passes.csv").write_bytes(text[:-4])
    assert store.done() == {(0, run().key())}, "the torn row is not read"
    logs = []
    store.append([dataset.pass_row(1, run(), [12.0], 5, "g.onnx", 3)], logs.append)
    assert len(logs) == 1
    rows = list(csv.DictReader(open(tmp_path / "passes.csv")))
    assert [(r["pass"], r["batch"], r["precision"]) for r in rows] == [("0", "8", "fp32"), ("1", "8", "fp32")]
    assert dataset.merge(tmp_path) == 1


def test_runs_csv_and_machine_json_are_replaced_whole(tmp_path, monkeypatch):
    store = dataset.Passes(tmp_path)
    store.append([dataset.pass_row(0, run(), [10.0], 5, "g.onnx", 1)])
    dataset.merge(tmp_path)
    before = (tmp_path / "runs.csv").read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(dataset.os, "fsync", full_disk)
    with pytest.raises(OSError):
        dataset.merge(tmp_path)
    with pytest.raises(OSError):
        dataset.write_machine(tmp_path, {"name": "box"})
    assert (tmp_path / "runs.csv").read_bytes() == before and not (tmp_path / "machine.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["passes.csv", "runs.csv"], "no temporary file left"


def test_memory_format_is_written_and_part_of_the_run_identity(tmp_path):
    last = Run("resnet50", 8, 1, 1, "train", 224, "resnet", "", precision="bf16", memory_format="channels_last")
    first = Run("resnet50", 8, 1, 1, "train", 224, "resnet", "", precision="bf16")
    store = dataset.Passes(tmp_path)
    store.append([dataset.pass_row(0, last, [5.0], 9, "", 1, device="NVIDIA H200"),
                  dataset.pass_row(0, first, [9.0], 9, "", 2, device="NVIDIA H200")])
    assert dataset.merge(tmp_path) == 2
    rows = list(csv.DictReader(open(tmp_path / "runs.csv")))
    assert [(r["memory_format"], r["iter_ms_p50"]) for r in rows] == [("channels_last", "5.0"), ("nchw", "9.0")]
    with open(tmp_path / "passes.csv", "a") as f:
        f.write(",".join(["3", "x", "", "", "1", "1", "1", "train", "1", "1", "1", "1", "", "", "1", "fp32", "",
                          "nhcw"]) + "\n")
    with pytest.raises(ValueError, match="memory_format must be nchw or channels_last, got 'nhcw'"):
        dataset.Passes(tmp_path).rows()
