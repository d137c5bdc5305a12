"""Command line: ``python -m scaledl_profiler {export,measure,kernels,here,machine} ...``.

Exit codes: 0 ok, 1 bad input (a file, a folder, a model, a missing package), 2 usage (options that do not go
together), 3 internal error (a bug), 130 interrupted (Ctrl-C; run the same command again to resume). Every error is
one line on stderr; ``SCALEDL_PROFILER_TRACEBACK=1`` adds the traceback of an internal error.
"""
import argparse
import json
import math
import os
import sys
import traceback

from scaledl_profiler import __version__
from scaledl_profiler.here import DEFAULT_MODELS
from scaledl_profiler.planfile import MEMORY_FORMATS, PlanError

EXPORT_HELP = """Export a model to the graph file scaledl imports: training mode, opset 13, graph only (weights as
inputs), dynamic batch. Training mode keeps BatchNorm and Dropout as a training iteration runs them; an eval export
folds BatchNorm into convolutions and can change a prediction by half, so export training data and queries the same
way. One file per input size (spatial shapes change with it), unless --dynamic-size. Hugging Face models (hf:NAME,
a built-in name such as bert-base-uncased or gpt2, or --config config.json) are built from their configuration
with random weights, offline, and take input_ids of --seq tokens. The exporters' warnings are counted, and printed
with --verbose."""

MEASURE_HELP = """Measure the runs of a plan (scaledl plan --out plan.csv) into a dataset folder: runs.csv, passes.csv,
machine.json, drift.csv. Jobs are shuffled over the whole plan in every pass; a reference run is re-measured between
passes to show drift; measuring into the same folder again resumes. Measure with nothing else running: figures from a
busy machine are not data. On GPUs (--device cuda) iterations are timed with CUDA events, in the precision of
--precision (or of the plan's precision column). The plan's graphs are copied into the folder, only from the plan's
folder (and below) or the dataset folder; a plan naming any other file is refused."""

KERNELS_HELP = """Measure kernel tables (NeuSight's layout: bmm, linear, elem, ln, softmax, conv, plus attention)
into DIR/kernels/*.csv, each row ending with its precision: single operators, forward only, latency_ms = mean of the
5 fastest of --reps timed calls (CUDA events). The shapes are shuffled over all tables (seeded), so --max-seconds
leaves a random subset of every table."""


HERE_HELP = """A predictor for this machine in one command: export a few torchvision models, let scaledl plan the
runs worth measuring within --budget-s (D-optimal, priced by --model), measure them here, and calibrate --model to
them (scaledl fit --calibrate). --budget-s is the whole measuring time (two passes and the drift reference
included): the measurement stops starting runs when it is spent and fills time left with further passes. Runs
whose drift reference moved by more than 15 % (a busy machine) are not calibrated on: run again on an idle machine
(they are set aside and measured again), or give --accept-drift. Progress on stderr; run it again to resume.
Predict with the model it writes and --device set to this machine's name (printed at the end)."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line naming the option (exit 2), as every other error; --help prints the usage."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (--help shows the usage)\n")


def _positive(what):
    """An argparse type: a finite number above 0 (NaN, infinities, 0 and negatives are refused, naming the value)."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"must be a positive number of {what}, got '{text}'")
        return v
    return parse


