"""Building a model by name, with its example input and training loss.

Names: ``tv:NAME`` (torchvision), ``timm:NAME`` (timm), a bare ``NAME`` (torchvision if it has it, else timm), or a
name mapped by ``--factory NAME=module:callable`` to your own code. A factory is called with ``size=`` when it accepts
it (else with no arguments) and returns an ``nn.Module``; its module may define ``scaledl_input(batch, size)`` to
give the example input (default: images ``(batch, 3, size, size)``). Weights are random (nothing is downloaded).
Stochastic depth is switched off (``drop_path_rate=0``): ONNX cannot export it and it changes the iteration.
"""
import importlib
import inspect


def parse_factories(specs):
    """``["name=module:callable", ...]`` -> {name: (module, callable)}."""
    out = {}
    for spec in specs or []:
        if "=" not in spec or ":" not in spec.split("=", 1)[1]:
            raise ValueError(f"--factory takes NAME=module:callable, got '{spec}'")
        name, target = spec.split("=", 1)
        module, attr = target.split(":", 1)
        out[name.strip()] = (module.strip(), attr.strip())
    return out


class Spec:
    """How to build one model and its input."""

    def __init__(self, name, factories=None):
        self.name = name
        self.factory = (factories or {}).get(name)

    def build(self, size):
        import torch  # noqa: F401  (fail early with a clear ImportError)
        if self.factory:
            module = importlib.import_module(self.factory[0])
            fn = getattr(module, self.factory[1])
            params = inspect.signature(fn).parameters
            return fn(size=size) if "size" in params else fn()
        name = self.name
        if name.startswith("tv:") or (not name.startswith("timm:") and _torchvision_has(name)):
            import torchvision
            bare = name[3:] if name.startswith("tv:") else name
            kw = {"image_size": size} if bare.startswith("vit_") and size else {}
            return getattr(torchvision.models, bare)(**kw)
        import timm
        bare = name[5:] if name.startswith("timm:") else name
        for kw in ({"img_size": size, "drop_path_rate": 0.0}, {"drop_path_rate": 0.0}, {}):
            if kw.get("img_size") is None:
                kw.pop("img_size", None)
            try:
                return timm.create_model(bare, pretrained=False, **kw)
            except TypeError:
                continue
        raise ValueError(f"cannot build '{name}' with timm")

    def example_input(self, batch, size):
        import torch
        if self.factory:
            module = importlib.import_module(self.factory[0])
            if hasattr(module, "scaledl_input"):
                return module.scaledl_input(batch, size)
        if size is None:
            raise ValueError(f"{self.name}: an image model needs an input size (resolution)")
        return torch.randn(batch, 3, size, size)


def _torchvision_has(name):
    try:
        import torchvision
    except ImportError:
        return False
    fn = getattr(torchvision.models, name, None)
    return callable(fn) and not inspect.isclass(fn)


def loss(output, generator=None):
    """Cross-entropy against random targets over the output's last dimension (per token for sequence outputs)."""
    import torch
    import torch.nn.functional as F
    if isinstance(output, (tuple, list)):
        output = output[0]
    if hasattr(output, "logits"):
        output = output.logits
    flat = output.reshape(-1, output.shape[-1])
    target = torch.randint(0, output.shape[-1], (flat.shape[0],), generator=generator)
    return F.cross_entropy(flat, target)
