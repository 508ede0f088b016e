"""Inputs, outputs and streams: what reducelab needs to know about an array of torch, CuPy or
a raw protocol (``__cuda_array_interface__``, ``__dlpack__``), read without copying it.

Every input becomes a *view*: (backend, address, dtype code, shape, strides, stride unit,
device). The backend allocates outputs in the caller's library on the input's device and gives
the caller's current stream. Lookups are cached per type and per dtype, because this runs on
every call (issue 13: the Python layer must add at most ~1.5 us to the C++ call).
"""

import sys

from . import _reducelab

_TABLE = _reducelab.table()
DTYPES = _TABLE["dtypes"]           # "f32" -> {"code", "size", "kind", "sum_dtype"}
CODE_NAMES = {info["code"]: name for name, info in DTYPES.items()}
MAX_RANK = _TABLE["max_rank"]

# numpy / CuPy / __cuda_array_interface__ spellings of reducelab's dtypes.
_NUMPY_NAMES = {"float32": "f32", "float64": "f64", "float16": "f16", "int32": "i32",
                "int64": "i64", "uint32": "u32", "uint64": "u64"}
_TYPESTR_NAMES = {"f4": "f32", "f8": "f64", "f2": "f16", "i4": "i32", "i8": "i64",
                  "u4": "u32", "u8": "u64"}
_UNSUPPORTED = ("reducelab reduces float32, float64, float16, bfloat16, int32, int64, uint32 and "
                "uint64")


def checked_name(name, dtype):
    """`name`, the reducelab dtype name a library's `dtype` maps to, or TypeError if none."""
    if name is None or name == "bool":
        raise unsupported_dtype(dtype)
    return name


def unsupported_dtype(dtype):
    return TypeError(f"reducelab: dtype {dtype} is not supported; {_UNSUPPORTED} "
                     "(convert bool or smaller integers with .to(torch.int32) / .astype(), and "
                     "reduce the real and imaginary parts of complex arrays separately)")


class _TorchBackend:
    """torch.Tensor in, torch.Tensor out, on torch's current stream of the tensor's device."""

    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        self.dtypes = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
                       "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64,
                       "u32": getattr(torch, "uint32", None), "u64": getattr(torch, "uint64", None),
                       "bool": torch.bool}
        self.codes = {dt: DTYPES[name]["code"] for name, dt in self.dtypes.items()
                      if dt is not None and name in DTYPES}
        self.names = {dt: name for name, dt in self.dtypes.items() if dt is not None}
        self._devices = {}
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            self.current_stream = raw       # an int handle, ~100 ns
        else:                               # older torch
            self.current_stream = lambda d: torch.cuda.current_stream(d).cuda_stream

    def describe(self, x):
        if not x.is_cuda:
            raise TypeError(f"reducelab: the tensor is on {x.device}, not on a CUDA device; "
                            "reducelab reduces GPU memory only (move it with x.cuda())")
        code = self.codes.get(x.dtype)
        if code is None:
            raise unsupported_dtype(x.dtype)
        return x.data_ptr(), code, x.shape, x.stride(), 1, x.get_device()

    def current_device(self):
        return self.torch.cuda.current_device()

    def device(self, index):
        d = self._devices.get(index)
        if d is None:
            d = self._devices[index] = self.torch.device("cuda", index)
        return d

    def empty(self, shape, name, device):
        return self.torch.empty(shape, dtype=self.dtypes[name], device=self.device(device))

    def address(self, a):
        return a.data_ptr()

    def view_as(self, a, name):
        return a.view(self.dtypes[name])

    def cast(self, a, name):
        return a.to(self.dtypes[name])

    def name_of(self, dtype):
        name = self.names.get(dtype)
        if name is None and isinstance(dtype, str):
            name = _NUMPY_NAMES.get(dtype, dtype if dtype in DTYPES else None)
        return checked_name(name, dtype)

    def from_dlpack(self, obj):
        return self.torch.from_dlpack(obj)


