"""The one-command loop for this machine (``here``), with the jar, the exporter and the measurement stood in."""
import json
import os
import subprocess

import pytest

from scaledl_profiler import here


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


def setup(tmp_path):
    jar = tmp_path / "scaledl.jar"
    jar.write_text("")
    exported, measured = [], []

    def export_fn(name, size, path):
        exported.append((name, size))
        open(path, "w").close()

    def measure_fn(plan, data, log):
        measured.append(plan)
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "machine.json"), "w") as f:
            json.dump({"name": "Fake CPU @ box", "cpus": 4}, f)

    def describe(device):
        return {"name": "Fake CPU @ box", "cpus": 4}
    return jar, exported, measured, export_fn, measure_fn, describe


def test_the_loop_exports_plans_measures_and_calibrates_in_order_and_resumes(tmp_path):
    jar, exported, measured, export_fn, measure_fn, describe = setup(tmp_path)
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
    assert plan[plan.index("--prior") + 1] == "cpu-zoo" and plan[plan.index("--budget-s") + 1] == "30"
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


def test_a_failed_step_names_the_step_and_the_jars_message(tmp_path):
    jar, _, _, export_fn, measure_fn, describe = setup(tmp_path)
    with pytest.raises(RuntimeError, match="scaledl plan failed .exit 1.: scaledl: error: grid.txt:2"):
        here.run(str(jar), "cpu-zoo", "x.sdl", work=str(tmp_path / "w"), models=["resnet18"], log=lambda m: None,
                 runner=Recorder(fail="plan"), export_fn=export_fn, measure_fn=measure_fn, describe=describe)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"jar": "nope.jar"}, "nope.jar: no such file"),
    ({"budget_s": 0}, "--budget-s must be positive"),
    ({"size": 8}, "--size must be at least 16"),
])
def test_bad_options_are_named(tmp_path, kwargs, fragment):
    jar, _, _, export_fn, measure_fn, describe = setup(tmp_path)
    args = dict(jar=str(jar), model="cpu-zoo", out="x.sdl", work=str(tmp_path / "w"), log=lambda m: None,
                runner=Recorder(), export_fn=export_fn, measure_fn=measure_fn, describe=describe)
    args.update(kwargs)
    with pytest.raises((ValueError, FileNotFoundError), match=fragment):
        here.run(**args)


def test_thread_counts_reach_the_cores():
    assert here.thread_counts(1) == [1]
    assert here.thread_counts(2) == [1, 2]
    assert here.thread_counts(6) == [1, 2, 4, 6]
