"""Numeric precision of a measurement: ``fp32``, ``tf32``, ``fp16``, ``bf16``.

Whole-model iterations (``measure``):

========  ==============================================================================================
fp32      FP32 everywhere: ``torch.backends.cuda.matmul.allow_tf32 = False``, ``cudnn.allow_tf32 = False``
tf32      FP32 tensors, TF32 tensor-core math: both flags ``True`` (Ampere and newer GPUs)
fp16      mixed precision: ``torch.autocast(dtype=float16)``; training scales the loss with a ``GradScaler``;
          TF32 flags off (the FP32 parts of the iteration stay FP32)
bf16      mixed precision: ``torch.autocast(dtype=bfloat16)``, no scaler; TF32 flags off
========  ==============================================================================================

Kernel tables (``kernels``) create their tensors in the precision's dtype instead (``float32`` for fp32 and tf32,
``float16``, ``bfloat16``), with the same TF32 flags. On CPUs only fp32 and bf16 mean something for whole models
(PyTorch's CPU autocast silently falls back to FP32 for other dtypes); ``tf32`` never does.
"""

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
CPU_MODEL_PRECISIONS = ("fp32", "bf16")


def check(precision, option="--precision"):
    """``precision`` lower-cased, or ValueError naming the option."""
    p = (precision or "").strip().lower()
    if p not in PRECISIONS:
        raise ValueError(f"{option} must be one of {', '.join(PRECISIONS)}, got '{precision}'")
    return p


def parse_list(text, option="--precision"):
    """``"fp32,tf32"`` -> ``["fp32", "tf32"]`` (order kept, duplicates dropped); ValueError naming the option."""
    out = []
    for part in (text or "").split(","):
        if part.strip():
            p = check(part, option)
            if p not in out:
                out.append(p)
    if not out:
        raise ValueError(f"{option} needs at least one of {', '.join(PRECISIONS)}")
    return out


def set_math_flags(torch, precision):
    """Sets the TF32 switches for ``precision`` (on only for tf32); returns the previous (matmul, cudnn) values."""
    on = check(precision) == "tf32"
    previous = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    return previous


def autocast_dtype(torch, precision):
    """The autocast dtype of a whole-model run (None: no autocast)."""
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(check(precision))


def tensor_dtype(torch, precision):
    """The dtype kernel tables create their tensors in."""
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(check(precision), torch.float32)


def autocast(torch, device_type, precision):
    """A context manager for one iteration: ``torch.autocast`` for fp16/bf16, a no-op otherwise."""
    import contextlib
    dtype = autocast_dtype(torch, precision)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device_type, dtype=dtype)


def grad_scaler(torch, precision, device_type):
    """A GradScaler for fp16 training on CUDA, else None (bf16 and FP32 need none)."""
    if check(precision) != "fp16" or device_type != "cuda":
        return None
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()