class _CupyBackend:
    """cupy.ndarray in, cupy.ndarray out, on CuPy's current stream."""

    name = "cupy"

    def __init__(self):
        import cupy
        import numpy
        self.cupy = cupy
        self.dtypes = {name: numpy.dtype(np) for np, name in _NUMPY_NAMES.items()}
        self.dtypes["bool"] = numpy.dtype(bool)
        self.codes = {numpy.dtype(np): DTYPES[name]["code"] for np, name in _NUMPY_NAMES.items()}
        self.names = {dt: name for name, dt in self.dtypes.items()}

    def describe(self, x):
        code = self.codes.get(x.dtype)
        if code is None:
            raise unsupported_dtype(x.dtype)
        return x.data.ptr, code, x.shape, x.strides, x.itemsize, x.device.id

    def current_stream(self, device):
        return self.cupy.cuda.get_current_stream(device).ptr

    def current_device(self):
        return self.cupy.cuda.runtime.getDevice()

    def empty(self, shape, name, device):
        if name == "bf16":
            raise TypeError("reducelab: CuPy has no bfloat16 arrays")
        with self.cupy.cuda.Device(device):
            return self.cupy.empty(shape, dtype=self.dtypes[name])

    def address(self, a):
        return a.data.ptr

    def view_as(self, a, name):
        return a.view(self.dtypes[name])

    def cast(self, a, name):
        return a.astype(self.dtypes[name])

    def name_of(self, dtype):
        import numpy
        try:
            name = self.names.get(numpy.dtype(dtype))
        except TypeError:
            name = None
        return checked_name(name, dtype)

    def from_dlpack(self, obj):
        return self.cupy.from_dlpack(obj)


class _RawBackend:
    """Objects with ``__cuda_array_interface__`` (numba, ...), read natively; results come back
    as torch tensors when torch is installed, else as CuPy arrays (``output_backend``)."""

    name = "raw"

    def describe(self, x):
        cai = x.__cuda_array_interface__
        typestr = cai["typestr"]
        name = _TYPESTR_NAMES.get(typestr[1:])
        if name is None or typestr[0] == ">":
            raise unsupported_dtype(typestr)
        info = DTYPES[name]
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], info["size"]
            for size in reversed(shape):
                strides.append(step)
                step *= size
            strides = tuple(reversed(strides))
        address = cai["data"][0]
        return address, info["code"], shape, tuple(strides), info["size"], -1

    def current_stream(self, device):
        return 0


_backends = {}      # type -> backend (or None: resolved per object)
_modules = {}       # "torch" / "cupy" -> backend instance, created on first use


def module_backend(name):
    b = _modules.get(name)
    if b is None:
        b = _modules[name] = _TorchBackend() if name == "torch" else _CupyBackend()
    return b


def output_backend():
    """The library that allocates results for raw-protocol inputs: torch if it is installed,
    else CuPy."""
    for name in ("torch", "cupy"):
        if name in sys.modules or _importable(name):
            return module_backend(name)
    raise TypeError("reducelab: results need torch or CuPy to hold them; install one, or pass "
                    "out= with a device array of the result's dtype and shape")


def _importable(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None


def backend_of(x):
    """The backend for x's type (cached per type)."""
    t = type(x)
    b = _backends.get(t)
    if b is not None:
        return b
    root = t.__module__.partition(".")[0]
    if root == "torch" and hasattr(x, "data_ptr"):
        b = module_backend("torch")
    elif root == "cupy" and hasattr(x, "data"):
        b = module_backend("cupy")
    elif hasattr(x, "__cuda_array_interface__"):
        b = _RAW
    elif hasattr(x, "__dlpack__"):
        return None     # converted per object (as_view)
    else:
        raise TypeError(f"reducelab: expected a torch tensor, a CuPy array or an object with "
                        f"__cuda_array_interface__ or __dlpack__, got {t.__name__}")
    _backends[t] = b
    return b


_RAW = _RawBackend()


def dlpack_to_native(x):
    """A DLPack-only producer (JAX, ...): a zero-copy torch tensor (or CuPy array) of it."""
    b = output_backend()
    try:
        return b.from_dlpack(x)
    except Exception as e:  # CPU arrays, unsupported types: the importer's message
        raise TypeError(f"reducelab: cannot read {type(x).__name__} through DLPack on a CUDA "
                        f"device: {e}") from e


def stream_handle(stream):
    """The raw cudaStream_t of `stream`: an int, an object with ``__cuda_stream__`` (the CUDA
    stream protocol: returns (version, handle)), a torch.cuda.Stream or a cupy Stream."""
    if type(stream) is int:
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attr in ("cuda_stream", "ptr"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(f"reducelab: stream= takes an int handle or an object with __cuda_stream__, "
                    f"got {type(stream).__name__}")
