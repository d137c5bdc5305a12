"""Hostile input, round thirteen: the companion's tables, options and files (no PyTorch needed)."""
import csv
import zipfile

import pytest

from scaledl_profiler import cli, dataset, here
from scaledl_profiler import kernels as k
from scaledl_profiler import measure as m
from scaledl_profiler.hf import read_config_file
from scaledl_profiler.models import parse_factories
from scaledl_profiler.planfile import PlanError, read_plan

PLAN = ("model,resolution,batch,world_size,threads,phase,graph,predicted_ms,family\n"
        "a,64,2,1,1,train,g/a.onnx,10,x\n"
        "b,64,2,1,2,infer,g/b.onnx,3,y\n")


def _plan(tmp_path, text=PLAN):
    (tmp_path / "g").mkdir(exist_ok=True)
    for name in ("a", "b"):
        (tmp_path / "g" / f"{name}.onnx").write_bytes(name.encode() * 16)
    plan = tmp_path / "plan.csv"
    plan.write_text(text, encoding="utf-8")
    return plan


class Runner:
    def __call__(self, job, options):
        return [{"key": r["key"], "ms": [float(r["batch"])] * options["reps"], "params": 7} for r in job["runs"]]


def test_a_field_with_a_form_feed_or_a_line_separator_reads_back_as_written(tmp_path):
    path = tmp_path / "t.csv"
    rows = [{"a": "x\x0cy", "b": "u\u2028v\x85w"}, {"a": "plain", "b": "2"}]
    dataset.write_atomically(str(path), lambda f: dataset._write_csv(f, ["a", "b"], rows))
    header, read = dataset.read_table(str(path))
    assert header == ["a", "b"] and [r for _, r in read] == rows


def test_a_plan_whose_family_holds_a_form_feed_is_measured_and_resumed(tmp_path):
    plan = _plan(tmp_path, PLAN.replace(",x\n", ",x\x0cz\n"))
    assert m.measure(plan, tmp_path / "out", passes=1, reps=1, runner=Runner(), log=lambda s: None,
                     check_idle=False) == 2
    # measured again into the same folder: passes.csv is read back whole
    assert m.measure(plan, tmp_path / "out", passes=2, reps=1, runner=Runner(), log=lambda s: None,
                     check_idle=False) == 2


def test_a_byte_order_mark_on_a_grown_table_is_no_part_of_its_first_column(tmp_path):
    path = tmp_path / "drift.csv"
    path.write_bytes("\ufeffwhen,at_s,model,batch,phase,iter_ms_p50,precision\nstart,0,a,2,train,5,fp32\n"
                     .encode("utf-8"))
    header, rows = dataset.read_table(str(path))
    assert header[0] == "when" and rows[0][1]["when"] == "start"


def test_a_run_measured_twice_in_one_pass_is_a_damaged_line(tmp_path):
    plan = _plan(tmp_path)
    m.measure(plan, tmp_path / "out", passes=1, reps=1, runner=Runner(), log=lambda s: None, check_idle=False)
    passes = tmp_path / "out" / "passes.csv"
    lines = passes.read_text().splitlines(keepends=True)
    passes.write_text("".join(lines + [lines[1]]))
    with pytest.raises(ValueError, match=r"passes.csv:4: pass 0 of this run is also line 2"):
        dataset.Passes(str(tmp_path / "out")).rows()


def test_a_resumed_campaign_keeps_its_drift_reference(tmp_path):
    plan = _plan(tmp_path)
    out = tmp_path / "out"
    m.measure(plan, out, passes=1, reps=1, runner=Runner(), log=lambda s: None, check_idle=False, reference="a")
    # another reference asked for: refused, naming the folder's
    with pytest.raises(ValueError, match=r"drift reference is a batch 2 train.*--reference a"):
        m.measure(plan, out, passes=2, reps=1, runner=Runner(), log=lambda s: None, check_idle=False,
                  reference="b")
    # none asked for (the plan's cheapest would be b): the folder's own, a, is measured again
    m.measure(plan, out, passes=2, reps=1, runner=Runner(), log=lambda s: None, check_idle=False)
    drift = list(csv.DictReader(open(out / "drift.csv")))
    assert {d["model"] for d in drift} == {"a"} and len(drift) >= 3
    assert drift[0]["resolution"] == "64" and drift[0]["threads"] == "1"


