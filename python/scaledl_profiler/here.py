"""A predictor for the machine you are on, in one command: ``python -m scaledl_profiler here --jar scaledl.jar
--model cpu-zoo --out mine.sdl``.

The loop scaledl's documentation describes, run end to end:

1. **export** a handful of standard models (torchvision, small input sizes) into ``WORK/graphs/``;
2. **plan**: ``scaledl plan --grid`` over those models, batches, thread counts and both phases, priced by the
   starting predictor (``--model``) and cut to ``--budget-s`` seconds of measuring (D-optimal within the budget);
3. **measure** the plan on this machine (shuffled passes, a drift reference) into ``WORK/data/``;
4. **calibrate**: ``scaledl fit --calibrate MODEL --data WORK/data --out OUT``: few-shot corrections of the machine
   the starting predictor knows best, under this machine's name (``machine.json``).

Each step says what it does on stderr and is skipped when its output is already there (run it again to resume).
The ``scaledl`` steps run the jar with ``java`` (or ``--java``); the measurement needs PyTorch and torchvision.
"""
import os
import subprocess
import sys

from scaledl_profiler import dataset, machine

DEFAULT_MODELS = ["resnet18", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0", "densenet121",
                  "efficientnet_b0"]


def thread_counts(cpus):
    """1, 2, 4, ... up to the cores (and the cores themselves)."""
    out, t = [], 1
    while t < cpus:
        out.append(t)
        t *= 2
    out.append(max(1, cpus))
    return out


def grid_spec(models, size, batches, cpus):
    """The grid spec ``scaledl plan --grid`` expands (see Candidates in the Java library)."""
    return "\n".join([
        "# written by python -m scaledl_profiler here",
        "model      = " + ", ".join(models),
        f"resolution = {size}",
        "batch      = " + ", ".join(str(b) for b in batches),
        "threads    = " + ", ".join(str(t) for t in thread_counts(cpus)),
        "world_size = 1",
        "phase      = train, infer",
        f"cores      = {cpus}",
        "",
    ])


def run(jar, model, out, work="scaledl-here", budget_s=120.0, models=None, size=64, batches=(1, 4, 16),
        java="java", log=print, runner=subprocess.run, export_fn=None, measure_fn=None, describe=None):
    """Runs the loop; returns the path of the calibrated model. ``runner``, ``export_fn``, ``measure_fn`` and
    ``describe`` are the subprocess runner, :func:`scaledl_profiler.export.export`,
    :func:`scaledl_profiler.measure.measure` and :func:`scaledl_profiler.machine.describe` (stand-ins in tests)."""
    if not os.path.isfile(jar):
        raise FileNotFoundError(f"{jar}: no such file (build it: mvn -B -q package -DskipTests, then "
                                "--jar scaledl-examples/target/scaledl.jar)")
    if budget_s <= 0:
        raise ValueError(f"--budget-s must be positive, got {budget_s}")
    if size < 16:
        raise ValueError(f"--size must be at least 16 pixels, got {size}")
    models = list(models or DEFAULT_MODELS)
    describe = describe or machine.describe
    info = describe("cpu")
    log(f"[here] this machine: {info['name']} ({info.get('cpus')} cores)")
    graphs = os.path.join(work, "graphs")
    os.makedirs(graphs, exist_ok=True)
    if export_fn is None:
        from scaledl_profiler.export import export as export_fn
    for i, name in enumerate(models, 1):
        path = os.path.join(graphs, f"{name}_r{size}.onnx")
        if os.path.isfile(path):
            log(f"[here] 1/4 export {i}/{len(models)}: {path} is there")
            continue
        log(f"[here] 1/4 export {i}/{len(models)}: {name} at {size} px")
        export_fn(name, size, path)
    spec = os.path.join(work, "grid.txt")
    with open(spec, "w") as f:
        f.write(grid_spec(models, size, batches, int(info.get("cpus") or 1)))
    plan = os.path.join(work, "plan.csv")
    if not os.path.isfile(plan):
        log(f"[here] 2/4 plan: D-optimal runs within {budget_s:.0f} s of measuring, priced by {model}")
        _scaledl(runner, java, jar, ["plan", "--grid", spec, "--prior", model, "--budget-s", str(budget_s),
                                     "--out", plan], log)
    else:
        log(f"[here] 2/4 plan: {plan} is there")
    data = os.path.join(work, "data")
    log(f"[here] 3/4 measure {plan} into {data} (keep the machine otherwise idle)")
    if measure_fn is None:
        from scaledl_profiler.measure import measure as measure_fn
    measure_fn(plan, data, log=log)
    log(f"[here] 4/4 calibrate {model} to this machine's runs")
    _scaledl(runner, java, jar, ["fit", "--calibrate", model, "--data", data, "--out", out], log)
    name = dataset.read_machine_name(data) or info["name"]
    log(f"[here] done: java -jar {jar} predict --model {out} --device \"{name}\" --graph G.onnx --batch N")
    return out


def _scaledl(runner, java, jar, args, log):
    cmd = [java, "-jar", jar] + args
    result = runner(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        err = (result.stderr or "").strip().splitlines()
        raise RuntimeError(f"scaledl {args[0]} failed (exit {result.returncode}): "
                           + (err[-1] if err else "no message"))
    for line in (result.stdout or "").strip().splitlines():
        log(f"[here]   {line}")
