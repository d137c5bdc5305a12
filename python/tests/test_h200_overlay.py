"""The H200 overlay (tools/h200/overlay.py): it writes datasets/gpu plus every H200 row of datasets/h200 in the
layouts the evaluation reads, the whole models at the mean of the two campaigns, the bundled tables' own rows
unchanged, and it refuses to write into a folder that exists."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OVERLAY = ROOT / "tools" / "h200" / "overlay.py"
H200 = ROOT / "datasets" / "h200"
GPU = ROOT / "datasets" / "gpu"


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def overlaid(tmp_path):
    if not (H200 / "e2e.csv").is_file() or not (GPU / "neusight").is_dir():
        pytest.skip("no datasets/h200 or datasets/gpu in this checkout")
    out = tmp_path / "gpu-h200"
    subprocess.run([sys.executable, str(OVERLAY), str(out)], check=True, capture_output=True, text=True)
    return out


def test_every_h200_row_is_added_and_the_bundled_rows_are_kept(overlaid):
    paired = rows(H200 / "kernels_paired.csv")
    for table in ("linear", "bmm"):
        before = rows(GPU / "neusight" / "kernels" / f"{table}.csv")
        after = rows(overlaid / "neusight" / "kernels" / f"{table}.csv")
        added = [r for r in after if r["gpu"] == "NVIDIA H200"]
        mine = [r for r in paired if r["op"] == table]
        assert len(after) == len(before) + len(mine)
        assert sorted((r["M"], r["N"], r["K"], r["latency_ms"], r["precision"] or "fp32") for r in added) == \
            sorted((r["M"], r["N"], r["K"], r["latency_ms"], r["precision"]) for r in mine)
        assert [r["latency_ms"] for r in after[:len(before)]] == [r["latency_ms"] for r in before]
        assert all(r["precision"] == "" for r in after[:len(before)])
    gemm = [r for r in rows(overlaid / "deepbench" / "gemm.csv") if r["gpu"] == "NVIDIA H200"]
    assert len(gemm) == len(rows(H200 / "deepbench_gemm.csv"))
    assert {r["benchmark"] for r in gemm} == {"train"}


def test_whole_models_are_the_mean_of_the_two_campaigns(overlaid):
    def key(r):
        return r["model"], r["phase"], r["seq_len"], r["batch"]
    first = {key(r): float(r["e2e_ms"]) for r in rows(H200 / "e2e.csv")}
    repeat = {key(r): float(r["e2e_ms"]) for r in rows(H200 / "e2e_repeat.csv")}
    added = [r for r in rows(overlaid / "neusight" / "models" / "e2e.csv") if r["gpu_device_name"] == "NVIDIA H200"]
    assert len(added) == len(first) == 18
    for r in added:
        assert float(r["e2e_ms"]) == pytest.approx((first[key(r)] + repeat[key(r)]) / 2, abs=1e-3)
        assert r["node_csv_status"] == "none"


def test_an_existing_folder_is_refused(tmp_path):
    p = subprocess.run([sys.executable, str(OVERLAY), str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1 and "exists" in p.stderr
