#!/usr/bin/env bash
# Runs the Python companion's tests where Python 3 and pytest are present; a missing optional package (pytest,
# PyTorch, onnx) skips tests instead of failing them. PYTHON=... picks the interpreter (default python3).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "python tests skipped: no $PY on PATH"
    exit 0
fi
if ! "$PY" -c "import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)"; then
    echo "python tests skipped: $PY is older than 3.9"
    exit 0
fi
if ! "$PY" -c "import pytest" >/dev/null 2>&1; then
    echo "python tests skipped: pytest is not installed ($PY -m pip install pytest)"
    exit 0
fi
exec "$PY" -m pytest -q -p no:cacheprovider tests
