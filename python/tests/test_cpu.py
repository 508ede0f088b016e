"""Tests that need no GPU: import, the tables, argument checks, dtype rules, errors, docstrings.
They run on CI (CPU only); python/tests/test_gpu.py compares results with torch on a GPU."""

import inspect

import pytest

import reducelab
from reducelab import _adapt, _ops, _reducelab
from conftest import HAS_GPU, FakeCudaArray

PUBLIC = ["sum", "mean", "var", "std", "var_mean", "std_mean", "norm", "logsumexp",
          "count_nonzero", "any", "all", "amin", "amax", "min", "max", "argmin", "argmax",
          "aminmax", "dot", "segment_reduce", "foreach", "item"]


def test_import_and_version():
    assert reducelab.__version__.count(".") == 2
    assert issubclass(reducelab.CudaError, RuntimeError)
    assert set(PUBLIC) <= set(reducelab.__all__)


def test_tables_come_from_the_library():
    table = _reducelab.table()
    assert list(table["dtypes"]) == ["f32", "f64", "f16", "bf16", "i32", "i64", "u32", "u64"]
    assert table["ops"]["sum"]["code"] == 0 and table["ops"]["dot"]["inputs"] == 2
    assert table["max_rank"] == 8
    for name in table["ops"]:  # every op of the C++ library is reachable from Python
        assert name in _ops._OP
        assert hasattr(reducelab, {"min": "amin", "max": "amax"}.get(name, name))


@pytest.mark.parametrize("name", PUBLIC)
def test_docstrings(name):
    doc = inspect.getdoc(getattr(reducelab, name))
    assert doc and len(doc) > 60, name
    # every torch-shaped function names the torch function it mirrors or its rules
    if name not in ("segment_reduce", "foreach", "item"):
        assert "torch" in doc or ":func:" in doc, name


def test_module_docstring_states_the_shared_rules():
    doc = _ops.__doc__
    for word in ("stream", "TypeError", "ValueError", "CudaError", "Negative strides",
                 "synchronises"):
        assert word in doc


@pytest.mark.parametrize("op,dtype,buf,final", [
    ("sum", "f32", "f32", None), ("sum", "f16", "f32", "f16"), ("sum", "bf16", "f32", "bf16"),
    ("sum", "i32", "i64", None), ("sum", "u32", "u64", None), ("sum", "f64", "f64", None),
    ("mean", "f16", "f32", "f16"), ("var", "f64", "f64", None), ("var_mean", "bf16", "f32", "bf16"),
    ("amin", "i32", "i32", None), ("argmax", "f16", "i64", None), ("count_nonzero", "f32", "i64", None),
    ("any", "u64", "bool", None), ("aminmax", "i64", "i64", None), ("norm", "f16", "f32", "f16"),
])
def test_dtype_rules(op, dtype, buf, final):
    op = _ops._OP[{"amin": "min"}.get(op, op)]
    assert _ops._spec(op, _adapt.DTYPES[dtype]["code"], None) == (buf, final, None)


def test_dtype_argument():
    code = _adapt.DTYPES["f16"]["code"]
    # float16 in, dtype=float32: the float32 accumulator as it is, no input cast
    assert _ops._spec(_ops._OP["sum"], code, "f32") == ("f32", None, None)
    # dtype=float64: the input is cast first, as torch does
    assert _ops._spec(_ops._OP["sum"], code, "f64")[2] == "f64"


@pytest.mark.parametrize("op", ["mean", "var", "std", "norm", "logsumexp", "var_mean"])
def test_statistics_reject_integers(op):
    with pytest.raises(TypeError, match="floating-point"):
        getattr(reducelab, op)(FakeCudaArray((4,), "<i4"))


@pytest.mark.parametrize("typestr", ["|b1", "<c8", "<c16", "|i1", "<i2", "|u1", ">f4"])
def test_unsupported_dtypes_are_type_errors(typestr):
    with pytest.raises(TypeError, match="not supported"):
        reducelab.sum(FakeCudaArray((4,), typestr))


def test_not_an_array():
    with pytest.raises(TypeError, match="expected a torch tensor"):
        reducelab.sum([1.0, 2.0])


@pytest.mark.parametrize("dim", [2, -3, (0, 0), (0, -2)])
def test_bad_dims(dim):
    with pytest.raises(ValueError, match="dim"):
        reducelab.sum(FakeCudaArray((3, 4)), dim=dim)


