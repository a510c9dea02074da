# anvil.Device: constructors, printing, equality, parsing and attributes.
import pickle

import pytest

import anvil
from conftest import NOT_APPLICABLE


def test_constructors_and_repr():
    assert repr(anvil.cpu()) == "cpu(0)"
    assert repr(anvil.cuda(1)) == "cuda(1)"
    assert repr(anvil.vulkan(2)) == "vulkan(2)"
    assert repr(anvil.opencl()) == "opencl(0)" and anvil.cl(0) == anvil.opencl(0)
    d = anvil.cpu(0)
    assert (d.device_type, d.device_id) == (1, 0)
    assert d.dlpack_device() == (1, 0)
    assert anvil.Device("cuda", 3) == anvil.cuda(3)
    assert anvil.Device(7) == anvil.vulkan(0)


@pytest.mark.parametrize("spec, expected", [
    ("cpu", anvil.cpu(0)), ("cpu:0", anvil.cpu(0)), ("cuda:1", anvil.cuda(1)), ("cl", anvil.opencl(0)),
    (("vulkan", 2), anvil.vulkan(2)), (("cpu", 0), anvil.cpu(0)), (anvil.cuda(4), anvil.cuda(4)),
    ("llvm", anvil.cpu(0)),
])
def test_device_parsing(spec, expected):
    assert anvil.device(spec) == expected


def test_device_with_separate_id():
    assert anvil.device("cuda", 2) == anvil.cuda(2)


@pytest.mark.parametrize("bad", ["tpu", "cpu:x", "cpu:-1", ("cpu",)])
def test_bad_device_specs_are_value_errors(bad):
    with pytest.raises(ValueError):
        anvil.device(bad)


def test_negative_id_is_value_error():
    with pytest.raises(ValueError, match=">= 0"):
        anvil.cpu(-1)


def test_equality_and_hash():
    assert anvil.cpu(0) == anvil.cpu(0) and anvil.cpu(0) != anvil.cpu(1) and anvil.cpu(0) != anvil.cuda(0)
    assert anvil.cpu(0) != "cpu(0)"
    assert len({anvil.cpu(0), anvil.cpu(0), anvil.cuda(0)}) == 2


def test_pickle_round_trip():
    assert pickle.loads(pickle.dumps(anvil.cuda(3))) == anvil.cuda(3)


def test_cpu_attributes():
    cpu = anvil.cpu(0)
    assert cpu.exist is True
    assert isinstance(cpu.device_name, str) and cpu.device_name
    assert cpu.multi_processor_count >= 1
    assert cpu.total_global_memory > 0
    assert cpu.warp_size is None  # the CPU does not report it
    cpu.sync()


def test_missing_device_reports_nothing():
    if anvil.cuda(0).exist:
        pytest.skip(NOT_APPLICABLE + "a CUDA device exists here")
    assert anvil.cuda(0).device_name is None
    assert anvil.cuda(0).max_threads_per_block is None
