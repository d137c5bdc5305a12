"""Within-cluster contrasts of held-out errors (tools/llm-public/contrast.py) on synthetic tables: a cluster's own
level cancels, only the clusters holding both kinds of job count, and bad input is named by file and line. The
errors are invented; nothing here is a measurement."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRAST = ROOT / "tools" / "llm-public" / "contrast.py"

if not CONTRAST.is_file():
    pytest.skip("no tools/llm-public beside this package", allow_module_level=True)

RUNS = """id,model_key,context,precision
a1,dense-a,1,fp8
a2,dense-a,2,fp8
b1,dense-a,1,bf16
b2,dense-a,2,bf16
b3,moe-a,2,bf16
c1,dense-a,1,fp8
"""
MODELS = """# a comment line
model_key,arch_type
dense-a,dense
moe-a,moe
"""
# cluster X 1: everything +10 %, the context-parallel job +10 % too (no contrast: the level cancels);
# cluster Y 2: the others -5 %, the context-parallel jobs -25 % (dense) and +40 % (mixture of experts);
# cluster Z 3: only jobs without context parallelism (left out); another split's rows are ignored
HELD = """split,id,family,system,release,error
family,a1,F,X,1,0.10
family,a2,F,X,1,0.10
family,b1,F,Y,2,-0.05
family,b2,F,Y,2,-0.25
family,b3,F,Y,2,0.40
family,c1,F,Z,3,0.30
in_sample,a2,F,X,1,-0.90
"""


def run(tmp_path, *args, held=HELD, runs=RUNS):
    (tmp_path / "held.csv").write_text(held, encoding="utf-8")
    (tmp_path / "runs.csv").write_text(runs, encoding="utf-8")
    (tmp_path / "models.csv").write_text(MODELS, encoding="utf-8")
    return subprocess.run([sys.executable, str(CONTRAST), "--held", str(tmp_path / "held.csv"), "--runs",
                           str(tmp_path / "runs.csv"), *args], capture_output=True, text=True)


def test_a_clusters_level_cancels_and_only_clusters_with_both_count(tmp_path):
    r = run(tmp_path, "--where", "context>1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    x = next(line for line in lines if line.startswith("X 1"))
    y = next(line for line in lines if line.startswith("Y 2"))
    assert x.split()[-1] == "+0.0"
    # Y: mean(-25, +40) - (-5) = +12.5 points
    assert y.split()[-1] == "+12.5"
    assert not any(line.startswith("Z 3") for line in lines)
    assert "mean difference +6.2 points over 2 clusters; 1 of them above" in r.stdout


def test_dense_leaves_out_routed_experts(tmp_path):
    r = run(tmp_path, "--where", "context>1", "--dense")
    assert r.returncode == 0, r.stderr
    y = next(line for line in r.stdout.splitlines() if line.startswith("Y 2"))
    assert y.split()[-1] == "-20.0"
    assert "mean difference -10.0 points over 2 clusters; 1 of them below" in r.stdout


def test_only_restricts_before_comparing_and_text_compares_as_text(tmp_path):
    r = run(tmp_path, "--where", "context>1", "--only", "precision==bf16")
    assert r.returncode == 0, r.stderr
    assert "over 1 clusters" in r.stdout and "X 1" not in r.stdout


def test_bad_input_is_named(tmp_path):
    r = run(tmp_path, "--where", "context>1", held=HELD.replace("-0.25", "fast"))
    assert r.returncode == 1
    assert "held.csv:5: error 'fast' is not a finite number" in r.stderr
    r = run(tmp_path, "--where", "context>1", held=HELD.replace("-0.25", "nan"))
    assert r.returncode == 1 and "held.csv:5: error 'nan' is not a finite number" in r.stderr
    r = run(tmp_path, "--where", "context>1", held=HELD + "family,zz,F,X,1,0.1\n")
    assert r.returncode == 1 and "held.csv:9: run 'zz' is not in the runs table" in r.stderr
    r = run(tmp_path, "--where", "nodes>1")
    assert r.returncode == 1 and "'nodes', which is no column" in r.stderr
    r = run(tmp_path, "--where", "context>9")
    assert r.returncode == 1 and "no cluster of split 'family'" in r.stderr
    r = run(tmp_path, "--where", "context")
    assert r.returncode == 2 and "not 'column OP value'" in r.stderr
    r = run(tmp_path, "--where", "context>1", "--split", "families")
    assert r.returncode == 1 and "no split 'families' (it holds family, in_sample)" in r.stderr
    r = run(tmp_path, "--where", "context>1", runs=RUNS + "zz,dense-a\n")
    assert r.returncode == 1 and "runs.csv:8: 2 fields where the header has 4" in r.stderr
    r = run(tmp_path, "--where", "context>1", runs=RUNS + "a1,dense-a,1,fp8\n")
    assert r.returncode == 1 and "runs.csv:8: run id 'a1' given twice" in r.stderr


def test_lines_are_named_as_editors_count_them(tmp_path):
    # a blank line and a quoted field over two lines before the bad row: its physical line is named
    held = HELD.replace("family,b1,F,Y,2,-0.05\n", "\nfamily,b1,\"F\nG\",Y,2,-0.05\n").replace("-0.25", "x")
    r = run(tmp_path, "--where", "context>1", held=held)
    assert r.returncode == 1 and "held.csv:7: error 'x' is not a finite number" in r.stderr, r.stderr


def test_a_blank_cell_is_no_number_and_a_quoted_value_is_its_text(tmp_path):
    runs = RUNS.replace("c1,dense-a,1,fp8", "c1,dense-a,,fp8")
    # a blank context is neither below nor above 2: with '<2' only the jobs that state 1 are selected
    r = run(tmp_path, "--where", "context<2", runs=runs)
    assert r.returncode == 0, r.stderr
    assert "Z 3" not in r.stdout
    quoted = run(tmp_path, "--where", "context>1", "--only", "precision=='bf16'")
    plain = run(tmp_path, "--where", "context>1", "--only", "precision==bf16")
    assert quoted.returncode == 0 and quoted.stdout == plain.stdout, quoted.stderr
    assert "over 1 clusters" in quoted.stdout


def test_dense_keeps_a_model_the_file_does_not_list(tmp_path):
    runs = RUNS.replace("a2,dense-a,2,fp8", "a2,unlisted,2,fp8")
    r = run(tmp_path, "--where", "context>1", "--dense", runs=runs)
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("X 1") for line in r.stdout.splitlines()), r.stdout
