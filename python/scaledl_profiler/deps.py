"""Optional packages, and what to say when one is missing.

Every command but ``machine`` needs PyTorch; torchvision, timm and transformers build their own models only. A missing
package is reported by its own name with how to install it, never as "PyTorch is missing" when PyTorch is there.
"""
import importlib

INSTALL = {
    "torch": "PyTorch is not installed (Debian: apt install python3-torch; or pip install torch)",
    "torchvision": "torchvision is not installed (Debian: apt install python3-torchvision; or pip install "
                   "torchvision, the release that matches your PyTorch)",
    "timm": "timm is not installed (pip install timm)",
    "transformers": "transformers is not installed (pip install transformers); it builds Hugging Face models "
                    "(hf:NAME, --config)",
    "onnx": "onnx is not installed (pip install onnx)",
}


class MissingDependency(ImportError):
    """An optional package a command needs is not installed or not usable; the message says how to install it."""


def message(error):
    """One line for an ImportError: the missing package by name and how to install it."""
    if isinstance(error, MissingDependency):
        return str(error)
    name = (getattr(error, "name", None) or "").split(".")[0]
    if name in INSTALL:
        return INSTALL[name]
    if name:
        return f"the Python package '{name}' is not installed (pip install {name})"
    return f"an import failed: {error}"


def require(name, needed_by=None):
    """Imports ``name`` or raises :class:`MissingDependency` naming it (and the package whose import failed, when
    ``name`` is installed but one of its own dependencies is not)."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing = (e.name or name).split(".")[0]
        text = message(e) if missing != name else INSTALL.get(name, f"{name} is not installed (pip install {name})")
        if missing != name:
            text += f" (needed by {name})"
        if needed_by:
            text += f"; {needed_by}"
        raise MissingDependency(text, name=missing) from e


def transformers_with_torch():
    """transformers, checked to see this PyTorch: transformers releases refuse PyTorch versions older than they
    support and then fail later with a misleading 'PyTorch was not found'."""
    torch = require("torch")
    transformers = require("transformers")
    check = getattr(getattr(transformers, "utils", None), "is_torch_available", None)
    if check is not None and not check():
        raise MissingDependency(
            f"transformers {transformers.__version__} cannot use PyTorch {torch.__version__} (too old for this "
            "transformers release); upgrade PyTorch or install an older transformers that supports it",
            name="transformers")
    return transformers