def _parser():
    p = _Parser(prog="python -m scaledl_profiler",
                                description="Export PyTorch models for scaledl and measure the runs a plan chose.")
    p.add_argument("--version", action="version", version=f"scaledl-profiler {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("export", help="model -> ONNX graph for scaledl", description=EXPORT_HELP)
    e.add_argument("model", nargs="?", help="torchvision or timm name (tv:NAME, timm:NAME), a Hugging Face name "
                                            "(hf:NAME, bert-base-uncased, gpt2, ...), or a name given to --factory")
    e.add_argument("--config", metavar="PATH", help="a Hugging Face config.json to build the model from (instead "
                                                    "of a model name)")
    e.add_argument("--size", type=int, help="input size: image side in pixels, or sequence length")
    e.add_argument("--seq", type=int, help="sequence length of a Hugging Face model (default 128; same as --size)")
    e.add_argument("--head", choices=["lm", "base"], default="lm",
                   help="Hugging Face models: with the language-modelling head (lm, default) or the bare model")
    e.add_argument("--out", help="graph file (default graphs/MODEL_rSIZE.onnx)")
    e.add_argument("--factory", action="append", default=[], metavar="NAME=module:callable",
                   help="build NAME with your own code (repeatable)")
    e.add_argument("--eval", action="store_true", help="inference-mode export, for inference-only data")
    e.add_argument("--opset", type=int, default=13, help="ONNX opset (default 13, the bundled datasets' style)")
    e.add_argument("--dynamic-size", action="store_true",
                   help="leave the input size symbolic ('size'); bind it in scaledl with --dim size=N")
    e.add_argument("--verbose", action="store_true", help="print the exporters' warnings")

    m = sub.add_parser("measure", help="measure a plan into a dataset folder", description=MEASURE_HELP)
    m.add_argument("plan", help="plan.csv (scaledl plan --out), or any table with its columns")
    m.add_argument("--out", required=True, help="dataset folder to write (resumed if it exists)")
    m.add_argument("--passes", type=int, default=2, help="times each run is measured, in new orders (default 2)")
    m.add_argument("--warmup", type=int, default=2, help="untimed iterations per run (default 2)")
    m.add_argument("--reps", type=int, default=3, help="timed iterations per run (default 3)")
    m.add_argument("--cap-s", type=_positive("seconds"), default=8.0, help="stop timing a run after this many seconds (default 8)")
    m.add_argument("--seed", type=int, default=1, help="seed of the measurement order (default 1)")
    m.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cpu (default; gloo) or cuda (NCCL)")
    m.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16", "bf16"],
                   help="fp32 (default), tf32 (TF32 matmul and cuDNN), fp16 or bf16 (autocast mixed precision; "
                        "fp16 training with a GradScaler); a plan's precision column overrides it per run")
    m.add_argument("--factory", action="append", default=[], metavar="NAME=module:callable",
                   help="build NAME with your own code (repeatable)")
    m.add_argument("--reference", help="model of the reference run re-measured between passes (default: the "
                                       "plan's cheapest run)")
    m.add_argument("--max-seconds", type=_positive("seconds"), help="start no job after this many seconds; the runs left are "
                                                     "recorded in failed.csv (status skipped)")
    m.add_argument("--keep-going", action="store_true", help="record a job that fails in failed.csv and go on")
    m.add_argument("--in-process", action="store_true",
                   help="measure one-worker jobs in this process (faster start on GPUs; no isolation)")
    m.add_argument("--cudnn-benchmark", action="store_true", help="let cuDNN autotune its algorithms (GPUs)")
    m.add_argument("--memory-format", default="nchw", choices=list(MEMORY_FORMATS),
                   help="lay out the feature maps channels-last (GPUs; a plan's memory_format column per run; "
                        "default nchw, PyTorch's default)")

    k = sub.add_parser("kernels", help="measure kernel tables (bmm, linear, elem, ln, softmax, conv, attention)",
                       description=KERNELS_HELP)
    k.add_argument("--out", required=True, help="folder: tables go to OUT/kernels/, machine.json to OUT/")
    k.add_argument("--precision", default="fp32", help="comma-separated: fp32,tf32,fp16,bf16 (default fp32)")
    k.add_argument("--device", choices=["cpu", "cuda"], default="cuda", help="cuda (default) or cpu")
    k.add_argument("--quick", action="store_true", help="a small grid (same as --grid quick; it wins over --grid)")
    k.add_argument("--grid", choices=["full", "quick", "tiny"], default="full", help="shape grid (default full)")
    k.add_argument("--max-seconds", type=_positive("seconds"), help="time budget: shapes not started by then are left out")
    k.add_argument("--seed", type=int, default=1, help="seed of the shapes and their order (default 1)")
    k.add_argument("--ops", default=",".join(["bmm", "linear", "elem", "ln", "softmax", "conv", "attention"]),
                   help="tables to measure (default all)")
    k.add_argument("--reps", type=int, default=25, help="timed calls per shape (default 25)")
    k.add_argument("--warmup", type=int, default=3, help="untimed calls per shape (default 3)")
    k.add_argument("--max-gib", type=_positive("GiB"), default=2.0, help="leave out shapes whose tensors exceed this (GiB, "
                                                              "default 2)")

    h = sub.add_parser("here", help="plan, measure and calibrate a predictor for this machine, in one command",
                       description=HERE_HELP)
    h.add_argument("--jar", required=True, help="scaledl.jar (mvn -B -q package -DskipTests builds "
                                                "scaledl-examples/target/scaledl.jar)")
    h.add_argument("--model", default="cpu-zoo", help="predictor to start from: a bundled name or a file "
                                                      "(default cpu-zoo)")
    h.add_argument("--out", required=True, help="calibrated model file to write (e.g. mine.sdl)")
    h.add_argument("--work", default="scaledl-here", help="folder for graphs, plan and measurements (default "
                                                          "scaledl-here; run again to resume)")
    h.add_argument("--budget-s", type=_positive("seconds"), default=120.0, help="seconds of measuring, all passes and the drift "
                                                                 "reference included (default 120, at least 30)")
    h.add_argument("--models", default=",".join(DEFAULT_MODELS), help="torchvision models to measure (default "
                                                                       "%(default)s)")
    h.add_argument("--size", type=int, default=64, help="image side in pixels (default 64)")
    h.add_argument("--java", default="java", help="the java command (default java)")
    h.add_argument("--accept-drift", action="store_true",
                   help="calibrate even on runs whose drift reference moved by more than 15 %% (a busy machine)")

    mc = sub.add_parser("machine", help="print what machine.json would say about this machine",
                        description="Print, as JSON, what measure and kernels write to machine.json: the CPU "
                                    "(model, cores, memory) and with --device cuda the GPUs too.")
    mc.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="describe the GPUs too (cuda)")
    return p


