"""Pieces that need no PyTorch: ONNX node counting, warning capture, missing-package messages, CLI usage errors,
Hugging Face configuration lookup."""
import json
import os
import sys
import warnings

import pytest

from scaledl_profiler import cli, deps, hf
from scaledl_profiler.capture import Captured
from scaledl_profiler.export import count_nodes


def field(number, payload):
    """A length-delimited protobuf field."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_nodes_are_counted_from_the_protobuf_wire_format():
    node = field(4, b"Relu")  # NodeProto.op_type
    graph = field(1, node) * 3 + field(2, b"g") + field(1, node)
    model = bytes([1 << 3, 8]) + field(7, graph) + field(8, bytes([1 << 3 | 0, 13]))  # ir_version, opset
    assert count_nodes(model) == 4
    assert count_nodes(b"") == 0
    with pytest.raises(ValueError, match="not an ONNX file"):
        count_nodes(field(7, graph)[:-2])


def test_captured_counts_python_warnings_and_printed_lines():
    with Captured() as cap:
        warnings.warn("traced a constant", UserWarning)
        warnings.warn("traced a constant", UserWarning)
        warnings.warn("old API", DeprecationWarning)
        print("Warning: constant folding skipped", flush=True)
        os.write(2, b"[W shape_inference.cpp:12] something\n")
        print("plain chatter", file=sys.stderr, flush=True)
    assert cap.count() == 5
    assert cap.summary() == "5 warnings during export (UserWarning 2, printed 2, DeprecationWarning 1)"
    details = cap.details()
    assert "UserWarning: traced a constant [x2]" in details and "plain chatter" in details


def test_captured_is_quiet_when_nothing_happens():
    with Captured() as cap:
        pass
    assert cap.count() == 0 and cap.summary() == ""


def test_missing_packages_are_named_with_how_to_install_them():
    assert "timm is not installed (pip install timm)" in deps.message(ImportError("x", name="timm"))
    assert "transformers is not installed (pip install transformers)" in deps.message(
        ModuleNotFoundError("x", name="transformers"))
    assert "PyTorch" in deps.message(ImportError("x", name="torch"))
    assert deps.message(ImportError("x", name="foo.bar")).startswith("the Python package 'foo' is not installed")


def test_require_names_the_dependency_that_is_really_missing(monkeypatch):
    import importlib
    real = importlib.import_module

    def fake_import(name, *a, **kw):
        if name == "scaledl_fake_pkg":
            raise ModuleNotFoundError("No module named 'torchvision'", name="torchvision")
        return real(name, *a, **kw)
    monkeypatch.setattr(importlib, "import_module", fake_import)
    with pytest.raises(deps.MissingDependency) as e:
        deps.require("scaledl_fake_pkg")
    assert str(e.value).startswith("torchvision is not installed") and "needed by scaledl_fake_pkg" in str(e.value)
    assert "PyTorch is not installed" not in str(e.value)
    with pytest.raises(deps.MissingDependency, match="^scaledl_other is not installed"):
        deps.require("scaledl_other")


@pytest.mark.parametrize("argv,fragment", [
    (["export"], "give a model name"),
    (["export", "gpt2", "--config", "c.json"], "not both"),
    (["export", "gpt2", "--seq", "64", "--size", "32"], "disagree"),
    (["export", "--config", "c.yaml"], "config.json"),
    (["export", "resnet18", "--seq", "64"], "--seq is for Hugging Face models"),
    (["measure", "plan.csv", "--out", "d", "--precision", "fp16"], "fp16 needs --device cuda"),
    (["measure", "plan.csv", "--out", "d", "--precision", "fp8"], "invalid choice"),
    (["measure", "plan.csv", "--out", "d", "--memory-format", "channels_last"], "channels_last needs --device cuda"),
    (["measure", "plan.csv", "--out", "d", "--memory-format", "nhcw"], "invalid choice"),
    (["kernels", "--out", "d", "--device", "cpu", "--precision", "fp32,tf32"], "tf32 needs --device cuda"),
    (["kernels", "--out", "d", "--precision", "fp4"], "--precision must be one of"),
    (["kernels", "--out", "d", "--ops", "gemm"], "unknown table 'gemm'"),
])
def test_usage_errors_exit_2_naming_the_option(argv, fragment, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert err.count("\n") == 1, "one line, as every other error: " + err


@pytest.mark.parametrize("argv,option", [
    (["measure", "plan.csv", "--out", "d", "--max-seconds", "nan"], "--max-seconds"),
    (["measure", "plan.csv", "--out", "d", "--cap-s", "-1"], "--cap-s"),
    (["measure", "plan.csv", "--out", "d", "--max-seconds", "inf"], "--max-seconds"),
    (["kernels", "--out", "d", "--max-seconds", "-5"], "--max-seconds"),
    (["kernels", "--out", "d", "--max-gib", "0"], "--max-gib"),
    (["here", "--budget-s", "nan"], "--budget-s"),
])
def test_budgets_are_positive_finite_numbers_checked_before_anything_runs(argv, option, capsys):
    # NaN would compare false with every clock reading (no budget at all), a negative budget start nothing
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert option in err and "must be a positive number" in err and err.count("\n") == 1


def test_machine_for_cuda_without_a_gpu_is_an_error_not_the_cpus_description(monkeypatch, capsys):
    import scaledl_profiler.machine as machine
    monkeypatch.setattr(machine, "describe", lambda device="cpu", threads_note=None: {"name": "cpu @ h"})
    assert cli.main(["machine", "--device", "cuda"]) == 1
    err = capsys.readouterr().err
    assert "--device cuda: PyTorch is not installed" in err and err.count("\n") == 1
    monkeypatch.setattr(machine, "describe", lambda device="cpu", threads_note=None: {"name": "cpu @ h",
                                                                                       "torch": "2.1"})
    assert cli.main(["machine", "--device", "cuda"]) == 1
    assert "PyTorch sees no CUDA GPU" in capsys.readouterr().err
    assert cli.main(["machine"]) == 0


def test_a_missing_plan_is_exit_1(tmp_path, capsys):
    assert cli.main(["measure", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "d")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.csv" in err


def test_hugging_face_names():
    assert hf.is_hf("gpt2") and hf.is_hf("hf:anything") and hf.is_hf("facebook/opt-125m")
    assert hf.is_hf("my/config.json") and not hf.is_hf("resnet50") and not hf.is_hf("timm:a/b")
    d, source = hf.config_dict("openai-community/gpt2")
    assert d["n_layer"] == 12 and d["vocab_size"] == 50257 and source == "built-in (gpt2)"
    assert hf.config_dict("bert-base-uncased")[0]["hidden_size"] == 768
    assert hf.config_dict("some/unknown-model") is None
    for name, d in hf.CONFIGS.items():
        assert d["model_type"] and d["vocab_size"] > 0, name
    copy, _ = hf.config_dict("llama-small")
    copy["vocab_size"] = -1
    assert hf.CONFIGS["llama-small"]["vocab_size"] == 32000, "callers get copies"


def test_config_files_are_checked_naming_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such configuration file"):
        hf.read_config_file(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"model_type": "bert",\n "hidden_size": }')
    with pytest.raises(ValueError, match=r"bad.json:2:\d+: not JSON"):
        hf.read_config_file(str(bad))
    untyped = tmp_path / "untyped.json"
    untyped.write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(ValueError, match='untyped.json: no "model_type"'):
        hf.read_config_file(str(untyped))


def test_export_of_a_missing_config_says_the_file_before_anything_else(tmp_path, capsys):
    assert cli.main(["export", "--config", str(tmp_path / "nope" / "config.json"), "--out", str(tmp_path / "m.onnx")]) \
        == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nope/config.json: no such file" in err and "PyTorch" not in err, err
    assert not (tmp_path / "m.onnx").exists()


def test_ddp_backends_and_the_kernel_statistic():
    from scaledl_profiler import backend
    assert backend.process_group("cuda") == "nccl" and backend.process_group("cpu") == "gloo"
    assert backend.fastest_mean([9, 1, 2, 3, 4, 5, 8], 5) == 3.0
    assert backend.fastest_mean([4.0, 2.0], 5) == 3.0
    with pytest.raises(ValueError):
        backend.fastest_mean([])
    with pytest.raises(ValueError, match="--device must be one of cpu, cuda"):
        backend.make(None, "tpu")


def test_a_stream_kept_during_the_capture_writes_through_afterwards(capsys):
    with Captured():
        kept = sys.stderr  # as logging.StreamHandler() does when a library is imported during an export
        kept.write("hidden\n")
    kept.write("shown\n")
    err = capsys.readouterr().err
    assert "shown" in err and "hidden" not in err


PLAN = "model,resolution,batch,world_size,threads,phase\nresnet18,32,2,1,1,train\n"


def _one_error_line(capsys, fragment):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("scaledl_profiler: ") and "Traceback" not in err, err
    assert fragment in err, err
    return err


@pytest.mark.parametrize("command", ["measure", "kernels"])
def test_an_out_that_is_a_file_is_one_line_exit_1(tmp_path, capsys, command):
    (tmp_path / "plan.csv").write_text(PLAN)
    taken = tmp_path / "taken"
    taken.write_text("x")
    argv = ["measure", str(tmp_path / "plan.csv")] if command == "measure" else ["kernels"]
    assert cli.main(argv + ["--out", str(taken)]) == 1
    _one_error_line(capsys, f"--out {taken}: is a file, not a folder")
    assert cli.main(argv + ["--out", str(taken / "sub")]) == 1
    _one_error_line(capsys, f"--out {taken / 'sub'}: cannot be created: {taken} is a file, not a folder")


def test_an_unwritable_out_is_one_line_exit_1(tmp_path, capsys, monkeypatch):
    (tmp_path / "plan.csv").write_text(PLAN)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(locked) else real(p, mode))
    for argv in (["measure", str(tmp_path / "plan.csv")], ["kernels"]):
        assert cli.main(argv + ["--out", str(locked)]) == 1
        _one_error_line(capsys, f"--out {locked}: is not writable (permission denied)")
        assert cli.main(argv + ["--out", str(locked / "new")]) == 1
        _one_error_line(capsys, f"--out {locked / 'new'}: cannot be created: {locked} is not writable")
    assert not (locked / "new").exists()
    # a file's option says the file and its folder, once each
    from scaledl_profiler import dataset
    with pytest.raises(ValueError) as e:
        dataset.check_file(str(locked / "x.onnx"), "--out", "e.g. m.onnx")
    assert str(e.value) == (f"--out {locked / 'x.onnx'}: its folder {locked} is not writable (permission denied); "
                            "name a file in a folder you may write in (e.g. m.onnx)")
    taken = tmp_path / "taken"
    taken.write_text("x")
    with pytest.raises(ValueError, match=r"its folder .*taken is a file, not a folder; name a file in a folder"):
        dataset.check_file(str(taken / "x.onnx"), "--out")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_a_folder_without_write_permission_is_one_line_exit_1(tmp_path, capsys):
    (tmp_path / "plan.csv").write_text(PLAN)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert cli.main(["measure", str(tmp_path / "plan.csv"), "--out", str(locked / "data")]) == 1
    finally:
        locked.chmod(0o700)
    _one_error_line(capsys, "not writable")


def test_measure_without_pytorch_says_so_in_one_line_and_creates_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails as if it were not installed
    (tmp_path / "plan.csv").write_text(PLAN)
    assert cli.main(["measure", str(tmp_path / "plan.csv"), "--out", str(tmp_path / "data")]) == 1
    _one_error_line(capsys, "PyTorch is not installed")
    assert not (tmp_path / "data").exists()


def test_errors_of_any_kind_are_one_line(tmp_path, capsys, monkeypatch):
    from scaledl_profiler import measure
    (tmp_path / "plan.csv").write_text(PLAN)
    argv = ["measure", str(tmp_path / "plan.csv"), "--out", str(tmp_path / "d")]

    def raising(error):
        def fake(*args, **kwargs):
            raise error
        return fake
    monkeypatch.setattr(measure, "measure", raising(PermissionError(13, "Permission denied", "/x/passes.csv")))
    assert cli.main(argv) == 1
    _one_error_line(capsys, "error: /x/passes.csv: Permission denied")
    monkeypatch.setattr(measure, "measure", raising(OSError(28, "No space left on device")))
    assert cli.main(argv) == 1
    _one_error_line(capsys, "error: No space left on device")
    monkeypatch.setattr(measure, "measure", raising(KeyError("pass")))
    assert cli.main(argv) == 3
    _one_error_line(capsys, "internal error: KeyError: 'pass'")
    monkeypatch.setattr(measure, "measure", raising(KeyboardInterrupt()))
    assert cli.main(argv) == 130
    _one_error_line(capsys, "interrupted (run the same command again to resume)")
    monkeypatch.setattr(measure, "measure", raising(ValueError("first line\nsecond line")))
    assert cli.main(argv) == 1
    _one_error_line(capsys, "first line; second line")


def test_a_damaged_plan_or_machine_json_is_one_line(tmp_path, capsys):
    (tmp_path / "plan.bin").write_bytes(b"model,batch\n\xff\xfe\x00")
    assert cli.main(["measure", str(tmp_path / "plan.bin"), "--out", str(tmp_path / "d")]) == 1
    _one_error_line(capsys, "plan.bin: not UTF-8 text")
    assert cli.main(["measure", str(tmp_path), "--out", str(tmp_path / "d")]) == 1
    _one_error_line(capsys, "is a folder, not a plan file")
    from scaledl_profiler import dataset
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "machine.json").write_text('{"name": "box", "cp')
    with pytest.raises(ValueError, match=r"machine.json:1: not JSON .*a damaged file"):
        dataset.write_machine(tmp_path / "d", {"name": "box"})


def test_busy_processes_leave_out_this_process_and_its_own_children(monkeypatch):
    import os
    import subprocess
    from scaledl_profiler import machine
    me = os.getpid()
    table = f"  {me} 1 99.0 python3\n  424242 {me} 100 ps\n  777 1 55.5 stress\n  778 1 3.0 idle\n"
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, table, ""))
    assert machine.busy_processes() == ["stress (pid 777, 55.5 % CPU)"]
