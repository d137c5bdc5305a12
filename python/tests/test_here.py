"""The one-command loop for this machine (``here``), with the jar, the exporter and the measurement stood in."""
import json
import os
import subprocess
import zipfile

import pytest

from scaledl_profiler import here

ONNX = bytes([1 << 3, 8]) + bytes([7 << 3 | 2, 8]) + bytes([1 << 3 | 2, 6]) + bytes([4 << 3 | 2, 4]) + b"Relu"


class Recorder:
    def __init__(self, fail=None):
        self.commands = []
        self.fail = fail

    def __call__(self, cmd, **kwargs):
        self.commands.append(cmd)
        args = cmd[3:]
        if self.fail == args[0]:
            return subprocess.CompletedProcess(cmd, 1, "", "scaledl: error: grid.txt:2: no such model\n")
        if args[0] == "plan":
            out = args[args.index("--out") + 1]
            with open(out, "w") as f:
                f.write("model,resolution,batch,world_size,threads,phase,graph\n")
            return subprocess.CompletedProcess(cmd, 0, "chose 3 of 24 candidates\n", "")
        out = args[args.index("--out") + 1]
        with open(out, "w") as f:
            f.write("{}")
        return subprocess.CompletedProcess(cmd, 0, "calibrated\n", "")


def stand_ins(tmp_path):
    jar = tmp_path / "scaledl.jar"
    with zipfile.ZipFile(jar, "w") as z:   # a jar is a zip archive; here runs it only through the stand-in
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    exported, measured = [], []

    def export_fn(name, size, path):
        exported.append((name, size))
        with open(path, "wb") as f:
            f.write(ONNX)

    def measure_fn(plan, data, log, **kwargs):
        measured.append(plan)
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "machine.json"), "w") as f:
            json.dump({"name": "Fake CPU @ box", "cpus": 4}, f)

    def describe(device):
        return {"name": "Fake CPU @ box", "cpus": 4}
    return jar, exported, measured, export_fn, measure_fn, describe


def test_the_loop_exports_plans_measures_and_calibrates_in_order_and_resumes(tmp_path):
    jar, exported, measured, export_fn, measure_fn, describe = stand_ins(tmp_path)
    work = tmp_path / "work"
    runner = Recorder()
    logs = []
    out = here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(work), budget_s=30,
                   models=["resnet18", "mobilenet_v3_small"], size=32, java="java", log=logs.append, runner=runner,
                   export_fn=export_fn, measure_fn=measure_fn, describe=describe)
    assert out == str(tmp_path / "mine.sdl") and os.path.exists(out)
    assert exported == [("resnet18", 32), ("mobilenet_v3_small", 32)]
    assert [c[3] for c in runner.commands] == ["plan", "fit"]
    plan = runner.commands[0]
    assert plan[:3] == ["java", "-jar", str(jar)]
    assert plan[plan.index("--prior") + 1] == "cpu-zoo"
    assert float(plan[plan.index("--budget-s") + 1]) == pytest.approx(here.plan_budget(30), abs=0.05)
    fit = runner.commands[1]
    assert fit[fit.index("--calibrate") + 1] == "cpu-zoo" and fit[fit.index("--data") + 1] == str(work / "data")
    spec = (work / "grid.txt").read_text()
    assert "model      = resnet18, mobilenet_v3_small" in spec
    assert "threads    = 1, 2, 4" in spec and "cores      = 4" in spec and "resolution = 32" in spec
    assert measured == [str(work / "plan.csv")]
    assert any("Fake CPU @ box" in line and "--model" in line for line in logs), logs
    # again: graphs and plan are there, so only the measurement (resumed) and the calibration run
    exported.clear()
    runner2 = Recorder()
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(work), models=["resnet18",
             "mobilenet_v3_small"], size=32, log=logs.append, runner=runner2, export_fn=export_fn,
             measure_fn=measure_fn, describe=describe)
    assert exported == []
    assert [c[3] for c in runner2.commands] == ["fit"]


