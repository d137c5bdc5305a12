"""Building a model by name, with its example input and training loss.

Names: ``tv:NAME`` (torchvision), ``timm:NAME`` (timm), ``hf:NAME`` or a hub-style name (Hugging Face
transformers, see :mod:`scaledl_profiler.hf`; the size is the sequence length), a bare ``NAME`` (a built-in
transformers configuration, else torchvision if it has it, else timm), or a name mapped by ``--factory
NAME=module:callable`` to your own code. A factory is called with ``size=`` when it accepts it (else with no
arguments) and returns an ``nn.Module``; its module may define ``scaledl_input(batch, size)`` to give the example
input (default: images ``(batch, 3, size, size)``). Weights are random (nothing is downloaded). Stochastic depth is
switched off (timm ``drop_path_rate=0``, torchvision ``StochasticDepth.p = 0``): ONNX cannot export it and it changes
the iteration.
"""
import importlib
import inspect

from scaledl_profiler import hf
from scaledl_profiler.deps import MissingDependency, require


def parse_factories(specs):
    """``["name=module:callable", ...]`` -> {name: (module, callable)}."""
    out = {}
    for spec in specs or []:
        name, _, target = spec.partition("=")
        module, _, attr = target.partition(":")
        if not (name.strip() and module.strip() and attr.strip()):
            raise ValueError(f"--factory takes NAME=module:callable, got '{spec}'")
        if name.strip() in out:
            raise ValueError(f"--factory {name.strip()} is given twice; name each factory once")
        out[name.strip()] = (module.strip(), attr.strip())
    return out


class Spec:
    """How to build one model and its input."""

    def __init__(self, name, factories=None, head="lm"):
        self.name = name
        self.factory = (factories or {}).get(name)
        self.hf = self.factory is None and hf.is_hf(name)
        self.head = head
        self._model = None

    @property
    def kind(self):
        """``factory``, ``hf`` (token ids in) or ``vision`` (images in)."""
        return "factory" if self.factory else "hf" if self.hf else "vision"

    def build(self, size):
        require("torch")
        if self.factory:
            try:
                module = importlib.import_module(self.factory[0])
            except ModuleNotFoundError as e:
                if e.name == self.factory[0]:
                    raise ValueError(f"--factory {self.name}={self.factory[0]}:{self.factory[1]}: no module "
                                     f"'{self.factory[0]}' on the Python path") from None
                raise
            fn = getattr(module, self.factory[1], None)
            if fn is None:
                raise ValueError(f"--factory {self.name}={self.factory[0]}:{self.factory[1]}: module "
                                 f"'{self.factory[0]}' has no '{self.factory[1]}'")
            params = inspect.signature(fn).parameters
            return fn(size=size) if "size" in params else fn()
        if self.hf:
            self._model = hf.build(self.name, size, self.head)
            return self._model
        name = self.name
        if name.startswith("tv:") or (not name.startswith("timm:") and _torchvision_has(name)):
            torchvision = require("torchvision", f"it builds torchvision model '{name}'")
            bare = name[3:] if name.startswith("tv:") else name
            if not hasattr(torchvision.models, bare):
                raise ValueError(f"torchvision {torchvision.__version__} has no model '{bare}'")
            kw = {"image_size": size} if bare.startswith("vit_") and size else {}
            model = getattr(torchvision.models, bare)(**kw)
            for m in model.modules():
                if type(m).__name__ == "StochasticDepth":
                    m.p = 0.0
            return model
        if not name.startswith("timm:") and not _importable("torchvision") and not _importable("timm"):
            raise MissingDependency(f"'{name}' names a torchvision or timm model, and neither package is usable "
                                    "here (pip install torchvision timm; Debian: apt install python3-torchvision)",
                                    name="torchvision")
        timm = require("timm", None if name.startswith("timm:") else f"timm builds '{name}', which torchvision "
                                                                     "does not have here")
        bare = name[5:] if name.startswith("timm:") else name
        if not timm.is_model(bare):
            raise ValueError(f"'{name}' is not a torchvision or timm model, nor a built-in transformers "
                             f"configuration (hf:NAME; built in: {', '.join(sorted(hf.CONFIGS))}); or give "
                             "--factory NAME=module:callable")
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
        if self.hf:
            if self._model is None:
                raise ValueError(f"{self.name}: build the model before its input")
            return hf.example_input(self._model, batch, size)
        if size is None:
            raise ValueError(f"{self.name}: an image model needs an input size (resolution)")
        return torch.randn(batch, 3, size, size)


def _importable(module):
    try:
        importlib.import_module(module)
        return True
    except (ImportError, RuntimeError):
        return False


#: Name prefixes of torchvision's and timm's image models (what a plan row without a resolution cannot build).
IMAGE_PREFIXES = ("tv:", "timm:", "resnet", "resnext", "wide_resnet", "vgg", "alexnet", "squeezenet", "densenet",
                  "inception", "googlenet", "mobilenet", "mnasnet", "shufflenet", "efficientnet", "regnet", "convnext",
                  "vit_", "swin_", "maxvit", "deit", "beit", "levit")


def looks_like_an_image_model(name, factories=None):
    """Whether ``name`` names a torchvision or timm image model by its prefix (no factory of that name): such a model
    needs an input size. Decided without PyTorch, so a plan can be checked before anything is created."""
    return not (factories or {}).get(name) and name.lower().startswith(IMAGE_PREFIXES)


def _torchvision_has(name):
    try:
        import torchvision
    except (ImportError, RuntimeError):  # absent, or built for another PyTorch
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
