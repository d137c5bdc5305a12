"""The published-runs converter (tools/llm-public/convert.py) on a synthetic source folder: rows of parts and
architectures no published row of the repository names are converted, rows it cannot express are dropped naming why
(never the whole run stopped), and every architecture models.csv describes gets its configuration. The step times
are invented; nothing here is a measurement."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONVERT = ROOT / "tools" / "llm-public" / "convert.py"
MODELS = ROOT / "datasets" / "gpu" / "llm-public" / "models.csv"
COLUMNS = ("source,release,task,system,gpu,num_gpus,gpus_per_node,nvlink_domain,precision,precision_norm,model,"
           "model_key,model_variant,hidden,layers,heads,kv_heads,ffn,vocab,experts,topk,seq,gbs,mbs,tp,pp,cp,vp,ep,"
           "fsdp,ga,dp,step_time_s,step_time_source,tokens_per_s_per_gpu,tflops_per_gpu,mfu_pct,status,"
           "suggested_split,doc_ref,notes").split(",")


def row(**values):
    r = {c: "" for c in COLUMNS}
    r.update(source="synthetic", release="27.01", task="Pre-Training", status="current", cp="1", vp="1",
             doc_ref="none", step_time_source="synthetic")
    r.update(values)
    return r


@pytest.fixture
def converted(tmp_path):
    if not MODELS.is_file():
        pytest.skip("no converted llm-public folder in this checkout")
    src = tmp_path / "src"
    src.mkdir()
    (src / "README.md").write_text("synthetic\n", encoding="utf-8")
    (src / "models.csv").write_bytes(MODELS.read_bytes())
    rows = [
        row(system="DGX-GB300", gpu="GB300 (NVL72)", num_gpus="64", gpus_per_node="4", nvlink_domain="72",
            precision="MXFP8", precision_norm="MXFP8", model="Qwen3 30B A3B", model_key="qwen3-30b-a3b", seq="4096",
            gbs="512", mbs="1", tp="1", pp="1", ep="8", step_time_s="5.0"),
        row(system="DGX-H200", gpu="H200-SXM5-141GB", num_gpus="16", gpus_per_node="8", nvlink_domain="8",
            precision="BF16", precision_norm="BF16", model="GPT 1.7B", model_key="mlm-gpt-1.7b", seq="4096",
            gbs="256", mbs="4", tp="1", pp="1", step_time_s="2.0"),
        row(system="DGX-B300", gpu="B300", num_gpus="8", gpus_per_node="8", nvlink_domain="8", precision="BF16",
            precision_norm="BF16", model="Qwen3-Next", model_key="qwen3-next-80b-a3b", seq="4096", gbs="64",
            mbs="1", tp="2", pp="1", ep="4", step_time_s="3.0"),
        row(system="DGX-GB200", gpu="GB200 (NVL72)", num_gpus="256", gpus_per_node="4", nvlink_domain="72",
            precision="MXFP8", precision_norm="MXFP8", model="DeepSeek-V3", model_key="deepseek-v3",
            model_variant="DeepSeek-V3 (w/o MTP)", seq="4096", gbs="4096", mbs="1", tp="1", pp="4", vp="4", ep="64",
            step_time_s="12.0"),
        row(system="MI300X box", gpu="MI300X", num_gpus="8", gpus_per_node="8", nvlink_domain="8", precision="BF16",
            precision_norm="BF16", model="Llama 3 8B", model_key="llama3-8b", seq="8192", gbs="128", mbs="1",
            tp="1", pp="1", step_time_s="4.0"),
        row(system="DGX-B200", gpu="B200", num_gpus="8", gpus_per_node="8", nvlink_domain="8", precision="MXFP4",
            precision_norm="MXFP4", model="Llama 3 8B", model_key="llama3-8b", seq="8192", gbs="128", mbs="1",
            tp="1", pp="1", step_time_s="1.0"),
        # the source's footnote says this run measured a software regression, not the configuration
        row(system="DGX-B200", gpu="B200", num_gpus="8", gpus_per_node="8", nvlink_domain="8", precision="BF16",
            precision_norm="BF16", model="Llama 3 8B", model_key="llama3-8b", seq="8192", gbs="128", mbs="1",
            tp="1", pp="1", step_time_s="9.0",
            notes="footnote: Performance regression in Llama 3 8B is a known issue; fixed in the next container"),
    ]
    with open(src / "megatron_bridge_perf_summary.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    # another table of the same columns (its rows converted under Megatron core's defaults) and a CSV that is not one
    with open(src / "megatron_lm_scaling.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerow(row(source="Megatron-LM README", system="DGX-H100", gpu="H100-SXM5-80GB", num_gpus="64",
                       gpus_per_node="8", nvlink_domain="8", precision="BF16", precision_norm="BF16",
                       model="GPT 7.1B", model_key="mlm-gpt-7.1b", seq="4096", gbs="512", mbs="1", tp="2", pp="1",
                       step_time_s="6.0"))
        w.writerow(row(source="Megatron-DeepSpeed runs", system="A100 cluster", gpu="A100-SXM4-80GB", num_gpus="64",
                       gpus_per_node="8", nvlink_domain="8", precision="BF16", precision_norm="BF16",
                       model="Llama 2 7B", model_key="llama2-7b", seq="4096", gbs="256", mbs="1", tp="2", pp="1",
                       step_time_s="9.0"))
        # ZeRO 3 (FSDP) under DeepSpeed keeps its own overlapped collectives; a note naming DeepSpeed does not count
        w.writerow(row(source="Megatron-DeepSpeed runs", system="A100 cluster", gpu="A100-SXM4-80GB", num_gpus="64",
                       gpus_per_node="8", nvlink_domain="8", precision="BF16", precision_norm="BF16",
                       model="Llama 2 13B", model_key="llama2-13b", seq="4096", gbs="256", mbs="1", tp="2", pp="1",
                       fsdp="32", step_time_s="12.0"))
        w.writerow(row(source="Megatron-LM README", system="DGX-H100", gpu="H100-SXM5-80GB", num_gpus="64",
                       gpus_per_node="8", nvlink_domain="8", precision="BF16", precision_norm="BF16",
                       model="Llama 2 70B", model_key="llama2-70b", seq="4096", gbs="256", mbs="1", tp="8", pp="2",
                       step_time_s="20.0", notes="faster than the DeepSpeed baseline"))
    with open(src / "scorecard.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerow(row(source="NeMo performance summary", release="24.07", system="DGX-H100", gpu="H100-SXM5-80GB",
                       num_gpus="128", gpus_per_node="8", nvlink_domain="8", precision="FP8", precision_norm="FP8",
                       model="GPT-3 175B", model_key="gpt3-175b", seq="2048", gbs="256", mbs="1", tp="4", pp="8",
                       vp="6", step_time_s="7.0"))
    (src / "notes.csv").write_text("what,where\nx,y\n", encoding="utf-8")
    out = tmp_path / "out"
    refused = subprocess.run([sys.executable, str(CONVERT), "--source", str(src), "--out", str(out)],
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "pass --allow-missing" in refused.stderr, refused.stderr
    done = subprocess.run([sys.executable, str(CONVERT), "--source", str(src), "--out", str(out), "--allow-missing"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out, done


def test_new_parts_and_architectures_convert(converted):
    out, done = converted
    runs = {r["model_key"]: r for r in csv.DictReader(open(out / "runs.csv", encoding="utf-8"))}
    assert set(runs) == {"qwen3-30b-a3b", "mlm-gpt-1.7b", "qwen3-next-80b-a3b", "mlm-gpt-7.1b", "gpt3-175b",
                         "deepseek-v3", "llama2-7b", "llama2-13b", "llama2-70b"}
    assert runs["llama2-13b"]["zero_stage"] == "3"
    # a run without the multi-token-prediction module names a configuration without it (61 layers: uneven split)
    ds = runs["deepseek-v3"]
    assert ds["transformer"] == "configs/deepseek-v3-no-mtp/config.json" and ds["uneven_pipeline"] == "true"
    no_mtp = json.loads((out / ds["transformer"]).read_text(encoding="utf-8"))
    assert no_mtp["num_nextn_predict_layers"] == 0 and no_mtp["num_hidden_layers"] == 61
    other = runs["mlm-gpt-7.1b"]
    assert other["zero_stage"] == "1" and other["sequence_parallel"] == "true" and other["world_size"] == "32"
    assert other["notes"].startswith("megatron-lm-scaling:")
    # a table is judged by its rows' source, not its file name: NeMo 1.x rules for a NeMo 24.07 row
    nemo = runs["gpt3-175b"]
    assert nemo["grad_dtype"] == "bf16" and nemo["transformer"] == "configs/gpt3-175b-nemo1/config.json"
    assert "scorecard.csv read as a table of kind nemo" in done.stderr
    assert "notes.csv is not a row file (no column" in done.stderr
    assert runs["qwen3-30b-a3b"]["device"] == "GB300" and runs["qwen3-30b-a3b"]["nvlink_domain"] == "72"
    assert runs["mlm-gpt-1.7b"]["device"] == "H200" and runs["mlm-gpt-1.7b"]["micro_batches"] == "4"
    assert runs["qwen3-next-80b-a3b"]["device"] == "B300" and runs["qwen3-next-80b-a3b"]["expert"] == "4"
    # gradient buffers: Megatron-Bridge's performance scripts keep them in BF16 (grad_reduce_in_fp32 false), said
    # in the notes; another Megatron table takes Megatron core's FP32 main gradients
    assert runs["qwen3-30b-a3b"]["grad_dtype"] == "bf16"
    assert "grad_reduce_in_fp32 false" in runs["qwen3-30b-a3b"]["notes"]
    assert runs["mlm-gpt-7.1b"]["grad_dtype"] == "fp32"
    for r in runs.values():
        assert (out / r["transformer"]).is_file(), r["transformer"]
        # Megatron core's overlap_grad_reduce in every recipe; a DeepSpeed stack reduces after the backward pass
        assert r["grad_reduce"] == ("after-backward" if r["model_key"] == "llama2-7b" else "overlapped"), r
    assert "megatron_bridge_verification_cards.csv not in" in done.stderr  # named, skipped with --allow-missing


def test_bundled_runs_say_how_their_gradients_are_reduced():
    """BLOOM's Megatron-DeepSpeed runs reduce the gradients after the backward pass; every other stack overlaps the
    reduction (and the weights' gather, but where a recipe turns overlap_param_gather off)."""
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    bloom = [r for r in rows if r["source"] == "bloom-176b-chronicles"]
    assert bloom and all(r["grad_reduce"] == "after-backward" for r in bloom)
    assert all(r["grad_reduce"] in ("overlapped", "gather-after-step") for r in rows
               if r["source"] != "bloom-176b-chronicles")


def test_bundled_runs_keep_fp8_weights_as_parameters_where_their_recipes_do():
    """Megatron-Bridge's FP8 and MX-FP8 recipes gather their weights as FP8 parameters (--fp8-param-gather): written
    where the row can run it (a low-precision recipe, ZeRO 1 or 2), never on a 16-bit or FSDP row."""
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    on = [r for r in rows if r["fp8_param_gather"] == "true"]
    assert len(on) > 40
    assert all(r["precision"] in ("fp8", "mxfp8") and r["zero_stage"] in ("1", "2") for r in on)
    assert all(r["fp8_param_gather"] == "" for r in rows if r["precision"] in ("bf16", "fp16")
               or r["zero_stage"] == "3")
    # NVFP4's fp4_param_gather is not modelled: its rows stay empty whatever their recipes say
    assert all(r["fp8_param_gather"] == "" for r in rows if r["precision"] == "nvfp4")


def test_fp8_param_gather_is_read_from_the_recipe_settings_wordings():
    """Rule 15's wordings of FP8 weights as the parameters, as the settings table writes them (Megatron-Bridge's
    ``fp8_param_gather``, NeMo's ``fp8_params``, the MX-FP8 forms), their refusals, and the rows that cannot run it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)

    class Row:
        def __init__(self, precision="fp8", zero="1", lora="0", task="pretrain"):
            self.values = {"precision": precision, "zero_stage": zero, "lora_rank": lora, "task": task}

    said = ["ub cfg x; fp8_param_gather=True", "fp8_params=True (fp8 param all-gather)", "mxfp8 param gather",
            "MXFP8 fp8_param_gather=True", "mxfp8 fp8_param_gather + reuse_grad_buf_for_mxfp8_param_ag",
            "fp8_param_gather=true)"]
    for other in said:
        assert convert.fp8_param_gather_of(Row(), {"other": other}) == "true", other
    for other in ["fp8_param_gather=False", "fp8_params=False", "fp8_param_gather forced false under fsdp)",
                  "overlap_param_gather_with_optimizer_step=true (dp2,pp8,vp8)", ""]:
        assert convert.fp8_param_gather_of(Row(), {"other": other}) == "", other
    for row in [Row(precision="bf16"), Row(precision="nvfp4"), Row(zero="3"), Row(zero="0"), Row(lora="32"),
                Row(task="lora")]:
        assert convert.fp8_param_gather_of(row, {"other": "fp8_param_gather=True"}) == "", row.values


def test_the_weights_gather_after_the_step_is_read_from_the_recipe_settings():
    """Rule 15: a recipe that turns ``overlap_param_gather`` off gathers the updated weights after the optimizer step
    (``gather-after-step``) on a row of the distributed optimizer whose reduction is overlapped; not the
    ``overlap_param_gather_with_optimizer_step`` flag, not ZeRO 0 or 3, not a reduction after the backward pass."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)

    class Row:
        def __init__(self, zero="1", reduce="overlapped"):
            self.values = {"zero_stage": zero, "grad_reduce": reduce}

    off = "ub cfg x; overlap_param_gather=False (ddp/optimizer/comm_overlap; NaN-grad workaround for fp8_mx)"
    assert convert.grad_reduce_of(Row(), {"other": off}) == "gather-after-step"
    assert convert.grad_reduce_of(Row(zero="2"), {"other": "overlap_param_gather = false"}) == "gather-after-step"
    for other in ["overlap_param_gather_with_optimizer_step=False", "overlap_param_gather_with_optimizer_step=True",
                  "overlap_param_gather=True", ""]:
        assert convert.grad_reduce_of(Row(), {"other": other}) == "overlapped", other
    for row in [Row(zero="0"), Row(zero="3")]:
        assert convert.grad_reduce_of(row, {"other": off}) == "overlapped", row.values
    assert convert.grad_reduce_of(Row(reduce="after-backward"), {"other": off}) == "after-backward"
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    rows = [r for r in csv.DictReader(open(bundled, encoding="utf-8")) if r["grad_reduce"] == "gather-after-step"]
    assert len(rows) == 6 and all(r["zero_stage"] in ("1", "2") for r in rows)


def test_bundled_lora_rows_of_automodel_recompute_as_their_benchmark_yamls_say():
    """AutoModel's LoRA benchmark YAMLs checkpoint every block on 8 and 16 GPUs and nothing on one (rule 15)."""
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "lora.csv"
    rows = [r for r in csv.DictReader(open(bundled, encoding="utf-8")) if r["source"] == "nemo-automodel-perf-summary"]
    assert len(rows) == 6
    for r in rows:
        gpus = int(r["world_size"]) * int(r["tensor"])
        assert r["recompute"] == ("none" if gpus == 1 else "full"), r["id"]
        assert r["recompute_layers"] == "", r["id"]


def test_bundled_runs_say_what_type_their_gradients_travel_in():
    """DeepSpeed keeps and reduces FP16 training's gradients in FP16 and BF16 training's in FP32 (BLOOM); the
    performance recipes of Megatron-Bridge and NeMo keep BF16 gradients; AutoModel's FSDP2 reduces in FP32."""
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    expected = {"bloom-176b-chronicles": lambda r: "fp16" if r["precision"] == "fp16" else "fp32",
                "megatron-bridge-perf-summary": lambda r: "bf16",
                "nemo-framework-userguide-excerpt": lambda r: "bf16",
                "nemo-perf-summary-24.07": lambda r: "bf16",
                "nemo-automodel-perf-summary": lambda r: "fp32"}
    assert {r["source"] for r in rows} == set(expected)
    for r in rows:
        assert r["grad_dtype"] == expected[r["source"]](r), r["id"]


def test_bundled_runs_say_whether_the_experts_all_to_all_is_overlapped():
    """Rows with expert parallelism take ``moe_a2a_overlap`` from the recipe code (recipe_settings.csv, by id);
    every other row leaves it empty (not overlapped)."""
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    settings = ROOT / "tools" / "llm-public" / "recipe_settings.csv"
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    read = {r["id"]: r["moe_a2a_overlap"] for r in csv.DictReader(open(settings, encoding="utf-8"))}
    said = [r for r in rows if r["moe_a2a_overlap"]]
    assert {r["moe_a2a_overlap"] for r in said} == {"true", "false"}
    for r in rows:
        if int(r["expert"]) > 1 and read.get(r["id"]) in ("true", "false"):
            assert r["moe_a2a_overlap"] == read[r["id"]], r["id"]
        else:
            assert r["moe_a2a_overlap"] == "", r["id"]


def test_recipe_settings_apply_to_rows_with_experts_only(capsys):
    """Rule 15: a row with expert parallelism takes the table's ``moe_a2a_overlap`` (and a note); a row without
    experts, or without a value, leaves it empty; ids that name no written row are said."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)

    class Row:
        def __init__(self, id, expert):
            self.values = {"id": id, "expert": str(expert), "notes": "synthetic:1"}

    rows = {"runs": [Row("a", 8), Row("b", 1), Row("c", 8), Row("d", 4)]}
    convert.apply_recipe_settings(rows, {"a": {"moe_a2a_overlap": "true"}, "b": {"moe_a2a_overlap": "true"},
                                         "c": {"moe_a2a_overlap": ""}, "d": {"moe_a2a_overlap": "False"},
                                         "z": {"moe_a2a_overlap": "false"}})
    assert [r.values["moe_a2a_overlap"] for r in rows["runs"]] == ["true", "", "", "false"]
    assert rows["runs"][0].values["notes"].endswith("; all-to-all overlapped (recipe code)")
    assert rows["runs"][1].values["notes"] == "synthetic:1"
    assert "recipe settings: 1 ids name no written row (z)" in capsys.readouterr().err


def test_rows_it_cannot_express_are_dropped_naming_why(converted):
    out, _ = converted
    dropped = list(csv.DictReader(open(out / "dropped.csv", encoding="utf-8")))
    reasons = " | ".join(r["reason"] for r in dropped)
    assert len(dropped) == 3, reasons
    assert "footnote names a known performance regression" in reasons
    assert "gpu 'MI300X' is not in the converter's device table" in reasons
    assert "precision 'MXFP4' is not one the predictor runs" in reasons


def test_every_described_architecture_gets_its_configuration(converted):
    out, _ = converted
    described = [r["model_key"] for r in csv.DictReader(
        (line for line in open(MODELS, encoding="utf-8") if not line.startswith("#")))
        if r["hidden"].strip() and r["model_key"] not in ("bloom-arch-sweep", "nemotron-3-ultra-550b-a55b")]
    assert len(described) >= 35
    for key in described:
        assert (out / "configs" / key / "config.json").is_file(), key


def test_recipe_settings_give_every_named_row_its_cuda_graphs():
    """Rule 15: ``cuda_graphs`` from the recipe's ``cuda_graph_impl`` and ``cuda_graph_scope``: local graphs of the
    full iteration are ``iteration``, local graphs of a layer scope and Transformer Engine's of any scope ``layers``,
    ``none`` where it says none, empty for a row the table does not name; a pair no rule maps is refused."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)
    of = convert.cuda_graphs_of
    assert of({"cuda_graph_impl": "local", "cuda_graph_scope": "full_iteration"}) == "iteration"
    assert of({"cuda_graph_impl": "local", "cuda_graph_scope": "transformer_layer"}) == "layers"
    assert of({"cuda_graph_impl": "local", "cuda_graph_scope": "full_layer"}) == "layers"
    assert of({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": "attn+moe_router"}) == "layers"
    assert of({"cuda_graph_impl": "none", "cuda_graph_scope": ""}) == "none"
    assert of({}) == ""
    with pytest.raises(SystemExit):
        of({"cuda_graph_impl": "local", "cuda_graph_scope": "optimizer"})
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    settings = ROOT / "tools" / "llm-public" / "recipe_settings.csv"
    read = {r["id"]: r for r in csv.DictReader(open(settings, encoding="utf-8"))}
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    assert {r["cuda_graphs"] for r in rows} == {"", "none", "layers", "iteration"}
    for r in rows:
        assert r["cuda_graphs"] == (of(read[r["id"]]) if r["id"] in read else ""), r["id"]


def test_recipe_settings_give_confident_rows_their_recomputation():
    """Rule 15: a row the table names with high or medium confidence takes its recomputation: ``none``;
    ``selective:<modules>`` as ``selective`` with ``recompute_modules``; ``full:block:<n>`` as ``full`` with
    ``recompute_layers``; ``full:all`` (AutoModel's activation checkpointing) as ``full`` on every layer; low
    confidence or ``unknown`` leave rule 7's ``auto``; a form no rule maps is refused. The bundled runs agree with
    the table."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)

    class Row:
        def __init__(self):
            self.values = {"id": "x", "recompute": "auto", "recompute_modules": "", "recompute_layers": ""}

    def of(text, confidence="high"):
        r = Row()
        convert.recompute_of(r, {"recompute": text, "confidence": confidence})
        return r.values["recompute"], r.values["recompute_modules"], r.values["recompute_layers"]

    assert of("none") == ("none", "", "")
    assert of("selective:layernorm+moe_act", "medium") == ("selective", "layernorm+moe_act", "")
    assert of("full:block:5") == ("full", "", "5")
    assert of("full:all", "medium") == ("full", "", "")
    assert of("selective:mla_up_proj", "low") == ("auto", "", "")
    assert of("unknown") == ("auto", "", "")
    with pytest.raises(SystemExit):
        of("selective")
    with pytest.raises(SystemExit):
        of("full:uniform:2")
    with pytest.raises(SystemExit):
        of("full")
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    settings = ROOT / "tools" / "llm-public" / "recipe_settings.csv"
    read = {r["id"]: r for r in csv.DictReader(open(settings, encoding="utf-8"))}
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    for r in rows:
        s = read.get(r["id"])
        if s and s["confidence"] in ("high", "medium") and s["recompute"] != "unknown":
            got = r["recompute"] + (":" + r["recompute_modules"] if r["recompute_modules"] else "") + (
                ":block:" + r["recompute_layers"] if r["recompute_layers"] else "")
            assert got == ("full" if s["recompute"] == "full:all" else s["recompute"]), r["id"]
    assert sum(r["recompute"] == "selective" for r in rows) >= 20
    assert sum(r["id"].startswith("automodel") and r["recompute"] == "full" for r in rows) == 4


def test_recipe_settings_give_expert_parallel_rows_their_dispatcher():
    """Rule 15: ``moe_dispatcher`` for a row with expert parallelism where the table names one, else the one the
    row's own source names (an AutoModel page listing DeepEP); empty for a row without experts or without either; a
    dispatcher no rule maps is refused. The bundled runs agree."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)

    class Row:
        def __init__(self, expert, own=""):
            self.values = {"id": "x", "expert": str(expert), "moe_dispatcher": own}

    assert convert.dispatcher_of(Row(8), {"moe_dispatcher": "hybridep"}) == "hybridep"
    assert convert.dispatcher_of(Row(8, "deepep"), {"moe_dispatcher": "hybridep"}) == "hybridep"
    assert convert.dispatcher_of(Row(8, "deepep"), {}) == "deepep"
    assert convert.dispatcher_of(Row(8, "deepep"), {"moe_dispatcher": "-"}) == "deepep"
    assert convert.dispatcher_of(Row(1, "deepep"), {}) == ""
    assert convert.dispatcher_of(Row(8), {"moe_dispatcher": " DeepEP "}) == "deepep"
    assert convert.dispatcher_of(Row(1), {"moe_dispatcher": "alltoall"}) == ""
    assert convert.dispatcher_of(Row(8), {"moe_dispatcher": "-"}) == ""
    assert convert.dispatcher_of(Row(8), {}) == ""
    with pytest.raises(SystemExit):
        convert.dispatcher_of(Row(8), {"moe_dispatcher": "ncclep"})
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    settings = ROOT / "tools" / "llm-public" / "recipe_settings.csv"
    read = {r["id"]: r["moe_dispatcher"] for r in csv.DictReader(open(settings, encoding="utf-8"))}
    rows = list(csv.DictReader(open(bundled, encoding="utf-8")))
    for r in rows:
        expected = read.get(r["id"], "") if int(r["expert"]) > 1 else ""
        if expected in ("", "-") and int(r["expert"]) > 1 and r["source"] == "nemo-automodel-perf-summary":
            # every AutoModel row with expert parallelism lists DeepEP among its page's kernels (the page's notes,
            # which runs.csv does not carry)
            expected = "deepep"
        assert r["moe_dispatcher"] == ("" if expected in ("", "-") else expected), r["id"]
    assert sum(r["moe_dispatcher"] == "hybridep" for r in rows) >= 10


def test_recipe_settings_give_confident_rows_their_offloaded_layers():
    """Rule 15: ``offload_layers`` from the table's ``cpu_offload`` (a count, or "N layers (activation offload...)")
    with high or medium confidence; nothing otherwise; a form no rule maps is refused. The bundled runs agree."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("llm_public_convert", CONVERT)
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)

    def of(text, confidence="high"):
        r = type("Row", (), {})()
        r.values = {"id": "x", "offload_layers": ""}
        convert.offload_of(r, {"cpu_offload": text, "confidence": confidence})
        return r.values["offload_layers"]

    assert of("40 layers (activation offload; cpu_offloading_weights=False)") == "40"
    assert of("95", "medium") == "95"
    assert of("40 layers (activation offload)", "low") == ""
    assert of("") == ""
    with pytest.raises(SystemExit):
        of("some layers")
    bundled = ROOT / "datasets" / "gpu" / "llm-public" / "runs.csv"
    rows = [r for r in csv.DictReader(open(bundled, encoding="utf-8")) if r["offload_layers"]]
    assert len(rows) == 8 and {r["offload_layers"] for r in rows} == {"40", "95"}
