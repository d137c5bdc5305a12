"""Exporting a model to the graph file scaledl imports.

Why these flags (``python -m scaledl_profiler export --help`` prints the same):

* **training mode** (``TrainingMode.TRAINING``): BatchNormalization and Dropout stay in the graph, as they run in a
  training iteration. An eval-mode export folds BatchNorm into the convolutions and drops Dropout: the graph then
  describes another computation, and a prediction from it can be off by half (mobilenet_v3_small: 214 ms from an
  eval export with weights at opset 17, 260 ms at opset 13, 327 ms from the training export). ``--eval`` exports
  inference mode (still graph-only, nothing folded) for inference-only data; keep to one style for training data
  and queries.
* **opset 13**: the bundled datasets' style; scaledl also imports newer opsets.
* **graph only** (``export_params=False``): weights become graph inputs with their shapes; files stay small and
  parameter counts stay exact.
* **dynamic batch** (``dynamic_axes``): the first input dimension is the symbol ``batch``, so one file serves every
  batch size. Without it, the batch is fixed at export and scaledl refuses or re-reads it.
* ``--dynamic-size``: also leave the input size symbolic (``size``); bind it at import with ``--dim size=112``.
* ONNX shape inference is applied when the ``onnx`` package is present (scaledl infers shapes itself otherwise).
* The TorchScript exporter (``dynamo=False`` where PyTorch has both): it honours the training mode and opset 13.
* Hugging Face models (``hf:NAME``, ``--config``) take ``input_ids`` of shape ``(batch, seq)`` and return the logits;
  see :mod:`scaledl_profiler.hf`.

The exporters' warnings (TracerWarning, UserWarning, deprecations, C++ messages) are captured: ``export`` reports
their count, and their text with ``--verbose``.
"""
import inspect
import os
import tempfile
from dataclasses import dataclass

from scaledl_profiler.capture import Captured
from scaledl_profiler.models import Spec


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the graph's node count, the model's trainable parameters, the captured warnings."""
    path: str
    nodes: int
    params: int
    warnings: Captured
    kind: str


def _varint(buf, i):
    value, shift = 0, 0
    while True:
        if i >= len(buf):
            raise ValueError("not an ONNX file (truncated)")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(buf, start, end):
    """(field number, start, end) of each length-delimited field of a protobuf message in ``buf[start:end]``."""
    i = start
    while i < end:
        key, i = _varint(buf, i)
        wire = key & 7
        if wire == 0:
            _, i = _varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = _varint(buf, i)
            yield key >> 3, i, i + n
            i += n
        else:
            raise ValueError(f"not an ONNX file (protobuf wire type {wire})")
    if i != end:
        raise ValueError("not an ONNX file (truncated)")


def count_nodes(data):
    """Nodes of an ONNX model's main graph, read from the protobuf wire format (ModelProto.graph = field 7,
    GraphProto.node = field 1): no ``onnx`` package needed."""
    n = 0
    for field, s, e in _fields(data, 0, len(data)):
        if field == 7:
            n += sum(1 for f, _, _ in _fields(data, s, e) if f == 1)
    return n


def _onnx_export_kwargs(torch):
    params = inspect.signature(torch.onnx.export).parameters
    return {"dynamo": False} if "dynamo" in params else {}


def export(name, size, out, factories=None, eval_mode=False, opset=13, dynamic_size=False, head="lm"):
    """Exports model ``name`` at input ``size`` (image side, or sequence length) to ``out``; returns
    :class:`Exported`. The exporters' warnings are captured in its ``warnings``."""
    from scaledl_profiler.deps import require
    torch = require("torch")
    spec = Spec(name, factories, head=head)
    torch.manual_seed(0)
    with Captured() as cap:
        model = spec.build(size)
        model.eval() if eval_mode else model.train()
        x = spec.example_input(2, size)
        with torch.no_grad():
            model(x)
        names = ("input_ids", "logits") if spec.kind == "hf" else ("input", "output")
        axes = {0: "batch"}
        if dynamic_size:
            for d in range(2, x.dim()) if x.dim() == 4 else range(1, x.dim()):
                axes[d] = "size"
        mode = torch.onnx.TrainingMode.EVAL if eval_mode else torch.onnx.TrainingMode.TRAINING
        parent = os.path.dirname(os.path.abspath(out))
        os.makedirs(parent, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=parent)
        os.close(fd)
        try:
            torch.onnx.export(model, (x,), tmp, export_params=False, do_constant_folding=False,
                              input_names=[names[0]], output_names=[names[1]],
                              dynamic_axes={names[0]: axes, names[1]: {0: "batch"}}, opset_version=opset,
                              training=mode, **_onnx_export_kwargs(torch))
            with open(tmp, "rb") as f:
                data = f.read()
        finally:
            os.remove(tmp)
        try:
            import onnx
            data = onnx.shape_inference.infer_shapes(onnx.load_from_string(data)).SerializeToString()
        except ImportError:
            pass
    from scaledl_profiler.dataset import write_atomically
    write_atomically(out, lambda f: f.write(data), binary=True)  # whole or not at all: a cut graph is no graph
    params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return Exported(out, count_nodes(data), params, cap, spec.kind)
