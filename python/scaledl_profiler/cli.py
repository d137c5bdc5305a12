"""Command line: ``python -m scaledl_profiler {export,measure,machine} ...``. Exit codes: 0 ok, 1 bad input, 2 usage."""
import argparse
import json
import os
import sys

from scaledl_profiler import __version__
from scaledl_profiler.planfile import PlanError

EXPORT_HELP = """Export a model to the graph file scaledl imports: training mode, opset 13, graph only (weights as
inputs), dynamic batch. Training mode keeps BatchNorm and Dropout as a training iteration runs them; an eval export
folds BatchNorm into convolutions and can change a prediction by half, so export training data and queries the same
way. One file per input size (spatial shapes change with it), unless --dynamic-size."""

MEASURE_HELP = """Measure the runs of a plan (scaledl plan --out plan.csv) into a dataset folder: runs.csv, passes.csv,
machine.json, drift.csv. Jobs are shuffled over the whole plan in every pass; a reference run is re-measured between
passes to show drift; measuring into the same folder again resumes. Measure with nothing else running: figures from a
busy machine are not data."""


def _parser():
    p = argparse.ArgumentParser(prog="python -m scaledl_profiler",
                                description="Export PyTorch models for scaledl and measure the runs a plan chose.")
    p.add_argument("--version", action="version", version=f"scaledl-profiler {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("export", help="model -> ONNX graph for scaledl", description=EXPORT_HELP)
    e.add_argument("model", help="torchvision or timm name (tv:NAME, timm:NAME), or a name given to --factory")
    e.add_argument("--size", type=int, help="input size: image side in pixels, or sequence length")
    e.add_argument("--out", help="graph file (default graphs/MODEL_rSIZE.onnx)")
    e.add_argument("--factory", action="append", default=[], metavar="NAME=module:callable",
                   help="build NAME with your own code (repeatable)")
    e.add_argument("--eval", action="store_true", help="inference-mode export, for inference-only data")
    e.add_argument("--opset", type=int, default=13, help="ONNX opset (default 13, the bundled datasets' style)")
    e.add_argument("--dynamic-size", action="store_true",
                   help="leave the input size symbolic ('size'); bind it in scaledl with --dim size=N")

    m = sub.add_parser("measure", help="measure a plan into a dataset folder", description=MEASURE_HELP)
    m.add_argument("plan", help="plan.csv (scaledl plan --out), or any table with its columns")
    m.add_argument("--out", required=True, help="dataset folder to write (resumed if it exists)")
    m.add_argument("--passes", type=int, default=2, help="times each run is measured, in new orders (default 2)")
    m.add_argument("--warmup", type=int, default=2, help="untimed iterations per run (default 2)")
    m.add_argument("--reps", type=int, default=3, help="timed iterations per run (default 3)")
    m.add_argument("--cap-s", type=float, default=8.0, help="stop timing a run after this many seconds (default 8)")
    m.add_argument("--seed", type=int, default=1, help="seed of the measurement order (default 1)")
    m.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cpu (gloo) or cuda (NCCL)")
    m.add_argument("--factory", action="append", default=[], metavar="NAME=module:callable",
                   help="build NAME with your own code (repeatable)")
    m.add_argument("--reference", help="model of the reference run re-measured between passes (default: the "
                                       "plan's cheapest run)")

    sub.add_parser("machine", help="print what machine.json would say about this machine")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == "machine":
            from scaledl_profiler.machine import describe
            print(json.dumps(describe(), indent=1, sort_keys=True))
            return 0
        from scaledl_profiler.models import parse_factories
        factories = parse_factories(args.factory)
        if args.command == "export":
            from scaledl_profiler.export import export
            out = args.out or os.path.join("graphs", args.model.replace(":", "_").replace("/", "_")
                                           + (f"_r{args.size}" if args.size else "") + ".onnx")
            nodes, params = export(args.model, args.size, out, factories, args.eval, args.opset, args.dynamic_size)
            print(f"wrote {out}: {nodes if nodes is not None else '?'} nodes, {params} trainable parameters")
            return 0
        from scaledl_profiler.measure import measure
        if args.passes < 1 or args.reps < 1 or args.warmup < 0:
            raise ValueError("--passes and --reps must be >= 1, --warmup >= 0")
        n = measure(args.plan, args.out, passes=args.passes, warmup=args.warmup, reps=args.reps, cap_s=args.cap_s,
                    seed=args.seed, device=args.device, factories=factories, reference=args.reference,
                    log=lambda msg: print(msg, file=sys.stderr, flush=True))
        print(f"wrote {os.path.join(args.out, 'runs.csv')}: {n} runs (fit: scaledl fit --data {args.out} "
              f"--out model.sdl)")
        return 0
    except (PlanError, ValueError, FileNotFoundError) as e:
        print(f"scaledl_profiler: error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"scaledl_profiler: error: {e.name or e} is not installed; this command needs PyTorch "
              "(Debian: apt install python3-torch; or pip install torch)", file=sys.stderr)
        return 1
