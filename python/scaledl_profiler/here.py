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

**Budget.** ``--budget-s`` is the measuring time of step 3, all of it: ``scaledl plan`` prices one measurement of a
run (start-up, :data:`WARMUP` untimed and :data:`REPS` timed iterations), and ``measure`` takes :data:`PASSES`
passes and a reference run before and after each, so the plan is given what is left of the budget after the
references, divided by the passes (:func:`plan_budget`). The measurement stops starting runs when the budget is
spent (a prior that priced the runs too cheaply, a slow machine) and, when time is left (a prior too dear), goes on
with further passes, so it takes the budget within a run's time either way; the calibration uses what was measured.
The time measured so far is kept in ``WORK/here.json``, so a resumed run measures only what is left of the budget.

**Drift.** The reference run is the campaign's own check: when it moved by more than
:data:`~scaledl_profiler.measure.DRIFT_LIMIT_PCT` % during the measurement (another program took the cores, the
clock throttled), the runs are not data and ``here`` calibrates nothing: it says so in one line, and the next run
sets those runs aside (``WORK/data.rejected-N``) and measures again, unless given ``--accept-drift`` (calibrate on
them anyway).
"""
import json
import math
import os
import shutil
import subprocess
import time
import zipfile

from scaledl_profiler import dataset, machine

DEFAULT_MODELS = ["resnet18", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0", "densenet121",
                  "efficientnet_b0"]
PASSES = 2
"""Passes ``measure`` takes over the plan (each run measured this many times, in new orders)."""
WARMUP = 2
"""Untimed iterations per run, as ``scaledl plan`` prices them (``--warmup``) and ``measure`` runs them."""
REPS = 3
"""Timed iterations per run, as ``scaledl plan`` prices them (``--reps``) and ``measure`` runs them."""
REFERENCE_S = 3.0
"""Seconds one reference measurement takes (a worker started, the model built, a few iterations at batch 1)."""
MIN_BUDGET_S = 30.0
"""The smallest ``--budget-s``: the references and two passes over a few runs."""


class DriftRejected(ValueError):
    """The drift check rejected the measured runs; the message says what was wrong and what to do."""


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


def plan_budget(budget_s, passes=PASSES):
    """The ``--budget-s`` given to ``scaledl plan`` for ``budget_s`` seconds of measuring: ``plan`` prices one
    measurement of each run, ``measure`` repeats each run ``passes`` times and measures a reference before and after
    each pass."""
    return (budget_s - (passes + 1) * REFERENCE_S) / passes


BUNDLED_MODELS = ("cpu-zoo", "cpu-ddp", "cpu-machines")
"""The jar's bundled CPU models ``here`` can calibrate (``--model``; or a model file)."""


#: The largest input size (pixels) ``here`` exports its models at.
MAX_SIZE = 4096


