"""The measurement loop with a stand-in runner: order, passes, resumption, drift; no PyTorch needed."""
import csv

import pytest

from scaledl_profiler import measure as m
from scaledl_profiler.planfile import PlanError

PLAN = ("model,resolution,batch,world_size,threads,phase,graph,predicted_ms\n"
        "a,64,2,1,1,train,g/a.onnx,10\n"
        "a,64,8,1,1,infer,g/a.onnx,5\n"
        "b,64,2,2,1,train,g/b.onnx,30\n"
        "b,64,2,1,2,infer,g/b.onnx,3\n")


class FakeRunner:
    def __init__(self, fail_after=None):
        self.jobs = []
        self.fail_after = fail_after

    def __call__(self, job, options):
        self.jobs.append(job)
        if self.fail_after is not None and len(self.jobs) > self.fail_after:
            raise RuntimeError("interrupted")
        return [{"key": r["key"], "ms": [float(r["batch"])] * options["reps"], "params": 7} for r in job["runs"]]


def _graphs(tmp_path):
    (tmp_path / "g").mkdir(exist_ok=True)
    for name in ("a", "b"):
        (tmp_path / "g" / f"{name}.onnx").write_bytes(name.encode() * 16)


def test_every_run_is_measured_once_per_pass_and_merged(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    _graphs(tmp_path)
    runner = FakeRunner()
    logs = []
    n = m.measure(plan, tmp_path / "out", passes=2, reps=2, runner=runner, log=logs.append, check_idle=False)
    assert n == 4
    passes = list(csv.DictReader(open(tmp_path / "out" / "passes.csv")))
    assert len(passes) == 8
    assert sorted(r["pass"] for r in passes) == ["0"] * 4 + ["1"] * 4
    runs = list(csv.DictReader(open(tmp_path / "out" / "runs.csv")))
    assert {r["graph"] for r in runs} == {"graphs/a.onnx", "graphs/b.onnx"}, "graphs copied into the dataset"
    assert (tmp_path / "out" / "graphs" / "a.onnx").read_bytes() == (tmp_path / "g" / "a.onnx").read_bytes()
    assert all(r["passes"] == "2" for r in runs)
    # The reference (cheapest predicted run: b, infer) is measured before the first pass and after each.
    drift = list(csv.DictReader(open(tmp_path / "out" / "drift.csv")))
    assert [d["when"] for d in drift] == ["start", "after pass 1", "after pass 2"]
    assert drift[0]["model"] == "b" and drift[0]["phase"] == "infer"
    # Jobs group runs by (model, size, world, threads): 3 jobs per pass plus 3 reference runs.
    assert len(runner.jobs) == 2 * 3 + 3
    assert any("about" in line and "min left" in line for line in logs)


def test_an_interrupted_campaign_resumes_where_it_stopped(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    out = tmp_path / "out"
    try:
        m.measure(plan, out, passes=2, runner=FakeRunner(fail_after=3), log=lambda s: None, check_idle=False)
    except RuntimeError:
        pass
    partial = list(csv.DictReader(open(out / "passes.csv")))
    assert 0 < len(partial) < 8
    assert (out / "runs.csv").exists(), "runs.csv is valid after every job"
    runner = FakeRunner()
    m.measure(plan, out, passes=2, runner=runner, log=lambda s: None, check_idle=False)
    rows = list(csv.DictReader(open(out / "passes.csv")))
    assert len(rows) == 8
    keys = [(r["pass"], r["model"], r["batch"], r["world_size"], r["threads"], r["phase"]) for r in rows]
    assert len(set(keys)) == 8, "nothing measured twice in one pass"


def test_same_seed_same_order(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    orders = []
    for d in ("x", "y"):
        r = FakeRunner()
        m.measure(plan, tmp_path / d, passes=2, runner=r, log=lambda s: None, check_idle=False)
        orders.append([(j["model"], j["world_size"], j["threads"], [x["key"] for x in j["runs"]]) for j in r.jobs])
    assert orders[0] == orders[1]


class PartlyFailing(FakeRunner):
    """Job b fails as a whole; run a/batch 8 runs out of memory."""

    def __call__(self, job, options):
        self.jobs.append(job)
        if job["model"] == "b" and len(job["runs"]) > 1:
            raise RuntimeError("b (size 64) failed:\nTraceback ...\nValueError: cannot build b")
        out = []
        for r in job["runs"]:
            if r["batch"] == 8:
                out.append({"key": r["key"], "error": "out of memory", "status": "oom"})
            else:
                out.append({"key": r["key"], "ms": [1.0], "params": 7, "device": "Fake GPU"})
        return out


def test_keep_going_records_failed_jobs_and_runs(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("model,resolution,batch,world_size,threads,phase,predicted_ms\n"
                    "a,64,2,1,1,train,1\na,64,8,1,1,infer,2\nb,64,2,1,1,train,3\nb,64,4,1,1,train,4\n")
    logs = []
    n = m.measure(plan, tmp_path / "out", passes=1, runner=PartlyFailing(), log=logs.append, check_idle=False,
                  keep_going=True)
    assert n == 1
    runs = list(csv.DictReader(open(tmp_path / "out" / "runs.csv")))
    assert [(r["model"], r["batch"], r["device"], r["precision"]) for r in runs] == [("a", "2", "Fake GPU", "fp32")]
    failed = list(csv.DictReader(open(tmp_path / "out" / "failed.csv")))
    assert sorted((f["model"], f["batch"], f["status"]) for f in failed) == [
        ("a", "8", "oom"), ("b", "2", "error"), ("b", "4", "error")]
    assert all(f["error"] == "ValueError: cannot build b" for f in failed if f["model"] == "b")
    with pytest.raises(RuntimeError, match="cannot build b"):
        m.measure(plan, tmp_path / "out2", passes=1, runner=PartlyFailing(), log=logs.append, check_idle=False)


def test_the_time_budget_skips_the_jobs_left_and_records_them(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    runner = FakeRunner()
    logs = []
    assert m.measure(plan, tmp_path / "out", passes=2, runner=runner, log=logs.append, check_idle=False,
                     max_seconds=0) == 0
    assert len(runner.jobs) == 1, "only the reference run before the budget check"
    failed = list(csv.DictReader(open(tmp_path / "out" / "failed.csv")))
    assert len(failed) == 8 and {f["status"] for f in failed} == {"skipped"}
    assert any("time budget" in line for line in logs)


def test_precisions_a_cpu_cannot_measure_are_refused(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("model,batch,world_size,threads,phase,precision\na,2,1,1,train,fp16\n")
    with pytest.raises(ValueError, match=r"plan.csv:2: precision fp16 needs --device cuda"):
        m.measure(plan, tmp_path / "out", runner=FakeRunner(), log=lambda s: None, check_idle=False)
    plan.write_text("model,batch,world_size,threads,phase,precision\na,2,1,1,train,bf16\n")
    assert m.measure(plan, tmp_path / "ok", passes=1, runner=FakeRunner(), log=lambda s: None,
                     check_idle=False) == 1


def test_the_plan_precision_reaches_the_runner_and_runs_csv(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("model,batch,world_size,threads,phase,precision\na,2,1,1,train,bf16\na,2,1,1,infer,\n")
    runner = FakeRunner()
    m.measure(plan, tmp_path / "out", passes=1, runner=runner, log=lambda s: None, check_idle=False,
              precision="fp32")
    sent = {(r["phase"], r["precision"]) for j in runner.jobs for r in j["runs"]}
    assert sent == {("train", "bf16"), ("infer", "fp32")}
    runs = list(csv.DictReader(open(tmp_path / "out" / "runs.csv")))
    assert sorted((r["phase"], r["precision"]) for r in runs) == [("infer", "fp32"), ("train", "bf16")]


def test_a_channels_last_run_is_refused_on_a_cpu_and_reaches_the_runner_and_runs_csv_on_a_gpu(tmp_path,
                                                                                             monkeypatch):
    plan = tmp_path / "plan.csv"
    plan.write_text("model,batch,world_size,threads,phase,memory_format\na,2,1,1,train,channels_last\n"
                    "a,2,1,1,infer,\n")
    with pytest.raises(ValueError, match=r"plan.csv:2: memory_format channels_last needs --device cuda"):
        m.measure(plan, tmp_path / "out", runner=FakeRunner(), log=lambda s: None, check_idle=False)
    with pytest.raises(ValueError, match=r"--memory-format channels_last needs --device cuda"):
        m.measure(plan, tmp_path / "out", runner=FakeRunner(), log=lambda s: None, check_idle=False,
                  memory_format="channels_last")
    runner = FakeRunner()
    monkeypatch.setattr(m.machine, "describe", lambda device="cpu", threads_note=None: {"name": "gpu box", "cpus": 2})
    m.measure(plan, tmp_path / "gpu", passes=1, runner=runner, log=lambda s: None, check_idle=False,
              device="cuda")
    # (the reference run, re-measured between passes, is among the jobs too)
    assert {(j["memory_format"], r["phase"]) for j in runner.jobs for r in j["runs"]} == {
        ("channels_last", "train"), ("nchw", "infer")}
    assert all(len({r["phase"] for r in j["runs"]}) == 1 for j in runner.jobs), "a job per layout"
    runs = list(csv.DictReader(open(tmp_path / "gpu" / "runs.csv")))
    assert sorted((r["phase"], r["memory_format"]) for r in runs) == [("infer", "nchw"), ("train", "channels_last")]


def _tear(path, cut):
    """Cuts ``cut`` bytes off the end of a file, as a full disk or a power cut leaves it (no final newline)."""
    data = path.read_bytes()
    path.write_bytes(data[:-cut])


@pytest.mark.parametrize("cut", [3, 6, 12, 40])
def test_a_torn_last_line_of_passes_csv_is_dropped_with_a_warning_and_measured_again(tmp_path, cut):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    out = tmp_path / "out"
    m.measure(plan, out, passes=2, runner=FakeRunner(), log=lambda s: None, check_idle=False)
    _tear(out / "passes.csv", cut)  # e.g. "...,fp3" (the cut the issue shows: the next append made "fp31")
    logs = []
    runner = FakeRunner()
    assert m.measure(plan, out, passes=2, runner=runner, log=logs.append, check_idle=False) == 4
    warnings = [line for line in logs if "passes.csv" in line and "dropped its last line" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ") and "\n" not in warnings[0]
    assert sum(len(j["runs"]) for j in runner.jobs) == 3, "the torn run measured again, and the reference around it"
    text = (out / "passes.csv").read_text()
    assert text.endswith("\n")
    rows = list(csv.DictReader(open(out / "passes.csv")))
    assert len(rows) == 8 and all(None not in r and r["precision"] == "fp32" and r["device"] == "" for r in rows)
    runs = list(csv.DictReader(open(out / "runs.csv")))
    assert len(runs) == 4 and {r["precision"] for r in runs} == {"fp32"} and {r["passes"] for r in runs} == {"2"}


def test_a_torn_header_and_torn_drift_and_failure_tables_are_repaired(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    out = tmp_path / "out"
    out.mkdir()
    (out / "passes.csv").write_text("pass,model,fam")  # cut in the header: nothing of it is kept
    (out / "drift.csv").write_text("when,at_s,model,batch,phase,iter_ms_p50,precision\r\nstart,0.0,b,2,in")
    (out / "failed.csv").write_text(",".join(m.dataset.FAIL_FIELDS) + "\r\n0,a,64,2,1,1,train,fp32,oom,out of")
    logs = []
    assert m.measure(plan, out, passes=1, runner=FakeRunner(), log=logs.append, check_idle=False) == 4
    assert sum("dropped its last line" in line for line in logs) == 3
    assert len(list(csv.DictReader(open(out / "passes.csv")))) == 4
    drift = list(csv.DictReader(open(out / "drift.csv")))
    assert [d["when"] for d in drift] == ["start", "after pass 1"] and all(None not in d for d in drift)
    assert list(csv.DictReader(open(out / "failed.csv"))) == []


def test_a_damaged_line_is_one_error_naming_the_file_and_line_never_a_run(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    out = tmp_path / "out"
    m.measure(plan, out, passes=1, runner=FakeRunner(), log=lambda s: None, check_idle=False)
    lines = (out / "passes.csv").read_text().splitlines(keepends=True)
    # what the old writer made of a torn line: the next row glued onto it
    lines[2] = lines[2].rstrip("\r\n")[:-3] + lines[3]
    (out / "passes.csv").write_text("".join(lines[:3] + lines[4:]))
    with pytest.raises(ValueError, match=r"passes.csv:3: .*a damaged line") as e:
        m.measure(plan, out, passes=2, runner=FakeRunner(), log=lambda s: None, check_idle=False)
    assert "\n" not in str(e.value)
    (out / "passes.csv").write_text("".join(lines[:2]).replace(",fp32,", ",fp31,"))
    with pytest.raises(ValueError, match=r"passes.csv:2: precision must be one of .*got 'fp31'"):
        m.measure(plan, out, passes=2, runner=FakeRunner(), log=lambda s: None, check_idle=False)


def test_a_plan_naming_a_file_outside_its_folder_is_refused_before_anything_is_created(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "shadow").write_text("root:$6$x\n")
    (tmp_path / "plans").mkdir()
    plan = tmp_path / "plans" / "plan.csv"
    plan.write_text("model,batch,world_size,threads,phase,graph\na,2,1,1,train,\n"
                    f"a,4,1,1,train,{tmp_path / 'secret' / 'shadow'}\n")
    runner = FakeRunner()
    with pytest.raises(PlanError, match=r"plan.csv:3: graph '.*shadow' is outside the plan's folder"):
        m.measure(plan, tmp_path / "out", runner=runner, log=lambda s: None, check_idle=False)
    assert not (tmp_path / "out").exists() and runner.jobs == []


def test_a_plan_that_cannot_be_measured_creates_no_dataset_folder(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(PLAN)
    _graphs(tmp_path)
    with pytest.raises(ValueError, match="--reference nosuch: no run of that model"):
        m.measure(plan, tmp_path / "ref", runner=FakeRunner(), log=lambda s: None, check_idle=False,
                  reference="nosuch")
    assert not (tmp_path / "ref").exists()
    # two different graphs of one file name would both be copied to graphs/m.onnx
    for d, content in (("x", b"one"), ("y", b"two")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.onnx").write_bytes(content * 8)
    plan.write_text("model,resolution,batch,world_size,threads,phase,graph\n"
                    "a,64,2,1,1,train,x/m.onnx\nb,64,2,1,1,train,y/m.onnx\n")
    with pytest.raises(PlanError, match=r"plan.csv:3: graph y/m.onnx would be copied to .*as line 2's x/m.onnx"):
        m.measure(plan, tmp_path / "dup", runner=FakeRunner(), log=lambda s: None, check_idle=False)
    assert not (tmp_path / "dup").exists()
    # the same graph reached by two paths is one graph
    plan.write_text("model,resolution,batch,world_size,threads,phase,graph\n"
                    "a,64,2,1,1,train,x/m.onnx\na,64,4,1,1,train,x/../x/m.onnx\n")
    assert m.measure(plan, tmp_path / "same", passes=1, runner=FakeRunner(), log=lambda s: None,
                     check_idle=False) == 2