def test_a_work_folder_resumes_only_with_the_options_it_was_started_with(tmp_path):
    jar, exported, measured, export_fn, measure_fn, describe = stand_ins(tmp_path)
    work = tmp_path / "work"
    kw = dict(work=str(work), size=32, log=lambda m: None, export_fn=export_fn, measure_fn=measure_fn,
              describe=describe)
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), models=["resnet18", "mobilenet_v3_small"],
             runner=Recorder(), **kw)
    plan = (work / "plan.csv").read_text()
    grid = (work / "grid.txt").read_text()
    with pytest.raises(ValueError, match=r"--work .*work was started with other options \(--models "
                                         r"resnet18,mobilenet_v3_small\): give those to resume it"):
        here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), models=["squeezenet1_0"], runner=Recorder(), **kw)
    # nothing of the folder was touched, and the same options resume it (another prior or budget too)
    assert (work / "plan.csv").read_text() == plan and (work / "grid.txt").read_text() == grid
    runner = Recorder()
    here.run(str(jar), "cpu-ddp", str(tmp_path / "mine.sdl"), models=["resnet18", "mobilenet_v3_small"],
             budget_s=300, runner=runner, **kw)
    assert [c[3] for c in runner.commands] == ["fit"]
    # a folder from before the options were recorded is checked by its grid
    state = json.loads((work / "here.json").read_text())
    del state["options"]
    (work / "here.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match="started with other options"):
        here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), models=["resnet18"], runner=Recorder(), **kw)
    # a damaged here.json is read once, and said once
    (work / "here.json").write_text("{not json")
    logs = []
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), models=["resnet18", "mobilenet_v3_small"],
             runner=Recorder(), **dict(kw, log=logs.append))
    assert sum("here.json: damaged" in line for line in logs) == 1, logs


def test_a_failed_step_names_the_step_and_the_jars_message(tmp_path):
    jar, _, _, export_fn, measure_fn, describe = stand_ins(tmp_path)
    with pytest.raises(RuntimeError, match="scaledl plan failed .exit 1.: scaledl: error: grid.txt:2"):
        here.run(str(jar), "cpu-zoo", "x.sdl", work=str(tmp_path / "w"), models=["resnet18"], log=lambda m: None,
                 runner=Recorder(fail="plan"), export_fn=export_fn, measure_fn=measure_fn, describe=describe)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"jar": "nope.jar"}, "nope.jar: no such file"),
    ({"budget_s": 0}, "--budget-s must be at least 30"),
    ({"size": 8}, "--size must be at least 16"),
    ({"model": "nosuch"}, "--model nosuch: neither a bundled model"),
    ({"models": ["resnet18", "resnet18", "vgg11"]}, "--models names resnet18 more than once"),
    ({"jar": "."}, "--jar .: is a folder"),
    ({"runner": subprocess.run, "java": "/no/such/java"}, "--java /no/such/java: no such command"),
    ({"out": "mine.model"}, r"--out mine.model: the model is written as .sdl"),
])
def test_bad_options_are_named(tmp_path, kwargs, fragment):
    jar, exported, _, export_fn, measure_fn, describe = stand_ins(tmp_path)
    args = dict(jar=str(jar), model="cpu-zoo", out="x.sdl", work=str(tmp_path / "w"), log=lambda m: None,
                runner=Recorder(), export_fn=export_fn, measure_fn=measure_fn, describe=describe)
    args.update(kwargs)
    with pytest.raises((ValueError, FileNotFoundError), match=fragment):
        here.run(**args)
    # refused before anything is exported or written
    assert exported == [] and not (tmp_path / "w").exists()


def test_thread_counts_reach_the_cores():
    assert here.thread_counts(1) == [1]
    assert here.thread_counts(2) == [1, 2]
    assert here.thread_counts(6) == [1, 2, 4, 6]


def _drifting_measure(changes):
    """A measure stand-in writing drift.csv with the reference at these changes (%) after the first row."""
    calls = []

    def measure_fn(plan, data, log, **kwargs):
        calls.append(kwargs)
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "machine.json"), "w") as f:
            json.dump({"name": "Fake CPU @ box", "cpus": 4}, f)
        with open(os.path.join(data, "drift.csv"), "w") as f:
            f.write("when,at_s,model,batch,phase,iter_ms_p50,precision\n")
            f.write("start,0.0,squeezenet1_1,1,infer,100.0,fp32\n")
            for i, c in enumerate(changes, 1):
                f.write(f"after pass {i},{10.0 * i},squeezenet1_1,1,infer,{100.0 * (1 + c / 100)},fp32\n")
    return measure_fn, calls