def run(jar, model, out, work="scaledl-here", budget_s=120.0, models=None, size=64, batches=(1, 4, 16),
        java="java", log=print, runner=subprocess.run, export_fn=None, measure_fn=None, describe=None,
        accept_drift=False, clock=time.time):
    """Runs the loop; returns the path of the calibrated model. ``runner``, ``export_fn``, ``measure_fn``,
    ``describe`` and ``clock`` are the subprocess runner, :func:`scaledl_profiler.export.export`,
    :func:`scaledl_profiler.measure.measure`, :func:`scaledl_profiler.machine.describe` and ``time.time`` (stand-ins
    in tests; ``measure_fn`` gets its deadline on ``clock``). Raises :class:`DriftRejected` instead of calibrating
    on runs the drift check rejected, unless ``accept_drift``."""
    if os.path.isdir(jar):
        raise ValueError(f"--jar {jar}: is a folder; name the jar (scaledl-examples/target/scaledl.jar)")
    if not os.path.exists(jar):
        raise FileNotFoundError(f"{jar}: no such file (build it: mvn -B -q package -DskipTests, then "
                                "--jar scaledl-examples/target/scaledl.jar)")
    if not os.path.isfile(jar):
        raise ValueError(f"--jar {jar}: not a regular file (a device, a pipe); name the jar "
                         "(scaledl-examples/target/scaledl.jar)")
    if not zipfile.is_zipfile(jar):
        raise ValueError(f"--jar {jar}: not a jar (a zip archive); build it: mvn -B -q package -DskipTests, then "
                         "--jar scaledl-examples/target/scaledl.jar")
    # checked before minutes of exporting: the Java command, a model scaledl can calibrate, the models once each
    if runner is subprocess.run and shutil.which(java) is None:
        raise ValueError(f"--java {java}: no such command (install Java 17, or give --java PATH)")
    if model not in BUNDLED_MODELS and not os.path.isfile(model):
        raise ValueError(f"--model {model}: neither a bundled model ({', '.join(BUNDLED_MODELS)}) nor a model file")
    repeated = sorted({m for m in (models or []) if list(models).count(m) > 1})
    if repeated:
        raise ValueError(f"--models names {', '.join(repeated)} more than once")
    if not (budget_s >= MIN_BUDGET_S and math.isfinite(budget_s)):
        raise ValueError(f"--budget-s must be at least {MIN_BUDGET_S:.0f} s (a reference run before and after each "
                         f"of {PASSES} passes, and the passes), got {budget_s:g}")
    if not 16 <= size <= MAX_SIZE:
        raise ValueError(f"--size must be at least 16 pixels and at most {MAX_SIZE}, got {size}")
    dataset.check_file(out, "--out", "e.g. mine.sdl")
    if os.path.isfile(model) and os.path.exists(out) and os.path.samefile(out, model):
        raise ValueError(f"--out {out}: is the --model file the calibration starts from; name another file")
    if not os.fspath(out).lower().endswith(".sdl"):
        # scaledl fit writes .sdl only: refused now, not after the measuring budget is spent
        raise ValueError(f"--out {out}: the model is written as .sdl (name the file so, e.g. mine.sdl)")
    dataset.check_folder(work, "--work")
    if export_fn is None or measure_fn is None:
        from scaledl_profiler.deps import require
        require("torch")
        require("torchvision", "here measures torchvision models")
    models = list(models or DEFAULT_MODELS)
    describe = describe or machine.describe
    info = describe("cpu")
    log(f"[here] this machine: {info['name']} ({info.get('cpus')} cores)")
    # what shapes the plan: a work folder resumes only with the options it was started with (its plan, graphs and
    # measured time are theirs)
    # (another budget or prior on resuming is fine: the plan's runs stay the ones to measure, more or fewer passes)
    options = {"models": models, "size": size, "batches": list(batches)}
    grid_text = grid_spec(models, size, batches, int(info.get("cpus") or 1))
    # here.json read once: its options checked now, its measured time used below
    state = _read_state(work, log)
    _check_resumable(work, state, options, grid_text)
    graphs = os.path.join(work, "graphs")
    dataset.make_folder(graphs, "--work")
    if export_fn is None:
        from scaledl_profiler.export import export as export_fn
    for i, name in enumerate(models, 1):
        path = os.path.join(graphs, f"{name}_r{size}.onnx")
        if os.path.isfile(path) and _is_graph(path):
            log(f"[here] 1/4 export {i}/{len(models)}: {path} is there")
            continue
        if os.path.exists(path):
            log(f"[here] 1/4 export {i}/{len(models)}: {path} is not a whole ONNX graph (an interrupted export?); "
                "exporting it again")
        log(f"[here] 1/4 export {i}/{len(models)}: {name} at {size} px")
        export_fn(name, size, path)
    spec = os.path.join(work, "grid.txt")
    dataset.write_atomically(spec, lambda f: f.write(grid_text))
    plan = os.path.join(work, "plan.csv")
    _write_state(work, dict(state, options=options))
    per_pass = plan_budget(budget_s)
    if not os.path.isfile(plan):
        log(f"[here] 2/4 plan: D-optimal runs within {budget_s:.0f} s of measuring ({PASSES} passes of "
            f"{per_pass:.0f} s and {PASSES + 1} reference runs), priced by {model}")
        _scaledl(runner, java, jar, ["plan", "--grid", spec, "--prior", model, "--budget-s", f"{per_pass:.1f}",
                                     "--warmup", str(WARMUP), "--reps", str(REPS), "--out", plan], log)
    else:
        log(f"[here] 2/4 plan: {plan} is there")
    data = os.path.join(work, "data")
    if state.get("rejected") and not accept_drift and os.path.exists(data):
        aside = _set_aside(data)
        log(f"[here] 3/4 measure: the runs the drift check rejected are set aside in {aside}; measuring again")
        state = {}
    spent = float(state.get("measured_s", 0.0))
    left = budget_s - spent
    if left < 2 * REFERENCE_S:
        log(f"[here] 3/4 measure: the budget is spent ({spent:.0f} of {budget_s:.0f} s measured); calibrating on "
            "what was measured")
    else:
        log(f"[here] 3/4 measure {plan} into {data}: {left:.0f} s of measuring (keep the machine otherwise idle)")
        if measure_fn is None:
            from scaledl_profiler.measure import measure as measure_fn
        t0 = clock()
        try:
            measure_fn(plan, data, log=log, passes=PASSES, warmup=WARMUP, reps=REPS,
                       max_seconds=left - REFERENCE_S, fill_budget=True)
        finally:
            state = {"budget_s": budget_s, "measured_s": round(spent + clock() - t0, 1), "options": options}
            _write_state(work, state)
    _check_drift(work, data, state, accept_drift, log)
    log(f"[here] 4/4 calibrate {model} to this machine's runs")
    _scaledl(runner, java, jar, ["fit", "--calibrate", model, "--data", data, "--out", out], log)
    name = dataset.read_machine_name(data) or info["name"]
    log(f"[here] done: java -jar {jar} predict --model {out} --device \"{name}\" --graph G.onnx --batch N")
    return out


