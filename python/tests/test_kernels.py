"""Kernel tables without PyTorch: the grid, the writer's columns, the budget, failures (a stand-in executor)."""
import csv
from pathlib import Path

import pytest

from scaledl_profiler import kernels as k

NEUSIGHT = Path(__file__).resolve().parents[3] / "shared" / "data" / "neusight" / "kernels"  # ../shared/data


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_columns_are_neusights_plus_precision():
    assert k.COLUMNS["bmm"] == "row_id,gpu,op,B,M,N,K,flops,latency_ms,precision".split(",")
    assert k.COLUMNS["linear"] == k.COLUMNS["bmm"]
    assert k.COLUMNS["elem"] == "row_id,gpu,op,B,H,n_inputs,latency_ms,precision".split(",")
    assert k.COLUMNS["ln"] == k.COLUMNS["softmax"] == k.COLUMNS["elem"]
    assert k.COLUMNS["conv"] == ("row_id,gpu,op,batch,Cin,Cout,kernel,stride,padding,H,W,out_H,out_W,flops,"
                                 "latency_ms,precision").split(",")
    assert k.COLUMNS["attention"] == "row_id,gpu,op,B,heads,seq,head_dim,causal,flops,latency_ms,precision".split(",")


@pytest.mark.parametrize("table", ["bmm", "linear", "elem", "ln", "softmax", "conv"])
def test_columns_match_the_neusight_files_where_present(table):
    path = NEUSIGHT / f"{table}.csv"
    if not path.exists():
        pytest.skip("no NeuSight tables on this machine")
    with open(path) as f:
        header = f.readline().strip().split(",")
    assert k.COLUMNS[table][:-1] == header


def test_grid_is_seeded_shuffled_and_covers_large_gemms():
    a, b, c = k.grid("full", seed=1), k.grid("full", seed=1), k.grid("full", seed=2)
    assert a == b and a != c, "the seed draws the random shapes and the order"
    cube = k.Shape("linear", "linear", (("B", 1), ("M", 8192), ("N", 8192), ("K", 8192)))
    assert cube in a and cube in c
    tables = [s.table for s in a]
    assert set(tables) == set(k.TABLES)
    assert tables[:len(set(tables))] != sorted(set(tables)), "shuffled over all tables"
    assert {s.op for s in a if s.table == "elem"} == set(k.ELEM_OPS)
    assert all(s.elements(s.op != "sdpa") * 4 <= 2 ** 31 for s in a)
    assert len(k.grid("quick")) < len(a) / 4 and len(k.grid("tiny")) < len(k.grid("quick"))


def test_shape_flops_follow_neusight():
    bmm = k.Shape("bmm", "bmm", (("B", 192), ("M", 96), ("N", 196), ("K", 196)))
    assert bmm.flops() == 1416167424  # NeuSight's bmm.csv row 0
    conv = k._conv(38, 893, 326, 3, 1, 1, 5)
    assert conv.flops() == 4978117800 and conv.get("out_H") == 5  # NeuSight's conv.csv row 0
    assert k._conv(1, 3, 64, 7, 2, 3, 224).get("out_W") == 112
    assert k._attention("sdpa", 2, 3, 16, 8, 1).flops() == 4 * 2 * 3 * 16 * 16 * 8


def test_run_writes_every_table_with_row_ids_and_precision(tmp_path):
    s = k.run(tmp_path, ["fp32", "bf16"], k.FakeExecutor(), "tiny", log=lambda m: None)
    assert s.failed == 0 and s.skipped == 0
    for table in k.TABLES:
        rows = read(tmp_path / "kernels" / f"{table}.csv")
        assert list(rows[0]) == k.COLUMNS[table]
        assert [int(r["row_id"]) for r in rows] == list(range(len(rows)))
        assert {r["precision"] for r in rows} == {"fp32", "bf16"}
        assert all(r["gpu"] == k.FakeExecutor.name and float(r["latency_ms"]) > 0 for r in rows)
    elem = read(tmp_path / "kernels" / "elem.csv")
    assert {r["n_inputs"] for r in elem if r["op"] in k.BINARY} == {"2"}
    assert {r["n_inputs"] for r in elem if r["op"] not in k.BINARY} == {"1"}
    assert s.rows["elem"] == len(elem)


