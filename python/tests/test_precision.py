"""Precision switches without a GPU: a stand-in torch module records what is set."""
import contextlib
from types import SimpleNamespace

import pytest

from scaledl_profiler import precision as prec


def fake_torch():
    calls = []

    class Scaler:
        def __init__(self, device=None):
            calls.append(("GradScaler", device))

    def autocast(device_type, dtype):
        calls.append(("autocast", device_type, dtype))
        return contextlib.nullcontext()

    backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=None)),
                               cudnn=SimpleNamespace(allow_tf32=None))
    return SimpleNamespace(float16="f16", bfloat16="bf16", float32="f32", backends=backends, autocast=autocast,
                           amp=SimpleNamespace(GradScaler=Scaler), calls=calls)


@pytest.mark.parametrize("p,on", [("fp32", False), ("tf32", True), ("fp16", False), ("bf16", False)])
def test_tf32_switches_are_on_for_tf32_only(p, on):
    t = fake_torch()
    t.backends.cuda.matmul.allow_tf32 = "before"
    previous = prec.set_math_flags(t, p)
    assert t.backends.cuda.matmul.allow_tf32 is on and t.backends.cudnn.allow_tf32 is on
    assert previous[0] == "before"


@pytest.mark.parametrize("p,dtype", [("fp32", None), ("tf32", None), ("fp16", "f16"), ("bf16", "bf16")])
def test_autocast_dtype_and_context(p, dtype):
    t = fake_torch()
    assert prec.autocast_dtype(t, p) == dtype
    with prec.autocast(t, "cuda", p):
        pass
    assert t.calls == ([("autocast", "cuda", dtype)] if dtype else [])


def test_kernel_tensors_take_the_precision_dtype():
    t = fake_torch()
    assert [prec.tensor_dtype(t, p) for p in prec.PRECISIONS] == ["f32", "f32", "f16", "bf16"]


def test_grad_scaler_only_for_fp16_on_cuda():
    t = fake_torch()
    assert prec.grad_scaler(t, "bf16", "cuda") is None
    assert prec.grad_scaler(t, "fp16", "cpu") is None
    assert prec.grad_scaler(t, "fp16", "cuda") is not None
    assert t.calls == [("GradScaler", "cuda")]


def test_parse_list_keeps_order_and_names_the_option():
    assert prec.parse_list("fp32, TF32,fp32,bf16") == ["fp32", "tf32", "bf16"]
    with pytest.raises(ValueError, match="--precision must be one of fp32, tf32, fp16, bf16, got 'fp8'"):
        prec.parse_list("fp32,fp8")
    with pytest.raises(ValueError, match="at least one"):
        prec.parse_list(" , ")