def test_axes():
    assert _ops._axes(1, (3, 4, 5), False) == (0b010, (3, 5), 4)
    assert _ops._axes((0, -1), (3, 4, 5), True) == (0b101, (1, 4, 1), 15)
    assert _ops._axes((), (3, 4), False) == (-1, (), 12)
    assert _ops._axes(0, (), False) == (-1, (), 1)
    with pytest.raises(TypeError):
        _ops._axes(("a",), (3, 4), False)


def test_empty_extremum_is_a_value_error():
    for f in (reducelab.amin, reducelab.argmax, reducelab.aminmax):
        with pytest.raises(ValueError, match="no elements"):
            f(FakeCudaArray((0,)))
    with pytest.raises(ValueError, match="no elements"):
        reducelab.amax(FakeCudaArray((3, 0)), dim=1)
    with pytest.raises(ValueError, match="no elements"):
        reducelab.norm(FakeCudaArray((0,)), ord=float("inf"))


def test_bad_arguments():
    x = FakeCudaArray((8,))
    with pytest.raises(ValueError, match="ord"):
        reducelab.norm(x, ord=3)
    with pytest.raises(ValueError, match="unknown reduce"):
        reducelab.segment_reduce(x, "prod", segment_size=2)
    with pytest.raises(ValueError, match="exactly one"):
        reducelab.segment_reduce(x, "sum")
    with pytest.raises(ValueError, match="1-D"):
        reducelab.dot(FakeCudaArray((2, 4)), FakeCudaArray((2, 4)))
    with pytest.raises(TypeError, match="stream"):
        reducelab.sum(x, stream="default", out=FakeCudaArray(()))
    with pytest.raises(ValueError, match="out= must be"):
        reducelab.sum(x, out=FakeCudaArray((), "<f8"))
    with pytest.raises(TypeError, match="one int dim"):
        reducelab.min(FakeCudaArray((2, 4)), dim=(0, 1))


def test_strides_must_be_whole_elements():
    x = FakeCudaArray((4, 4), strides=(18, 4))
    _reducelab._set_dry_run(True)
    try:
        with pytest.raises(ValueError, match="whole number"):
            reducelab.sum(x, dim=1, out=FakeCudaArray((4,)))
    finally:
        _reducelab._set_dry_run(False)


def test_negative_strides():
    _reducelab._set_dry_run(True)
    try:
        backwards = FakeCudaArray((4, 3), strides=(-12, 4), address=0x7F0000001000)
        reducelab.sum(backwards, dim=0, out=FakeCudaArray((3,)))      # reduced: read in place
        with pytest.raises(ValueError, match="negative stride"):
            reducelab.sum(backwards, dim=1, out=FakeCudaArray((4,)))  # kept: rejected
        with pytest.raises(ValueError, match="contiguous"):
            reducelab.item("argmin", backwards)                      # item reads flat
    finally:
        _reducelab._set_dry_run(False)


def test_rank_above_8_needs_a_contiguous_view():
    _reducelab._set_dry_run(True)
    try:
        shape = (2,) * 9
        reducelab.sum(FakeCudaArray(shape), out=FakeCudaArray(()))
        strides = tuple(4 * 2 ** (9 - k) for k in range(1, 10))[:-1] + (8,)
        with pytest.raises(ValueError, match="rank 9"):
            reducelab.sum(FakeCudaArray(shape, strides=strides), out=FakeCudaArray(()))
    finally:
        _reducelab._set_dry_run(False)


def test_stream_handles():
    class Protocol:
        def __cuda_stream__(self):
            return (0, 1234)

    class TorchLike:
        cuda_stream = 99

    assert _adapt.stream_handle(7) == 7
    assert _adapt.stream_handle(Protocol()) == 1234
    assert _adapt.stream_handle(TorchLike()) == 99


@pytest.mark.skipif(HAS_GPU, reason="checks the error without a GPU")
def test_gpu_call_without_a_gpu_is_a_cuda_error():
    with pytest.raises(reducelab.CudaError, match="no CUDA device"):
        reducelab.sum(FakeCudaArray((1024,)), out=FakeCudaArray((), address=0x7F0000100000))
    with pytest.raises(reducelab.CudaError):
        reducelab.item("sum", FakeCudaArray((1024,)))
    # the process survives: the same call fails the same way again
    with pytest.raises(reducelab.CudaError):
        reducelab.item("sum", FakeCudaArray((1024,)))