def test_runs_the_drift_check_rejected_are_not_calibrated_on(tmp_path):
    jar, _, _, export_fn, _, describe = stand_ins(tmp_path)
    work = tmp_path / "work"
    measure_fn, calls = _drifting_measure([3.0, 41.0])
    runner = Recorder()
    kw = dict(work=str(work), models=["resnet18"], log=lambda m: None, export_fn=export_fn, describe=describe)
    with pytest.raises(here.DriftRejected) as e:
        here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), runner=runner, measure_fn=measure_fn, **kw)
    text = str(e.value)
    assert "\n" not in text and "+41 %" in text and "drift.csv" in text
    assert "idle machine" in text and "--accept-drift" in text
    assert [c[3] for c in runner.commands] == ["plan"], "no calibration"
    assert not (tmp_path / "mine.sdl").exists()
    # run again (on an idle machine): the rejected runs are set aside and measured again
    steady, calls2 = _drifting_measure([1.0, -2.0])
    runner = Recorder()
    logs = []
    kw["log"] = logs.append
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), runner=runner, measure_fn=steady, **kw)
    assert (work / "data.rejected-1" / "drift.csv").exists() and len(calls2) == 1
    assert [c[3] for c in runner.commands] == ["fit"]
    assert any("set aside" in line for line in logs)


def test_accept_drift_calibrates_on_the_runs_with_a_warning(tmp_path):
    jar, _, _, export_fn, _, describe = stand_ins(tmp_path)
    measure_fn, _ = _drifting_measure([-30.0])
    runner = Recorder()
    logs = []
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(tmp_path / "work"), models=["resnet18"],
             log=logs.append, runner=runner, export_fn=export_fn, measure_fn=measure_fn, describe=describe,
             accept_drift=True)
    assert [c[3] for c in runner.commands] == ["plan", "fit"]
    assert any("-30 %" in line and "--accept-drift" in line for line in logs)


def test_the_accept_drift_option_reaches_here(tmp_path, monkeypatch):
    from scaledl_profiler import cli
    seen = {}
    monkeypatch.setattr(here, "run", lambda *a, **kw: seen.update(kw))
    assert cli.main(["here", "--jar", "j", "--out", "m.sdl", "--accept-drift"]) == 0
    assert seen["accept_drift"] is True


class PlanningJar(Recorder):
    """``scaledl plan`` as the Java side prices it: a run costs 1.5 s + (warm-up + timed) iterations at the prior's
    prediction; runs are chosen until the budget is spent."""
    CANDIDATES = [(m, b, t, ph, ms) for m, base in (("resnet18", 60.0), ("mobilenet_v3_small", 15.0),
                                                    ("densenet121", 140.0))
                  for b in (1, 4, 16) for t in (1, 2, 4) for ph, f in (("train", 3.0), ("infer", 1.0))
                  for ms in [base * f * b / t ** 0.7]]

    def __call__(self, cmd, **kwargs):
        args = cmd[3:]
        if args[0] != "plan":
            return super().__call__(cmd, **kwargs)
        self.commands.append(cmd)
        budget = float(args[args.index("--budget-s") + 1])
        warmup, reps = int(args[args.index("--warmup") + 1]), int(args[args.index("--reps") + 1])
        out = args[args.index("--out") + 1]
        rows, spent = [], 0.0
        for m, b, t, ph, ms in self.CANDIDATES:
            cost = 1.5 + (warmup + reps) * ms / 1000
            if spent + cost <= budget:
                spent += cost
                rows.append(f"{m},32,{b},1,{t},{ph},graphs/{m}_r32.onnx,{ms:.3f},{cost:.3f}\n")
        with open(out, "w") as f:
            f.write("model,resolution,batch,world_size,threads,phase,graph,predicted_ms,cost_s\n" + "".join(rows))
        self.planned = spent
        return subprocess.CompletedProcess(cmd, 0, f"chose {len(rows)} of {len(self.CANDIDATES)} candidates\n"
                                                   "D-efficiency: 0.0000 (9 runs for 40 design columns: ...)\n", "")