def test_a_resume_in_another_precision_keeps_the_folders_reference(tmp_path):
    plan = _plan(tmp_path)
    out = tmp_path / "out"
    m.measure(plan, out, passes=1, reps=1, runner=Runner(), log=lambda s: None, check_idle=False)
    with pytest.raises(ValueError, match="drift reference is b batch 2 infer"):
        m.measure(plan, out, passes=1, reps=1, runner=Runner(), log=lambda s: None, check_idle=False,
                  precision="bf16", device="cuda")


def test_the_drift_verdict_compares_the_first_reference_only(tmp_path):
    (tmp_path / "drift.csv").write_text("when,at_s,model,batch,phase,iter_ms_p50,precision\n"
                                        "start,0,a,2,train,2,fp32\nafter pass 1,5,b,2,infer,50,fp32\n"
                                        "after pass 2,9,a,2,train,2.1,fp32\n")
    assert m.drift_verdict(str(tmp_path)) is None


def _kernel_table(tmp_path):
    k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda s: None)
    path = tmp_path / "kernels" / "bmm.csv"
    return path, path.read_text().splitlines(keepends=True)


def test_a_resumed_kernel_table_continues_after_its_largest_row_id(tmp_path):
    path, lines = _kernel_table(tmp_path)
    n = len(lines) - 1
    path.write_text("".join(lines[:2] + lines[3:]))   # the second row deleted: ids 0, 2, 3, ...
    k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda s: None)
    ids = [int(r["row_id"]) for r in csv.DictReader(open(path))]
    assert len(ids) == n and len(set(ids)) == n and max(ids) == n


@pytest.mark.parametrize("bad", ["abc", "-5", "nan"])
def test_a_damaged_kernel_row_is_named_on_a_rerun(tmp_path, bad):
    path, lines = _kernel_table(tmp_path)
    cells = lines[2].rstrip("\n").split(",")
    cells[-2] = bad   # latency_ms
    path.write_text("".join(lines[:2] + [",".join(cells) + "\n"] + lines[3:]))
    with pytest.raises(ValueError, match=rf"bmm.csv:3: latency_ms is not a number >= 0: '{bad}'"):
        k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda s: None)


def test_a_repeated_kernel_row_id_of_an_earlier_release_is_said_and_ids_continue_after_the_largest(tmp_path):
    path, lines = _kernel_table(tmp_path)
    n = len(lines) - 1
    # ids 0, 2, ..., n-1 and n-1 again: an earlier release extended a table after a deleted line so
    path.write_text("".join(lines[:2] + lines[3:] + [lines[-1]]))
    logs = []
    k.run(tmp_path, ["fp16"], k.FakeExecutor(), "tiny", tables=("bmm",), log=logs.append)
    assert any(f"bmm.csv:{n + 1}: a row_id repeats" in line for line in logs), logs
    ids = [int(r["row_id"]) for r in csv.DictReader(open(path))]
    assert ids[n:] == list(range(n, n + len(ids) - n))


def test_shapes_over_the_size_cap_are_counted(tmp_path):
    s = k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda x: None, max_bytes=1)
    assert sum(s.rows.values()) == 0 and s.capped > 0 and "over --max-gib left out" in s.line()


@pytest.mark.parametrize("argv,fragment", [
    (["measure", "plan.csv", "--out", "d", "--passes", "1000000000000"], "--passes 1000000000000 is more than"),
    (["measure", "plan.csv", "--out", "d", "--reps", "99999999999999"], "--reps 99999999999999 is more than"),
    (["measure", "plan.csv", "--out", "d", "--factory", "x=y"], "--factory takes NAME=module:callable"),
    (["measure", "plan.csv", "--out", "d", "--factory", "=m:f"], "--factory takes NAME=module:callable"),
    (["measure", "plan.csv", "--out", "d", "--factory", "a=:"], "--factory takes NAME=module:callable"),
    (["kernels", "--out", "k", "--max-gib", "1e300"], "--max-gib at most"),
    (["export", "resnet18"], "an image model needs --size"),
])
def test_usage_errors_exit_2_naming_the_option(tmp_path, capsys, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "d").exists() and not (tmp_path / "k").exists()


