"""Hostile input, round fifteen: the companion's configurations, plans and jar given as what they are not (no
PyTorch needed)."""
import os

import pytest

from scaledl_profiler import here
from scaledl_profiler.hf import read_config_file
from scaledl_profiler.planfile import PlanError, read_plan


@pytest.mark.parametrize("name, content, expected", [
    ("dup.json", b'{"model_type": "gpt2", "n_embd": 64, "n_embd": 128, "n_head": 4}', '"n_embd" is given twice'),
    ("latin.json", b'\xff\xfe{"model_type": "gpt2"}', "not UTF-8 text"),
    ("deep.json", b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    ("long.json", b'{"model_type": "gpt2", "n_embd": ' + b"9" * 5000 + b"}", "long.json"),
])
def test_a_configuration_that_is_not_one_is_named(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError) as e:
        read_config_file(str(path))
    assert str(path) in str(e.value) and expected in str(e.value)


def test_a_configuration_that_is_a_device_or_a_folder_is_not_said_missing(tmp_path):
    for path in ([str(tmp_path)] + (["/dev/null"] if os.path.exists("/dev/null") else [])):
        with pytest.raises(ValueError) as e:
            read_config_file(path)
        assert "not a regular file" in str(e.value)


def test_a_plan_read_from_an_endless_device_stops_at_the_cap():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(PlanError) as e:
        read_plan("/dev/zero")
    assert "/dev/zero" in str(e.value) and "larger than" in str(e.value)


def test_a_jar_that_is_a_device_is_not_said_missing(tmp_path):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    with pytest.raises(ValueError) as e:
        here.run(jar="/dev/null", model="cpu-zoo", out=str(tmp_path / "o"))
    assert "not a regular file" in str(e.value)
