#!/usr/bin/env bash
# The device campaign: on one GPU, in at most 8 minutes, kernel tables (FP32/TF32/BF16/FP16) and whole-model
# training and inference iterations of a dozen CNNs and transformers, into a scaledl dataset folder.
#   tools/device-campaign/run.sh --out gpu-data            # the campaign (needs a CUDA GPU)
#   tools/device-campaign/run.sh --dry-run --out /tmp/dry  # the same on the CPU, tiny sizes, seconds
# PYTHON=... picks the interpreter (default python3); CAMPAIGN_LIMIT_S the hard limit (default 480 s: the driver
# budgets 450 s and writes what it has when this limit stops it). More options: campaign.py --help.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PY=${PYTHON:-python3}
export PYTHONPATH="$repo/python:$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
exec timeout --signal=TERM --kill-after=15 "${CAMPAIGN_LIMIT_S:-480}" "$PY" "$here/campaign.py" "$@"