def _here(args, parser):
    from scaledl_profiler.here import run
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not models:
        parser.error("here: --models names no model")
    run(args.jar, args.model, args.out, work=args.work, budget_s=args.budget_s, models=models, size=args.size,
        java=args.java, log=_log, accept_drift=args.accept_drift)
    print(f"wrote {args.out}")
    return 0


#: The most passes ``measure`` takes (each measures every run of the plan once more).
MAX_PASSES = 1000
#: The most timed (or untimed) calls per run or kernel shape.
MAX_REPS = 100_000
#: The largest tensor size ``kernels --max-gib`` takes, GiB (no GPU holds more in one tensor).
MAX_GIB = 4096.0


def _factories(args, parser):
    """``--factory`` bindings, a malformed one a usage error (exit 2)."""
    from scaledl_profiler.models import parse_factories
    try:
        return parse_factories(args.factory)
    except ValueError as e:
        parser.error(f"{args.command}: {e}")


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


def _export(args, parser):
    from scaledl_profiler.export import export
    from scaledl_profiler.models import Spec
    factories = _factories(args, parser)
    if args.model and args.config:
        parser.error("export: give a model name or --config, not both")
    if not args.model and not args.config:
        parser.error("export: give a model name (e.g. resnet18, gpt2) or --config config.json")
    if args.seq is not None and args.size is not None and args.seq != args.size:
        parser.error(f"export: --seq {args.seq} and --size {args.size} disagree (they are the same option)")
    name = args.model or (args.config if args.config.startswith("hf:") else "hf:" + args.config)
    if args.config and not args.config.endswith(".json"):
        parser.error(f"export: --config takes a config.json file, got '{args.config}'")
    if args.config and not args.config.startswith("hf:") and not os.path.isfile(args.config):
        # said before PyTorch is looked for: a missing file is the first thing to fix
        raise ValueError(f"--config {args.config}: " + ("is a folder, not a config.json file"
                                                         if os.path.isdir(args.config) else "no such file"))
    config_file = args.config[3:] if args.config and args.config.startswith("hf:") else args.config
    if config_file and config_file.endswith(".json"):
        from scaledl_profiler.hf import read_config_file
        read_config_file(config_file)   # its JSON and sizes checked before PyTorch is looked for
    kind = Spec(name, factories).kind
    hf = kind == "hf"
    size = args.seq if args.seq is not None else args.size
    if args.seq is not None and not hf:
        parser.error("export: --seq is for Hugging Face models (images take --size)")
    if hf and size is None:
        from scaledl_profiler.hf import DEFAULT_SEQ
        size = DEFAULT_SEQ
    for opt, v in (("--size", args.size), ("--seq", args.seq)):
        if v is not None and v < 1:
            parser.error(f"export: {opt} must be positive, got {v}")
    if kind == "vision" and size is None:
        parser.error("export: an image model needs --size (its input resolution, e.g. --size 224)")
    out = args.out
    if not out:
        stem = os.path.splitext(os.path.basename(args.config))[0] if args.config else args.model
        for prefix in ("hf:", "tv:", "timm:"):
            if stem.startswith(prefix):
                stem = stem[len(prefix):]
        out = os.path.join("graphs", stem.replace(":", "_").replace("/", "_") + (f"_r{size}" if size else "")
                           + ".onnx")
    from scaledl_profiler import dataset
    dataset.check_file(out, "--out", "e.g. graphs/NAME_rSIZE.onnx")
    if config_file and os.path.exists(out) and os.path.exists(config_file) and os.path.samefile(out, config_file):
        parser.error(f"export: --out {out} is the --config file; name another file for the graph")
    result = export(name, size, out, factories, args.eval, args.opset, args.dynamic_size, head=args.head)
    print(f"wrote {out}: {result.nodes} nodes, {result.params} trainable parameters")
    summary = result.warnings.summary("export")
    if summary:
        if args.verbose:
            _log(result.warnings.details())
            _log(summary)
        else:
            _log(summary + "; --verbose prints them")
    return 0


