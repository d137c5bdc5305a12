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
"""
import io
import os

from scaledl_profiler.models import Spec


def export(name, size, out, factories=None, eval_mode=False, opset=13, dynamic_size=False):
    """Exports model ``name`` at input ``size`` to ``out``; returns (nodes or None, trainable parameters)."""
    import torch
    spec = Spec(name, factories)
    torch.manual_seed(0)
    model = spec.build(size)
    model.eval() if eval_mode else model.train()
    x = spec.example_input(2, size)
    with torch.no_grad():
        model(x)
    axes = {0: "batch"}
    if dynamic_size:
        for d in range(2, x.dim()) if x.dim() == 4 else range(1, x.dim()):
            axes[d] = "size"
    buf = io.BytesIO()
    mode = torch.onnx.TrainingMode.EVAL if eval_mode else torch.onnx.TrainingMode.TRAINING
    torch.onnx.export(model, x, buf, export_params=False, do_constant_folding=False,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": axes, "output": {0: "batch"}}, opset_version=opset, training=mode)
    data = buf.getvalue()
    nodes = None
    try:
        import onnx
        proto = onnx.shape_inference.infer_shapes(onnx.load_from_string(data))
        data = proto.SerializeToString()
        nodes = len(proto.graph.node)
    except ImportError:
        pass
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    with open(out, "wb") as f:
        f.write(data)
    return nodes, sum(p.numel() for p in model.parameters() if p.requires_grad)
