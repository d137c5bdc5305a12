"""scaledl-profiler: export PyTorch models for scaledl and measure the runs a scaledl plan chose.

Modules: ``planfile`` (read plan.csv), ``dataset`` (write passes.csv, runs.csv, machine.json), ``machine`` (describe
this machine), ``models`` (build a model by name), ``export`` (model -> ONNX graph), ``measure`` (run a plan).
Only ``models``, ``export`` and ``measure`` need PyTorch.
"""

__version__ = "0.1.0"