def _measure(args, parser):
    from scaledl_profiler.measure import (check_device_memory_format, check_device_precisions, measure, run_job,
                                          run_job_inline)
    factories = _factories(args, parser)
    if args.passes < 1 or args.reps < 1 or args.warmup < 0:
        parser.error("measure: --passes and --reps must be >= 1, --warmup >= 0")
    for opt, v, most in (("--passes", args.passes, MAX_PASSES), ("--reps", args.reps, MAX_REPS),
                         ("--warmup", args.warmup, MAX_REPS)):
        if v > most:
            parser.error(f"measure: {opt} {v} is more than {most}; a campaign of so many is not meant")
    try:
        check_device_precisions(args.device, [args.precision])
        check_device_memory_format(args.device, args.memory_format)
    except ValueError as e:
        parser.error(f"measure: {e}")
    n = measure(args.plan, args.out, passes=args.passes, warmup=args.warmup, reps=args.reps, cap_s=args.cap_s,
                seed=args.seed, device=args.device, factories=factories, reference=args.reference, log=_log,
                precision=args.precision, keep_going=args.keep_going, max_seconds=args.max_seconds,
                runner=run_job_inline if args.in_process else run_job, cudnn_benchmark=args.cudnn_benchmark,
                memory_format=args.memory_format)
    print(f"wrote {os.path.join(args.out, 'runs.csv')}: {n} runs (fit: scaledl fit --data {args.out} "
          f"--out model.sdl)")
    return 0