def test_cpu_tensor_is_a_type_error(torch):
    with pytest.raises(TypeError, match="not on a CUDA device"):
        reducelab.sum(torch.ones(3))
    with pytest.raises(TypeError, match="not on a CUDA device"):
        reducelab.var(torch.ones(3, 4), dim=1)


def test_host_overhead_of_the_binding():
    """The dry-run path (every argument parsed, nothing launched) costs well under a
    microsecond per call; printed for the record (pytest -s)."""
    import time
    args = (0, 1.0, 2.0, 0, 0x7F0000000000, 0, (1024,), (1,), 1, -1, 0x7F0000100000, 0, 0)
    _reducelab._set_dry_run(True)
    try:
        for _ in range(1000):
            _reducelab.reduce(*args)
        start = time.perf_counter_ns()
        for _ in range(20000):
            _reducelab.reduce(*args)
        per_call = (time.perf_counter_ns() - start) / 20000
    finally:
        _reducelab._set_dry_run(False)
    print(f"binding dry run: {per_call:.0f} ns per call")
    assert per_call < 5000


WHOLE_ARRAY = ["sum", "mean", "var", "std", "var_mean", "std_mean", "norm", "logsumexp", "dot",
               "item"]


@pytest.mark.parametrize("name", WHOLE_ARRAY)
def test_determinism_keyword(name):
    """The whole-array functions take determinism= (default run_to_run); a bad value is a
    ValueError before anything is read or launched."""
    f = getattr(reducelab, name)
    parameter = inspect.signature(f).parameters["determinism"]
    assert parameter.default == "run_to_run" and parameter.kind == parameter.KEYWORD_ONLY
    x = FakeCudaArray((8,))
    args = {"dot": (x, x), "item": ("sum", x)}.get(name, (x,))
    for bad in ("gpu-to-gpu", "GPU_TO_GPU", 1, None):
        with pytest.raises(ValueError, match="determinism must be"):
            f(*args, determinism=bad)


def test_determinism_code_reaches_the_library():
    """The binding passes the code on (dry run: parsed, not launched) and rejects other codes."""
    args = (0, 1.0, 2.0, 0, 0x7F0000000000, 0, (1024,), (1,), 1, -1, 0x7F0000100000, 0, 0)
    _reducelab._set_dry_run(True)
    try:
        _reducelab.reduce(*args)  # default: run_to_run
        _reducelab.reduce(*args, 1)
        _reducelab.reduce(*args, determinism=0)
        with pytest.raises(ValueError, match="determinism"):
            _reducelab.reduce(*args, 2)
        with pytest.raises(ValueError, match="determinism"):
            _reducelab.item(0, 1.0, 2.0, 0, 0x7F0000000000, 0, 1024, 0, 0, -1)
    finally:
        _reducelab._set_dry_run(False)


def test_distributed_needs_an_initialised_group():
    """reducelab.distributed imports without a GPU; a call without torch.distributed (or before
    init_process_group) raises ImportError or ValueError, before anything is launched."""
    import reducelab.distributed as rd
    assert rd._STATE_BYTES == 64
    assert "rank order" in inspect.getdoc(rd)
    with pytest.raises(ValueError, match="unknown reduce"):
        rd.reduce("median", FakeCudaArray((8,)))
    try:
        import torch.distributed as dist
    except ImportError:
        with pytest.raises(ImportError):
            rd.reduce("sum", FakeCudaArray((8,)))
        return
    if dist.is_available() and not dist.is_initialized():
        with pytest.raises(ValueError, match="not initialised"):
            rd.reduce("sum", FakeCudaArray((8,)))


def test_shard_state_binding_dry_run():
    """The two halves' bindings parse their arguments (dry run) and check the op and dtype."""
    _reducelab._set_dry_run(True)
    try:
        _reducelab.shard_state(0, 1.0, 2.0, 0, 0x7F0000000000, 0, 1024, 0x7F0000100000, 0, 0)
        _reducelab.fold_states(0, 1.0, 2.0, 0, 0x7F0000100000, 2, 0x7F0000200000, 0, 0)
        with pytest.raises(ValueError):
            _reducelab.shard_state(0, 1.0, 2.0, 99, 0x7F0000000000, 0, 1024, 0x7F0000100000, 0, 0)
    finally:
        _reducelab._set_dry_run(False)
