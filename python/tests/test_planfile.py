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
    assert runs[0].job() == ("resnet18", 112, 1, 2, "nchw")
    assert runs[0].key() == ("resnet18", "112", "8", "1", "2", "train", "fp32", "nchw")


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
    # scaledl's own bounds: a world size of a million would start a million processes
    ("resnet18,112,1048577,1,1,train,,,", "batch 1048577 is out of range (1..1048576)"),
    ("resnet18,112,2,1000000000,1,train,,,", "world_size 1000000000 is out of range (1..1048576)"),
    ("resnet18,112,2,1,65537,train,,,", "threads 65537 is out of range (1..65536)"),
    ("resnet18,112,99999999999999999999,1,1,train,,,", "batch 99999999999999999999 is out of range"),
])
def test_errors_name_file_and_line(tmp_path, row, fragment):
    p = write(tmp_path, HEADER + "resnet18,112,2,1,1,train,,,\n" + row + "\n")
    with pytest.raises(PlanError) as e:
        read_plan(p)
    assert f"{p}:3:" in str(e.value) and fragment in str(e.value)


def test_lines_count_the_blank_ones_and_rows_of_another_width_are_refused(tmp_path):
    with pytest.raises(PlanError) as e:
        read_plan(write(tmp_path, HEADER + "resnet18,112,2,1,1,train,,,\n\n\nresnet18,112,8,1,1,fly,,,\n"))
    assert "plan.csv:5:" in str(e.value) and "phase must be train or infer" in str(e.value)
    with pytest.raises(PlanError, match=r"plan.csv:2: 10 fields where the header has 9"):
        read_plan(write(tmp_path, HEADER + "resnet18,112,2,1,1,train,,,,extra\n"))
    with pytest.raises(PlanError, match=r"plan.csv:3: 6 fields where the header has 9"):
        read_plan(write(tmp_path, HEADER + "resnet18,112,2,1,1,train,,,\nresnet18,112,4,1,1,train\n"))


def test_missing_columns_and_duplicates_are_refused(tmp_path):
    with pytest.raises(PlanError, match="missing column.*threads"):
        read_plan(write(tmp_path, "model,batch,world_size,phase\nx,1,1,train\n"))
    with pytest.raises(PlanError, match="same run as line 2"):
        read_plan(write(tmp_path, HEADER + "a,64,2,1,1,train,,,\na,64,2,1,1,train,,,\n"))
    with pytest.raises(PlanError, match="no runs"):
        read_plan(write(tmp_path, HEADER))
    with pytest.raises(PlanError, match=r"plan.csv:3: the header line again"):
        read_plan(write(tmp_path, HEADER + "a,64,2,1,1,train,,,\n" + HEADER))


def test_a_column_twice_is_refused_a_byte_order_mark_is_not_a_name_and_a_typo_is_said(tmp_path, capsys):
    # a dictionary reader would keep the second batch (2) and drop the first (0) without a word
    with pytest.raises(PlanError, match=r"plan.csv:1: duplicate column 'batch'"):
        read_plan(write(tmp_path, "model,batch,batch,world_size,threads,phase\nx,0,2,1,1,train\n"))
    p = tmp_path / "bom.csv"
    p.write_bytes("\ufeffmodel,batch,world_size,threads,phase\nx,4,1,1,train\n".encode("utf-8"))
    (r,) = read_plan(p)
    assert r.model == "x" and r.batch == 4
    (r,) = read_plan(write(tmp_path, "model,batch,world_size,threads,phase,precison\nx,4,1,1,train,tf32\n"))
    assert r.precision == "fp32"
    err = capsys.readouterr().err
    assert "column 'precison'" in err and "did you mean 'precision'" in err
    read_plan(write(tmp_path, "model,batch,world_size,threads,phase,note,params\nx,4,1,1,train,a,7\n"))
    assert capsys.readouterr().err == "", "columns far from any the companion reads are carried quietly"


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


def test_graphs_of_the_plans_folder_are_copied_into_the_dataset_folder(tmp_path):
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "a.onnx").write_bytes(b"a" * 8)
    plan = tmp_path / "plan.csv"
    out = tmp_path / "data"
    assert adopt_graph("graphs/a.onnx", plan, out) == "graphs/a.onnx"
    assert (out / "graphs" / "a.onnx").read_bytes() == b"a" * 8
    assert adopt_graph("graphs/a.onnx", plan, out) == "graphs/a.onnx", "once copied, reused"
    assert adopt_graph("data/graphs/a.onnx", plan, out) == "graphs/a.onnx", "inside: kept"
    assert adopt_graph("graphs/missing.onnx", plan, out) == "../graphs/missing.onnx", "missing: for fit to name"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.onnx").write_bytes(b"b" * 8)
    with pytest.raises(PlanError, match="another graph"):
        adopt_graph("other/a.onnx", plan, out)