def test_a_factory_named_twice_is_refused():
    with pytest.raises(ValueError, match="--factory a is given twice"):
        parse_factories(["a=m:f", "a=n:g"])


def test_export_refuses_to_write_over_its_config_or_through_a_link(tmp_path, capsys):
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4}')
    for given in (str(cfg), "hf:" + str(cfg)):
        with pytest.raises(SystemExit) as e:
            cli.main(["export", "--config", given, "--out", str(cfg)])
        assert e.value.code == 2 and "is the --config file" in capsys.readouterr().err
    link = tmp_path / "link.onnx"
    link.symlink_to(tmp_path / "elsewhere.onnx")
    assert cli.main(["export", "--config", str(cfg), "--out", str(link)]) == 1
    assert "is a link or a special file" in capsys.readouterr().err


@pytest.mark.parametrize("text,fragment", [
    ('{"model_type": "bert", "hidden_size": 0}', '"hidden_size" is 0; a size from 1'),
    ('{"model_type": "gpt2", "n_layer": 1000000000000}', '"n_layer" is 1000000000000'),
    ('{"model_type": "bert", "hidden_size": "768"}', '"hidden_size" is "768"'),
    ('{"model_type": "bert", "hidden_size": 100, "num_attention_heads": 3}', "3 attention heads do not divide"),
])
def test_a_config_is_checked_before_pytorch(tmp_path, capsys, text, fragment):
    cfg = tmp_path / "config.json"
    cfg.write_text(text)
    with pytest.raises(ValueError, match=fragment):
        read_config_file(str(cfg))
    assert cli.main(["export", "--config", str(cfg), "--out", str(tmp_path / "m.onnx")]) == 1
    err = capsys.readouterr().err
    assert fragment.split(";")[0].replace('\\', '') in err and "PyTorch" not in err


@pytest.mark.parametrize("cell", ["6_4", "+64", "\u0666\u0664", "\uff12"])
def test_plan_numbers_are_ascii_digits(tmp_path, cell):
    plan = _plan(tmp_path, PLAN.replace("a,64,2,1,1", f"a,64,{cell},1,1"))
    with pytest.raises(PlanError, match="batch must be a positive integer"):
        read_plan(str(plan))


def test_a_plans_resolution_has_a_maximum(tmp_path):
    plan = _plan(tmp_path, PLAN.replace("a,64,", "a,1000000000000,"))
    with pytest.raises(PlanError, match="resolution 1000000000000 is out of range"):
        read_plan(str(plan))


def test_here_refuses_its_prior_as_its_output_and_a_huge_size(tmp_path):
    jar = tmp_path / "scaledl.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    prior = tmp_path / "prior.sdl"
    prior.write_text("model")
    with pytest.raises(ValueError, match="is the --model file"):
        here.run(str(jar), str(prior), str(prior), work=str(tmp_path / "w"), log=lambda s: None,
                 runner=lambda *a, **kw: None)
    with pytest.raises(ValueError, match="--size must be at least 16 pixels and at most 4096"):
        here.run(str(jar), "cpu-zoo", str(tmp_path / "x.sdl"), work=str(tmp_path / "w"), size=100000000,
                 log=lambda s: None, runner=lambda *a, **kw: None)
    assert not (tmp_path / "w").exists()


def test_here_refuses_a_jar_that_is_no_jar(tmp_path):
    jar = tmp_path / "scaledl.jar"
    jar.write_text("not a jar")
    with pytest.raises(ValueError, match="not a jar"):
        here.run(str(jar), "cpu-zoo", str(tmp_path / "x.sdl"), work=str(tmp_path / "w"), log=lambda s: None,
                 runner=lambda *a, **kw: None)
    assert not (tmp_path / "w").exists()


def test_an_image_models_row_without_a_resolution_is_refused_before_anything(tmp_path):
    plan = _plan(tmp_path, "model,resolution,batch,world_size,threads,phase\nresnet18,,2,1,1,train\n")
    with pytest.raises(PlanError, match="plan.csv:2: resnet18 is an image model: its row needs a resolution"):
        m.measure(plan, tmp_path / "out", passes=1, reps=1, runner=Runner(), log=lambda s: None, check_idle=False)
    assert not (tmp_path / "out").exists()
