"""The device campaign's dry run (tools/device-campaign): with a stand-in backend always, with PyTorch on the CPU
where it is installed."""
import csv
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from scaledl_profiler import kernels

CAMPAIGN = Path(__file__).resolve().parents[2] / "tools" / "device-campaign" / "campaign.py"
if not CAMPAIGN.exists():
    pytest.skip("no tools/device-campaign beside this package", allow_module_level=True)


@pytest.fixture
def campaign(monkeypatch):
    spec = importlib.util.spec_from_file_location("campaign", CAMPAIGN)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "campaign", module)  # the dry run's factory: tiny_cnn=campaign:tiny_cnn
    spec.loader.exec_module(module)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return module


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_fake_dry_run_plans_writes_and_records_everything(campaign, tmp_path, capsys):
    out = tmp_path / "fake"
    assert campaign.main(["--dry-run", "--fake", "--out", str(out)]) == 0
    for table in kernels.TABLES:
        t = rows(out / "kernels" / f"{table}.csv")
        assert t and list(t[0]) == kernels.COLUMNS[table]
        assert {r["precision"] for r in t} == set(campaign.DRY_PRECISIONS)
    plan = rows(out / "plan.csv")
    passes = rows(out / "passes.csv")
    assert len(passes) == 2 * len(plan), "every planned run in both passes"
    first = [(r["model"], r["batch"], r["phase"], r["precision"]) for r in passes if r["pass"] == "0"]
    assert first != [(r["model"], r["batch"], r["phase"], r["precision"]) for r in plan], "shuffled"
    assert not rows(out / "runs.csv"), "no graphs with the stand-in backend: runs.csv stays loadable"
    assert len(rows(out / "runs-without-graph.csv")) == len(plan)
    assert (out / "PROVENANCE.md").read_text().startswith("# Device campaign (FAKE backend")
    assert (out / "machine.json").exists()
    err = capsys.readouterr().err
    assert "kernels:" in err and "done:" in err


def test_no_budget_left_still_writes_provenance(campaign, tmp_path):
    out = tmp_path / "none"
    assert campaign.main(["--fake", "--out", str(out), "--budget-s", "0.01"]) == 0
    assert not (out / "passes.csv").exists()
    text = (out / "PROVENANCE.md").read_text()
    assert "kernel rows: none" in text and "whole-model runs in runs.csv: 0" in text


def test_dry_run_with_pytorch_on_the_cpu(campaign, tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "dry"
    assert campaign.main(["--dry-run", "--out", str(out)]) == 0
    runs = rows(out / "runs.csv")
    assert runs, (out / "PROVENANCE.md").read_text()
    assert {r["model"] for r in runs} >= {"tiny_cnn"}
    assert all(os.path.isfile(out / r["graph"]) for r in runs), "graph paths relative to the folder"
    assert {r["precision"] for r in runs} == {"fp32", "bf16"} and {r["passes"] for r in runs} <= {"1", "2"}
    exports = rows(out / "exports.csv")
    assert {e["model"]: e["status"] for e in exports}["tiny_cnn"] == "ok"
    assert sum(len(rows(out / "kernels" / f"{t}.csv")) for t in kernels.TABLES) > 0
    assert "dry run on the CPU" in (out / "PROVENANCE.md").read_text()


def test_the_gpu_plan_measures_the_cnns_channels_last_too(campaign, tmp_path):
    args = campaign._parser().parse_args(["--fake", "--out", str(tmp_path / "plan")])
    c = campaign.Campaign(args)
    os.makedirs(c.out)
    plan = rows(c.write_plan(campaign.models(False)))
    last = [r for r in plan if r["memory_format"] == "channels_last"]
    assert {r["family"] for r in last} == set(campaign.CHANNELS_LAST_FAMILIES)
    assert {r["precision"] for r in last} == set(campaign.CHANNELS_LAST_PRECISIONS)
    for r in last:  # each beside its NCHW twin
        assert any(q["memory_format"] == "nchw" and all(q[k] == r[k] for k in ("model", "batch", "phase", "precision"))
                   for q in plan)
    assert all(r["memory_format"] == "nchw" for r in plan if r["family"] in ("bert", "gpt2", "t5", "llama", "vit"))