def test_a_dataset_folder_outside_the_plans_folder_takes_graphs_from_both(tmp_path):
    (tmp_path / "plans" / "graphs").mkdir(parents=True)
    (tmp_path / "plans" / "graphs" / "a.onnx").write_bytes(b"a")
    (tmp_path / "data" / "graphs").mkdir(parents=True)
    (tmp_path / "data" / "graphs" / "b.onnx").write_bytes(b"b")
    plan = tmp_path / "plans" / "plan.csv"
    assert adopt_graph("graphs/a.onnx", plan, tmp_path / "data") == "graphs/a.onnx"
    assert adopt_graph("../data/graphs/b.onnx", plan, tmp_path / "data") == "graphs/b.onnx"


def _secret(tmp_path):
    (tmp_path / "secret").mkdir()
    key = tmp_path / "secret" / "key"
    key.write_bytes(b"secret")
    return key


@pytest.mark.parametrize("graph", ["ABSOLUTE", "../secret/key", "/etc/passwd", "/proc/self/environ", "LINK"])
def test_a_graph_outside_the_plans_and_the_dataset_folder_is_refused_naming_plan_line_and_path(tmp_path, graph):
    key = _secret(tmp_path)
    (tmp_path / "plans").mkdir()
    plan = tmp_path / "plans" / "plan.csv"
    if graph == "ABSOLUTE":
        graph = str(key)
    if graph == "LINK":  # a link inside the plan's folder to a file outside it: links are followed before the check
        (tmp_path / "plans" / "g.onnx").symlink_to(key)
        graph = "g.onnx"
    out = tmp_path / "data"
    with pytest.raises(PlanError) as e:
        adopt_graph(graph, plan, out, line=3)
    text = str(e.value)
    assert text.startswith(f"{plan}:3: graph '{graph}'") and "outside the plan's folder" in text
    assert "the dataset folder" in text and "\n" not in text
    assert not out.exists(), "nothing copied, nothing created"


def test_only_regular_files_are_copied(tmp_path):
    import os
    os.mkfifo(tmp_path / "fifo.onnx")
    (tmp_path / "folder.onnx").mkdir()
    plan = tmp_path / "plan.csv"
    for graph, kind in (("fifo.onnx", "a FIFO"), ("folder.onnx", "a folder")):
        with pytest.raises(PlanError, match=f"{graph}' is {kind}, not a regular file"):
            adopt_graph(graph, plan, tmp_path / "data")
    # a plan in / would allow everything under it: the pseudo file systems are refused all the same
    for graph in ("proc/self/environ", "dev/zero", "/sys/kernel/uevent_helper"):
        with pytest.raises(PlanError, match="not a regular file"):
            adopt_graph(graph, "/plan.csv", tmp_path / "data", dry_run=True)
    assert not (tmp_path / "data").exists()


def test_a_copy_has_no_more_permission_than_its_source_nor_the_umask(tmp_path):
    import os
    import stat
    (tmp_path / "graphs").mkdir()
    private = tmp_path / "graphs" / "private.onnx"
    private.write_bytes(b"p")
    private.chmod(0o600)
    public = tmp_path / "graphs" / "public.onnx"
    public.write_bytes(b"q")
    public.chmod(0o644)
    old = os.umask(0o077)
    try:
        adopt_graph("graphs/private.onnx", tmp_path / "plan.csv", tmp_path / "data")
        adopt_graph("graphs/public.onnx", tmp_path / "plan.csv", tmp_path / "data")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "data" / "graphs" / "private.onnx").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "data" / "graphs" / "public.onnx").st_mode) == 0o600, "the umask holds"
    old = os.umask(0o022)
    try:
        private2 = tmp_path / "graphs" / "private2.onnx"
        private2.write_bytes(b"r")
        private2.chmod(0o640)
        adopt_graph("graphs/private2.onnx", tmp_path / "plan.csv", tmp_path / "data")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "data" / "graphs" / "private2.onnx").st_mode) == 0o640, \
        "not world-readable when the source is not"


def test_memory_format_column_is_optional_checked_and_part_of_the_run_and_its_job(tmp_path):
    p = write(tmp_path, "model,batch,world_size,threads,phase,memory_format\nresnet50,8,1,1,train,NHWC\n"
                        "resnet50,8,1,1,train,\nresnet50,8,1,1,train,channels-first\n")
    with pytest.raises(PlanError, match="same run as line 3"):
        read_plan(p)
    p = write(tmp_path, "model,batch,world_size,threads,phase,memory_format\nresnet50,8,1,1,train,NHWC\n"
                        "resnet50,8,1,1,train,\n", "a.csv")
    a, b = read_plan(p, default_memory_format="nchw")
    assert (a.memory_format, b.memory_format) == ("channels_last", "nchw")
    assert a.key() != b.key() and a.job() != b.job(), "the model is laid out once per job"
    (c,) = read_plan(write(tmp_path, "model,batch,world_size,threads,phase\nx,1,1,1,train\n", "c.csv"),
                     default_memory_format="channels_last")
    assert c.memory_format == "channels_last"
    with pytest.raises(PlanError, match=r":2: memory format must be nchw or channels_last, got 'nhcw'"):
        read_plan(write(tmp_path, "model,batch,world_size,threads,phase,memory_format\nx,1,1,1,train,nhcw\n",
                        "b.csv"))
