"""Hugging Face export and measurement from tiny configurations, offline; skipped without PyTorch and a
transformers release that supports it."""
import csv
import json
import re

import pytest

torch = pytest.importorskip("torch")

from scaledl_profiler import cli, deps, hf  # noqa: E402

try:
    deps.transformers_with_torch()
except ImportError as e:
    pytest.skip(f"transformers not usable here: {e}", allow_module_level=True)

TINY = {"model_type": "gpt2", "n_embd": 32, "n_head": 2, "n_layer": 2, "vocab_size": 100, "n_positions": 64}
TINY_T5 = {"model_type": "t5", "d_model": 32, "d_ff": 64, "d_kv": 16, "num_heads": 2, "num_layers": 1,
           "vocab_size": 100, "is_encoder_decoder": True}


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)


def config(tmp_path, d, name="tiny.json"):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


def test_export_from_a_config_reports_real_nodes_and_hides_warnings(tmp_path, capsys):
    out = tmp_path / "graphs" / "tiny.onnx"
    assert cli.main(["export", "--config", config(tmp_path, TINY), "--seq", "16", "--out", str(out)]) == 0
    o = capsys.readouterr()
    m = re.fullmatch(r"wrote .*tiny\.onnx: (\d+) nodes, (\d+) trainable parameters\n", o.out)
    assert m, o.out
    nodes, params = int(m.group(1)), int(m.group(2))
    model = hf.build("hf:" + str(tmp_path / "tiny.json"), 16)
    assert params == sum(p.numel() for p in model.parameters())
    assert "Warning:" not in o.err and "Traceback" not in o.err
    assert o.err == "" or re.fullmatch(r"\d+ warnings? during export \(.*\); --verbose prints them\n", o.err)
    onnx = pytest.importorskip("onnx")
    g = onnx.load(str(out)).graph
    assert nodes == len(g.node) > 50
    dims = g.input[0].type.tensor_type.shape.dim
    assert g.input[0].name == "input_ids" and dims[0].dim_param == "batch" and dims[1].dim_value == 16
    assert not g.initializer, "graph only: weights are inputs"
    assert "Dropout" in {n.op_type for n in g.node}, "training mode"
    ort = pytest.importorskip("onnxruntime")
    import numpy as np
    session = ort.InferenceSession(str(out))
    rng = np.random.default_rng(0)
    feed = {i.name: (rng.integers(0, 100, (3, 16)) if i.name == "input_ids"
                     else rng.standard_normal(i.shape).astype(np.float32) * 0.02) for i in session.get_inputs()}
    (logits,) = session.run(None, feed)
    assert logits.shape == (3, 16, 100), "the batch stayed symbolic (traced at batch 2)"


def test_verbose_prints_the_captured_warnings(tmp_path, capsys):
    assert cli.main(["export", "--config", config(tmp_path, TINY), "--seq", "8", "--out", "v.onnx",
                     "--verbose"]) == 0
    err = capsys.readouterr().err
    if "during export" not in err:
        pytest.skip("this PyTorch/transformers pair warns of nothing")
    assert re.search(r"^\w*Warning: ", err, re.MULTILINE)


def test_encoder_decoder_configs_export(tmp_path, capsys):
    assert cli.main(["export", "--config", config(tmp_path, TINY_T5, "t5.json"), "--seq", "8"]) == 0
    assert (tmp_path / "graphs" / "t5_r8.onnx").exists(), "default name: graphs/<config stem>_r<seq>.onnx"


def test_a_sequence_beyond_the_positions_is_refused(tmp_path, capsys):
    assert cli.main(["export", "--config", config(tmp_path, TINY), "--seq", "65"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seq 65 exceeds the 64 positions" in err


def test_every_built_in_configuration_loads_offline():
    for name in hf.CONFIGS:
        cfg = hf.config(name)
        assert cfg.model_type == hf.CONFIGS[name]["model_type"]
    assert hf.config("hf:gpt2-medium").n_layer == 24 and hf.config("t5-small").d_model == 512


def test_an_unknown_hub_name_offline_says_what_to_do():
    with pytest.raises(ValueError, match="not a built-in configuration .* export --config PATH"):
        hf.config("nobody-here/no-such-model-xyz")


def test_measure_a_transformer_from_its_config(tmp_path):
    from scaledl_profiler.measure import measure, run_job_inline
    cfg = config(tmp_path, TINY)
    (tmp_path / "plan.csv").write_text("model,resolution,batch,world_size,threads,phase\n"
                                       f"hf:{cfg},16,2,1,1,train\nhf:{cfg},16,2,1,1,infer\n")
    assert measure(tmp_path / "plan.csv", tmp_path / "data", passes=1, warmup=1, reps=1, log=lambda s: None,
                   runner=run_job_inline, check_idle=False) == 2
    rows = list(csv.DictReader(open(tmp_path / "data" / "runs.csv")))
    assert {r["phase"] for r in rows} == {"train", "infer"} and all(float(r["iter_ms_p50"]) > 0 for r in rows)