class Machine:
    """A clock and a job runner: a job takes 2 s to start, a run 0.8 s plus its iterations at ``speed`` times the
    prior's prediction; a one-worker job starts no run after the deadline, as the real workers do."""

    def __init__(self, speed):
        self.speed, self.now = speed, 1000.0

    def clock(self):
        return self.now

    def runner(self, job, options):
        self.now += 2.0
        out = []
        for r in job["runs"]:
            if options["deadline"] is not None and self.now > options["deadline"]:
                out.append({"key": r["key"], "error": "time budget", "status": "skipped"})
                continue
            model, batch, threads = job["model"], r["batch"], job["threads"]
            base = dict((c[0], c[4]) for c in PlanningJar.CANDIDATES if c[1] == 1 and c[2] == 1
                        and c[3] == "infer")[model]
            ms = base * (3.0 if r["phase"] == "train" else 1.0) * batch / threads ** 0.7 * self.speed
            self.now += 0.8 + (options["warmup"] + options["reps"]) * ms / 1000
            out.append({"key": r["key"], "ms": [ms] * options["reps"], "params": 1})
        return out


@pytest.mark.parametrize("speed", [0.4, 1.0, 4.0])
def test_measuring_takes_the_budget_within_20_percent_however_the_prior_priced_the_runs(tmp_path, speed):
    import functools
    from scaledl_profiler import measure
    jar, _, _, export_fn, _, describe = stand_ins(tmp_path)
    box = Machine(speed)
    measure_fn = functools.partial(measure.measure, runner=box.runner, clock=box.clock, check_idle=False)
    work = tmp_path / "work"
    jar_runner = PlanningJar()
    logs = []
    for budget in (90.0, 300.0):
        start = box.now
        here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(work / str(budget)), budget_s=budget,
                 models=["resnet18", "mobilenet_v3_small", "densenet121"], size=32, log=logs.append,
                 runner=jar_runner, export_fn=export_fn, measure_fn=measure_fn, describe=describe, clock=box.clock)
        took = box.now - start
        assert 0.8 * budget <= took <= 1.2 * budget, (budget, took, jar_runner.planned)
        state = json.loads((work / str(budget) / "here.json").read_text())
        assert state["measured_s"] == pytest.approx(took, abs=0.2)
        assert (work / str(budget) / "data" / "runs.csv").exists()
        drift = measure.read_drift(work / str(budget) / "data")
        assert drift[0][1]["when"] == "start" and len(drift) >= 2, "the reference closes the measurement"
        # resumed: the budget is spent, so nothing more is measured
        again = box.now
        here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(work / str(budget)), budget_s=budget,
                 models=["resnet18", "mobilenet_v3_small", "densenet121"], size=32, log=logs.append,
                 runner=jar_runner, export_fn=export_fn, measure_fn=measure_fn, describe=describe, clock=box.clock)
        assert box.now == again


def test_a_zero_d_efficiency_reads_as_information(tmp_path):
    jar, _, _, export_fn, measure_fn, describe = stand_ins(tmp_path)
    logs = []
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(tmp_path / "w"), models=["resnet18"],
             size=32, log=logs.append, runner=PlanningJar(), export_fn=export_fn, measure_fn=measure_fn,
             describe=describe)
    line = next(line for line in logs if "D-efficiency" in line)
    assert "0.0000" not in line and "information, not a failure" in line
    # today's jar says none; the plan's advice to measure it is here's own next step, not relayed
    assert "information, not a failure" in here._plan_line("D-efficiency: none (9 runs for 40 design columns: ...)")
    assert here._plan_line("wrote w/plan.csv (measure it: python -m scaledl_profiler measure w/plan.csv --out DIR)") \
        is None
    assert here._plan_line("chose 3 of 24 candidates") == "chose 3 of 24 candidates"


def test_a_cut_graph_is_exported_again_and_a_bad_out_is_refused_before_anything(tmp_path):
    jar, exported, _, export_fn, measure_fn, describe = stand_ins(tmp_path)
    work = tmp_path / "w"
    (work / "graphs").mkdir(parents=True)
    (work / "graphs" / "resnet18_r32.onnx").write_bytes(ONNX[:-3])  # an interrupted export
    logs = []
    here.run(str(jar), "cpu-zoo", str(tmp_path / "mine.sdl"), work=str(work), models=["resnet18"], size=32,
             log=logs.append, runner=Recorder(), export_fn=export_fn, measure_fn=measure_fn, describe=describe)
    assert exported == [("resnet18", 32)] and any("not a whole ONNX graph" in line for line in logs)
    with pytest.raises(ValueError, match=f"--out {tmp_path}: is a folder; name the file to write"):
        here.run(str(jar), "cpu-zoo", str(tmp_path), work=str(tmp_path / "w2"), log=lambda m: None,
                 runner=Recorder(), export_fn=export_fn, measure_fn=measure_fn, describe=describe)
    assert not (tmp_path / "w2").exists()
