import pytest

from scaledl_profiler.planfile import PlanError, Run, adopt_graph, read_plan, rebase_graph

HEADER = "model,resolution,batch,world_size,threads,phase,graph,predicted_ms,cost_s\n"


def write(tmp_path, text, name="plan.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_the_columns_scaledl_plan_writes(tmp_path):
    p = write(tmp_path, HEADER + "resnet18,112,8,1,2,train,../graphs/resnet18_r112.onnx,120.5,2.1\n"
                                 "resnet18,112,8,2,1,infer,../graphs/resnet18_r112.onnx,40,1.7\n")
    runs = read_plan(p)
    assert runs[0] == Run("resnet18", 8, 1, 2, "train", 112, "", "../graphs/resnet18_r112.onnx", 120.5)
    assert runs[1].line == 3
    assert runs[0].job() == ("resnet18", 112, 1, 2)
    assert runs[0].key() == ("resnet18", "112", "8", "1", "2", "train", "fp32")


def test_resolution_and_extra_columns_are_optional(tmp_path):
    p = write(tmp_path, "model,batch,world_size,threads,phase,note\nmy_net,4,1,1,INFER,x\n")
    (r,) = read_plan(p)
    assert r.resolution is None and r.phase == "infer" and r.graph == ""


@pytest.mark.parametrize("row,fragment", [
    ("resnet18,112,0,1,1,train,,,", "batch must be a positive integer"),
    ("resnet18,112,8,1,1,walk,,,", "phase must be train or infer"),
    (",112,8,1,1,train,,,", "empty model name"),
    ("resnet18,big,8,1,1,train,,,", "resolution must be a positive integer"),
    ("resnet18,112,8,1,1,train,,fast,", "predicted_ms is not a number"),
])
def test_errors_name_file_and_line(tmp_path, row, fragment):
    p = write(tmp_path, HEADER + "resnet18,112,2,1,1,train,,,\n" + row + "\n")
    with pytest.raises(PlanError) as e:
        read_plan(p)
    assert f"{p}:3:" in str(e.value) and fragment in str(e.value)


def test_missing_columns_and_duplicates_are_refused(tmp_path):
    with pytest.raises(PlanError, match="missing column.*threads"):
        read_plan(write(tmp_path, "model,batch,world_size,phase\nx,1,1,train\n"))
    with pytest.raises(PlanError, match="same run as line 2"):
        read_plan(write(tmp_path, HEADER + "a,64,2,1,1,train,,,\na,64,2,1,1,train,,,\n"))
    with pytest.raises(PlanError, match="no runs"):
        read_plan(write(tmp_path, HEADER))


def test_graph_paths_are_rebased_to_the_dataset_folder(tmp_path):
    plan = tmp_path / "plans" / "plan.csv"
    plan.parent.mkdir()
    out = tmp_path / "data"
    assert rebase_graph("../graphs/a.onnx", plan, out) == "../graphs/a.onnx"
    assert rebase_graph("g/a.onnx", plan, tmp_path / "plans") == "g/a.onnx"
    assert rebase_graph("", plan, out) == ""


def test_precision_column_is_optional_and_checked(tmp_path):
    p = write(tmp_path, "model,batch,world_size,threads,phase,precision\nbert,8,1,1,train,BF16\nbert,8,1,1,train,\n")
    a, b = read_plan(p, default_precision="tf32")
    assert (a.precision, b.precision) == ("bf16", "tf32")
    assert a.key() != b.key() and a.job() == b.job(), "one model build serves both precisions"
    with pytest.raises(PlanError, match=r":2: precision must be one of fp32, tf32, fp16, bf16, got 'int8'"):
        read_plan(write(tmp_path, "model,batch,world_size,threads,phase,precision\nx,1,1,1,train,int8\n", "b.csv"))


def test_graphs_outside_the_dataset_folder_are_copied_into_it(tmp_path):
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "a.onnx").write_bytes(b"a" * 8)
    plan = tmp_path / "plans" / "plan.csv"
    out = tmp_path / "data"
    assert adopt_graph("../graphs/a.onnx", plan, out) == "graphs/a.onnx"
    assert (out / "graphs" / "a.onnx").read_bytes() == b"a" * 8
    assert adopt_graph("../graphs/a.onnx", plan, out) == "graphs/a.onnx", "once copied, reused"
    assert adopt_graph("../data/graphs/a.onnx", plan, out) == "graphs/a.onnx", "inside: kept"
    assert adopt_graph("../graphs/missing.onnx", plan, out) == "../graphs/missing.onnx", "missing: for fit to name"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.onnx").write_bytes(b"b" * 8)
    with pytest.raises(PlanError, match="another graph"):
        adopt_graph("../other/a.onnx", plan, out)