def _is_graph(path):
    """Whether ``path`` reads as a whole ONNX file (an interrupted export leaves a cut one)."""
    from scaledl_profiler.export import count_nodes
    try:
        with open(path, "rb") as f:
            return count_nodes(f.read()) > 0
    except (OSError, ValueError):
        return False


def _check_resumable(work, state, options, grid_text):
    """Refuses (ValueError, one line) to resume a work folder that was started with other options: its plan was made
    for them, so measuring it under new ones would calibrate on runs nobody asked for. The options are those its
    ``here.json`` records (``state``, as read); a folder from before they were recorded is checked by its
    ``grid.txt``."""
    before = state.get("options")
    changed = []
    if isinstance(before, dict):
        changed = [k for k in ("models", "size", "batches") if before.get(k) != options[k]]
    else:
        grid = os.path.join(work, "grid.txt")
        if os.path.isfile(os.path.join(work, "plan.csv")) and os.path.isfile(grid):
            with open(grid, encoding="utf-8", errors="replace") as f:
                if f.read() != grid_text:
                    changed = ["models, size or batches"]
    if changed:
        def said(k):
            v = before.get(k) if isinstance(before, dict) else None
            return f"--{k.replace('_', '-')} {','.join(map(str, v)) if isinstance(v, list) else v}" \
                if v is not None else k
        raise ValueError(f"--work {work} was started with other options ({'; '.join(said(k) for k in changed)}): "
                         f"give those to resume it, or a new --work for these")


def _state_path(work):
    return os.path.join(work, "here.json")


def _read_state(work, log):
    """``WORK/here.json`` (seconds measured, whether the drift check rejected the runs); {} when missing. A damaged
    one is ignored with a warning (the budget then counts from zero)."""
    path = _state_path(work)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
        spent = float(state.get("measured_s", 0.0))
        if not (math.isfinite(spent) and spent >= 0) or not isinstance(state.get("rejected", False), bool):
            raise ValueError("bad fields")
        return state
    except (OSError, ValueError, AttributeError, TypeError):
        log(f"warning: {path}: damaged, ignored (the measuring time so far is taken as 0 s)")
        return {}


def _write_state(work, state):
    dataset.write_atomically(_state_path(work), lambda f: f.write(json.dumps(state, sort_keys=True) + "\n"))


def _set_aside(data):
    n = 1
    while os.path.exists(f"{data}.rejected-{n}"):
        n += 1
    os.rename(data, f"{data}.rejected-{n}")
    return f"{data}.rejected-{n}"


def _check_drift(work, data, state, accept_drift, log):
    """Refuses (:class:`DriftRejected`) runs whose reference moved by more than the limit, unless ``accept_drift``."""
    from scaledl_profiler.measure import DRIFT_LIMIT_PCT, drift_verdict
    verdict = drift_verdict(data) if os.path.isdir(data) else None
    if verdict is None:
        if state.get("rejected"):
            _write_state(work, {k: v for k, v in state.items() if k != "rejected"})
        return
    change, row = verdict
    what = (f"the machine's speed changed by {change:+.0f} % while measuring (reference {row.get('model', '')} "
            f"{row.get('when', '')}; more than {DRIFT_LIMIT_PCT:.0f} %: {os.path.join(data, 'drift.csv')})")
    if accept_drift:
        log(f"[here] warning: {what}; calibrating anyway (--accept-drift)")
        return
    _write_state(work, {**state, "rejected": True})
    raise DriftRejected(f"here: {what}, so its runs are not data and nothing was calibrated; run the same command "
                        "again on an idle machine (it keeps the graphs and plan, sets these runs aside and measures "
                        "again), or add --accept-drift to calibrate on them")


def _plan_line(line):
    """A line of ``scaledl plan``'s output as ``here`` relays it, or None for one it leaves out: a D-efficiency of
    none (or 0 from older jars) is information (fewer runs than design columns, normal for a calibration budget),
    said as such; the plan's "measure it" advice is ``here``'s next step, not the user's."""
    if line.startswith("wrote ") and "(measure it:" in line:
        return None
    if line.startswith("D-efficiency: 0.0000") or line.startswith("D-efficiency: none"):
        return ("D-efficiency 0, as expected here (information, not a failure): a calibration budget buys fewer runs "
                "than the model has design columns, which makes the figure 0 for any choice; calibrating needs "
                "only a few runs")
    return line


def _scaledl(runner, java, jar, args, log):
    cmd = [java, "-jar", jar] + args
    try:
        result = runner(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise ValueError(f"--java {java}: no such command (install Java 17, or give --java PATH)") from None
    if result.returncode != 0:
        err = (result.stderr or "").strip().splitlines()
        raise RuntimeError(f"scaledl {args[0]} failed (exit {result.returncode}): "
                           + (err[-1] if err else "no message"))
    for line in (result.stdout or "").strip().splitlines():
        said = _plan_line(line) if args[0] == "plan" else line
        if said is not None:
            log(f"[here]   {said}")