def _kernels(args, parser):
    from scaledl_profiler import dataset, kernels, machine
    from scaledl_profiler.precision import parse_list
    try:
        precisions = parse_list(args.precision)
        tables = kernels.tables_option(args.ops)
    except ValueError as e:
        parser.error(f"kernels: {e}")
    if args.device == "cpu" and "tf32" in precisions:
        parser.error("kernels: --precision tf32 needs --device cuda (TF32 is a GPU format)")
    if args.reps < 1 or args.warmup < 0 or args.max_gib <= 0:
        parser.error("kernels: --reps must be >= 1, --warmup >= 0, --max-gib > 0")
    if args.reps > MAX_REPS or args.warmup > MAX_REPS or args.max_gib > MAX_GIB:
        parser.error(f"kernels: --reps and --warmup are at most {MAX_REPS}, --max-gib at most {MAX_GIB:.0f}")
    grid = "quick" if args.quick else args.grid
    dataset.check_folder(args.out, "--out")
    executor = kernels.make_executor(args.device, reps=args.reps, warmup=args.warmup)
    dataset.make_folder(args.out, "--out")
    dataset.write_machine(args.out, machine.describe(args.device))
    summary = kernels.run(args.out, precisions, executor, grid, args.seed, args.max_seconds, tables, _log,
                          int(args.max_gib * 2 ** 30))
    print(f"wrote {os.path.join(args.out, 'kernels')}: {summary.line()}")
    return 0


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "machine":
            from scaledl_profiler.machine import describe
            d = describe(args.device)
            if args.device == "cuda" and "gpu" not in d:
                # a description of the CPU alone would pass for the GPU machine's
                raise ValueError("--device cuda: " + ("PyTorch is not installed" if "torch" not in d
                                                      else "PyTorch sees no CUDA GPU")
                                 + " (without --device, machine describes this machine's CPU)")
            print(json.dumps(d, indent=1, sort_keys=True))
            return 0
        if args.command == "export":
            return _export(args, parser)
        if args.command == "kernels":
            return _kernels(args, parser)
        if args.command == "here":
            return _here(args, parser)
        return _measure(args, parser)
    except (PlanError, ValueError) as e:
        print(f"scaledl_profiler: error: {_one_line(e)}", file=sys.stderr)
        _captured(e, args)
        return 1
    except ImportError as e:
        from scaledl_profiler.deps import message
        print(f"scaledl_profiler: error: {message(e)}", file=sys.stderr)
        return 1
    except OSError as e:  # a file or folder that cannot be read or written (missing, permissions, a full disk)
        print(f"scaledl_profiler: error: {_os_error(e)}", file=sys.stderr)
        _captured(e, args)
        return 1
    except RuntimeError as e:
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()] or [type(e).__name__]
        text = lines[0] if len(lines) == 1 else f"{lines[0].rstrip(':')}: {lines[-1]}"
        if "opset version" in text and args.command == "export":
            text += " (try a newer --opset, e.g. 17)"
        print(f"scaledl_profiler: error: {text}", file=sys.stderr)
        if getattr(args, "verbose", False) and len(lines) > 1:
            print("\n".join(lines), file=sys.stderr)
        _captured(e, args)
        return 1
    except KeyboardInterrupt:
        resumable = args.command in ("measure", "here", "kernels")
        print("scaledl_profiler: interrupted" + (" (run the same command again to resume)" if resumable else ""),
              file=sys.stderr)
        return 130
    except Exception as e:  # a bug: one line, the traceback on request
        if os.environ.get("SCALEDL_PROFILER_TRACEBACK"):
            traceback.print_exc()
        print(f"scaledl_profiler: internal error: {type(e).__name__}: {_one_line(e)} (a bug: please report it; "
              "SCALEDL_PROFILER_TRACEBACK=1 prints the traceback)", file=sys.stderr)
        return 3


def _one_line(error):
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return "; ".join(lines) if lines else type(error).__name__


def _os_error(e):
    """An OSError as one line: the path and what is wrong with it."""
    what = e.strerror or _one_line(e)
    if e.filename is not None and e.filename2 is not None:
        return f"{e.filename} -> {e.filename2}: {what}"
    if e.filename is not None:
        return f"{e.filename}: {what}"
    return what


def _captured(error, args):
    cap = getattr(error, "scaledl_captured", None)
    if cap is None or not cap.count() and not cap.output.strip():
        return
    if getattr(args, "verbose", False):
        print(cap.details(), file=sys.stderr)
    else:
        print(f"({cap.summary('the failed step') or 'output captured'}; --verbose prints them)", file=sys.stderr)
