"""Shared fixtures: which libraries and devices this machine has. GPU tests skip with the
reason on a machine without a CUDA device (CI); CPU tests run everywhere."""

import importlib.util

import pytest


def _torch():
    if importlib.util.find_spec("torch") is None:
        return None
    import torch
    return torch


def _cupy():
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # no driver: CuPy imports but cannot run
        return None


TORCH = _torch()
CUPY = _cupy()
HAS_GPU = TORCH is not None and TORCH.cuda.is_available()


@pytest.fixture
def torch():
    if TORCH is None:
        pytest.skip("torch is not installed")
    return TORCH


@pytest.fixture
def cupy():
    if CUPY is None:
        pytest.skip("CuPy is not installed or has no CUDA device")
    return CUPY


class FakeCudaArray:
    """A __cuda_array_interface__ producer with a made-up address: enough to reach the
    extension's checks (and the library's, which fail without a GPU) on a CPU machine."""

    def __init__(self, shape, typestr="<f4", address=0x7F0000000000, strides=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (address, False), "version": 3,
                                         "strides": strides}