def test_a_second_run_appends_and_continues_row_ids(tmp_path):
    k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)
    n = len(read(tmp_path / "kernels" / "bmm.csv"))
    k.run(tmp_path, ["fp16"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)
    rows = read(tmp_path / "kernels" / "bmm.csv")
    assert len(rows) == 2 * n and [int(r["row_id"]) for r in rows] == list(range(2 * n))


def test_a_rerun_measures_only_what_the_tables_lack(tmp_path):
    first = k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)
    rows = read(tmp_path / "kernels" / "bmm.csv")
    # the same grid again: nothing measured twice, every shape said to be there already
    again = k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)
    assert read(tmp_path / "kernels" / "bmm.csv") == rows
    assert sum(again.rows.values()) == 0 and again.already == len(rows) == first.rows["bmm"]
    assert "already measured" in again.line()
    # a campaign cut short (its last rows lost) measures just those on the rerun
    with open(tmp_path / "kernels" / "bmm.csv", newline="") as f:
        lines = f.readlines()
    (tmp_path / "kernels" / "bmm.csv").write_text("".join(lines[:-2]))
    resumed = k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)
    assert resumed.rows["bmm"] == 2 and resumed.already == len(rows) - 2
    assert len(read(tmp_path / "kernels" / "bmm.csv")) == len(rows)


def test_a_table_of_other_columns_is_refused(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "bmm.csv").write_text("row_id,gpu,op,B,M,N,K,flops,latency_ms\n")
    with pytest.raises(ValueError, match="bmm.csv: has columns .* new folder"):
        k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)


def test_the_budget_leaves_shapes_out_and_records_them(tmp_path):
    ticks = iter(range(0, 10 ** 6, 1))
    s = k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", max_seconds=5, clock=lambda: next(ticks),
              log=lambda m: None)
    measured = sum(s.rows.values())
    assert 0 < measured < s.shapes and s.skipped == s.shapes - measured
    failed = read(tmp_path / "kernels" / "failed.csv")
    assert {r["status"] for r in failed} == {"skipped"} and len(failed) == s.skipped


class Flaky(k.FakeExecutor):
    def measure(self, shape, precision):
        if shape.op == "gelu" and precision == "fp16":
            raise RuntimeError('"GeluKernelImpl" not implemented for \'Half\'\nmore text')
        return super().measure(shape, precision)


def test_a_failing_operator_is_recorded_not_fatal(tmp_path):
    s = k.run(tmp_path, ["fp32", "fp16"], Flaky(), "tiny", tables=("elem",), log=lambda m: None)
    assert s.failed == 1
    (row,) = read(tmp_path / "kernels" / "failed.csv")
    assert row["op"] == "gelu" and row["status"] == "error" and "not implemented" in row["error"]
    assert "\n" not in row["error"]


def test_options_are_checked():
    assert k.tables_option("bmm, conv,bmm") == ("bmm", "conv")
    with pytest.raises(ValueError, match="--ops: unknown table 'gemm'"):
        k.tables_option("gemm")
    with pytest.raises(ValueError, match="--grid must be one of"):
        k.grid("huge")


def test_a_torn_last_line_of_a_kernel_table_is_dropped_before_the_table_grows(tmp_path):
    k.run(tmp_path, ["fp32"], k.FakeExecutor(), "tiny", tables=("bmm",), log=lambda m: None)
    path = tmp_path / "kernels" / "bmm.csv"
    n = len(read(path))
    path.write_bytes(path.read_bytes()[:-5])  # a power cut in the last row
    (tmp_path / "kernels" / "failed.csv").write_text("table,op,sh")  # and in a header
    logs = []
    k.run(tmp_path, ["fp16"], k.FakeExecutor(), "tiny", tables=("bmm",), log=logs.append)
    assert sum("dropped its last line" in line for line in logs) == 1
    rows = read(path)
    assert len(rows) == 2 * n - 1 and [int(r["row_id"]) for r in rows] == list(range(2 * n - 1))
    assert all(None not in r and r["precision"] in ("fp32", "fp16") for r in rows)
    assert {r["precision"] for r in rows[n - 1:]} == {"fp16"}
    k.KernelWriter(tmp_path, logs.append).fail(k._gemm("bmm", 1, 2, 3, 4), "fp32", "error", "x")
    assert list(read(tmp_path / "kernels" / "failed.csv")[0]) == k.FAIL_COLUMNS
