"""reducelab against torch on a GPU: every op x dtype x shape x dim x keepdim, strided views,
CuPy inputs, streams, CUDA graphs, bad inputs. Skips without a CUDA device (conftest.py).
Random inputs come from a fixed seed (printed in the test id's parameters)."""

import math

import pytest

import reducelab
from conftest import CUPY, HAS_GPU, TORCH

if not HAS_GPU:
    pytest.skip("needs torch with a CUDA device", allow_module_level=True)

FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["i32", "i64", "u32", "u64"]
SHAPES_DIMS = [((1,), None), ((33,), None), ((1023,), 0), ((4097,), -1), ((65539,), None),
               ((64, 33), None), ((64, 33), 0), ((64, 33), 1), ((64, 33), (0, 1)),
               ((7, 130, 5), 1), ((7, 130, 5), (0, 2)), ((7, 130, 5), -1),
               ((3, 4, 5, 6), (1, 3)), ((2, 3, 1, 4, 1, 5, 2, 3, 2), None)]
TOL = {"f32": 1e-4, "f64": 1e-10, "f16": 4e-3, "bf16": 3e-2}
ONE_INPUT = ["sum", "mean", "var", "std", "var_mean", "std_mean", "norm", "logsumexp",
             "count_nonzero", "any", "all", "amin", "amax", "min", "max", "argmin", "argmax",
             "aminmax"]
STATISTICS = {"mean", "var", "std", "var_mean", "std_mean", "norm", "logsumexp"}
INT_DIM_ONLY = {"min", "max", "argmin", "argmax", "aminmax"}


def tdtype(name):
    return getattr(TORCH, {"f32": "float32", "f64": "float64", "f16": "float16",
                           "bf16": "bfloat16", "i32": "int32", "i64": "int64",
                           "u32": "uint32", "u64": "uint64"}[name])


def make(shape, dtype, seed=1234):
    g = TORCH.Generator(device="cuda").manual_seed(seed)
    if dtype in FLOATS:
        return TORCH.randn(shape, generator=g, device="cuda").to(tdtype(dtype))
    low = 0 if dtype.startswith("u") else -50
    x = TORCH.randint(low, 50, shape, generator=g, device="cuda", dtype=TORCH.int64)
    x[(x % 7) == 0] = 0  # zeros for count_nonzero/any/all
    try:
        return x.to(tdtype(dtype))
    except (RuntimeError, TypeError) as e:
        pytest.skip(f"torch cannot make {dtype} tensors here: {e}")


def reference(op, x, dim, keepdim):
    """torch's result, computed on a type torch supports (uint32/uint64 through int64)."""
    t = TORCH
    if x.dtype in (getattr(t, "uint32", None), getattr(t, "uint64", None)):
        x = x.to(t.int64)
    if x.dtype in (t.float16, t.bfloat16) and op in STATISTICS | {"sum"}:
        pass  # torch computes these in float32 and rounds to the input's dtype, as we do
    all_dims = tuple(range(x.dim()))
    d = all_dims if dim is None else dim
    kw = {"keepdim": keepdim}
    if op == "sum":
        return t.sum(x, dim=d, **kw)
    if op in ("mean", "var", "std", "var_mean", "std_mean"):
        return getattr(t, op)(x, dim=d, **kw)
    if op == "norm":
        return t.linalg.vector_norm(x, dim=d, **kw)
    if op == "logsumexp":
        return t.logsumexp(x, dim=d, **kw)
    if op == "count_nonzero":
        return t.count_nonzero(x, dim=d)
    if op in ("any", "all"):
        r = x != 0
        for k in sorted(d if isinstance(d, tuple) else (d,), reverse=True):
            r = getattr(r, op)(dim=k, keepdim=keepdim)
        return r
    if op in ("amin", "amax"):
        return getattr(t, op)(x, dim=d, **kw)
    if op in ("min", "max"):
        return getattr(t, op)(x) if dim is None else getattr(t, op)(x, dim=dim, **kw)
    if op == "aminmax" and dim is None and keepdim:
        # torch resizes its keepdim result to a scalar here (with a deprecation warning); ours
        # keeps every axis as size 1, as amin/amax with keepdim do.
        return tuple(v.reshape((1,) * x.dim()) for v in t.aminmax(x))
    if op in ("argmin", "argmax", "aminmax"):
        return getattr(t, op)(x, dim=dim, **kw)
    raise AssertionError(op)


def ours(op, x, dim, keepdim):
    f = getattr(reducelab, op)
    if op == "count_nonzero":
        return f(x, dim)
    if op == "aminmax":
        return f(x, dim=dim, keepdim=keepdim)
    if op in ("min", "max") and dim is None:
        return f(x)
    return f(x, dim=dim, keepdim=keepdim)


def assert_matches(got, want, dtype, reduced):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for a, b in zip(got, want):
            assert_matches(a, b, dtype, reduced)
        return
    assert isinstance(got, TORCH.Tensor) and got.is_cuda
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    if want.dtype in (TORCH.int64, TORCH.bool) or dtype in INTS:
        assert TORCH.equal(got.to(TORCH.int64).cpu(), want.to(TORCH.int64).cpu())
        return
    tol = TOL[dtype]
    a, b = got.double().cpu(), want.double().cpu()
    atol = tol * max(1.0, math.sqrt(max(reduced, 1))) * 4
    assert TORCH.allclose(a, b, rtol=tol * 4, atol=atol, equal_nan=True), (a, b)


def reduced_count(shape, dim):
    if dim is None:
        return math.prod(shape)
    dims = dim if isinstance(dim, tuple) else (dim,)
    return math.prod(shape[k] for k in dims)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", ONE_INPUT)
def test_against_torch(op, dtype, shape, dim, keepdim):
    if op in STATISTICS and dtype in INTS:
        pytest.skip("statistics take floating types (TypeError: test_statistics_of_integers)")
    if op in INT_DIM_ONLY and isinstance(dim, tuple):
        pytest.skip("torch takes one int dim here")
    x = make(shape, dtype)
    got = ours(op, x, dim, keepdim)
    want = reference(op, x, dim, keepdim)
    if op in ("min", "max") and dim is not None:
        assert isinstance(got, reducelab.ValuesIndices)
    expected_dtype = {"u32": TORCH.uint64, "u64": TORCH.uint64}.get(dtype) if op == "sum" else None
    if expected_dtype is None and not isinstance(want, tuple) and dtype not in ("u32", "u64"):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if expected_dtype is not None:
        assert got.dtype == expected_dtype
    assert_matches(got, want, dtype, reduced_count(shape, dim))


@pytest.mark.parametrize("dtype", FLOATS + ["i32", "i64"])
def test_dot(dtype):
    x, y = make((4099,), dtype, 1), make((4099,), dtype, 2)
    got = reducelab.dot(x, y)
    if dtype in FLOATS:
        want = (x.float() * y.float()).sum().to(x.dtype) if dtype in ("f16", "bf16") else TORCH.dot(x, y)
    else:
        want = (x.to(TORCH.int64) * y.to(TORCH.int64)).sum()
    assert_matches(got, want, dtype, 4099)
    # a strided pair (the same strides)
    xs, ys = make((8198,), dtype, 3)[::2], make((8198,), dtype, 4)[::2]
    assert_matches(reducelab.dot(xs, ys),
                   (xs.double() * ys.double()).sum().to(reducelab.dot(xs, ys).dtype), dtype, 4099)


def test_sum_dtype_argument():
    x = make((1000,), "f16")
    assert reducelab.sum(x, dtype=TORCH.float32).dtype == TORCH.float32
    assert_matches(reducelab.sum(x, dtype=TORCH.float32), x.float().sum(), "f32", 1000)
    assert reducelab.sum(x, dtype=TORCH.float64).dtype == TORCH.float64
    xi = make((1000,), "i32")
    assert_matches(reducelab.sum(xi, dtype=TORCH.float32), TORCH.sum(xi, dtype=TORCH.float32),
                   "f32", 1000)
    assert reducelab.mean(x, dtype=TORCH.float32).dtype == TORCH.float32


@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_var_correction(correction):
    x = make((300, 7), "f32")
    assert_matches(reducelab.var(x, 0, correction=correction),
                   TORCH.var(x, 0, correction=correction), "f32", 300)
    assert_matches(reducelab.std(x, unbiased=False), TORCH.std(x, unbiased=False), "f32", 2100)


@pytest.mark.parametrize("ord", [0, 1, 2, math.inf, -math.inf])
def test_norm_orders(ord):
    x = make((129, 33), "f32")
    assert_matches(reducelab.norm(x, ord, 1), TORCH.linalg.vector_norm(x, ord, 1), "f32", 33)


@pytest.mark.parametrize("view", ["transpose", "slice", "step", "expand", "permute3", "narrow"])
@pytest.mark.parametrize("op", ["sum", "amax", "argmin", "var", "logsumexp", "any"])
def test_strided_views(view, op):
    base = make((48, 70), "f32") if view != "permute3" else make((6, 8, 70), "f32")
    x = {"transpose": lambda: base.t(), "slice": lambda: base[3:-5, 7:-2],
         "step": lambda: base[::3, 1::2], "expand": lambda: base[:, :1].expand(48, 70),
         "permute3": lambda: base.permute(2, 0, 1), "narrow": lambda: base.narrow(1, 5, 20)}[view]()
    assert not x.is_contiguous() or view == "narrow"
    ptr = x.data_ptr()
    for dim in (None, 0, -1):
        assert_matches(ours(op, x, dim, False), reference(op, x, dim, False), "f32",
                       reduced_count(tuple(x.shape), dim))
    assert x.data_ptr() == ptr  # no copy was made of the input (it is only read)


def test_segment_reduce():
    x = make((1000,), "f32")
    assert_matches(reducelab.segment_reduce(x, "sum", segment_size=100),
                   x.view(10, 100).sum(1), "f32", 100)
    offsets = TORCH.tensor([0, 3, 3, 500, 1000], device="cuda", dtype=TORCH.int32)
    got = reducelab.segment_reduce(x, "max", offsets=offsets)
    assert got[1].item() == -math.inf and got[0].item() == x[:3].max().item()
    lengths = TORCH.tensor([3, 0, 497, 500], device="cuda")
    want = [x[:3].argmin().item(), -1, x[3:500].argmin().item(), x[500:].argmin().item()]
    assert reducelab.segment_reduce(x, "argmin", lengths=lengths).tolist() == want
    var, mean = reducelab.segment_reduce(x, "var_mean", segment_size=250)
    assert_matches(var, x.view(4, 250).var(1), "f32", 250)


@pytest.mark.parametrize("dtype", ["f32", "f16", "f64"])
def test_foreach_against_torch(dtype):
    # Lengths of every class (empty, a thread's, a warp's, a block's, several blocks'), shapes
    # of every rank: each tensor is read flat.
    tensors = [make(shape, dtype) for shape in [(0,), (3,), (40,), (5000,), (300, 1000), (7, 11, 13)]]
    flat = TORCH.cat([t.reshape(-1) for t in tensors])
    norms, total = reducelab.foreach("norm", tensors, total=True)
    want = TORCH.stack([TORCH.linalg.vector_norm(t.float()) for t in tensors])
    assert_matches(norms.float(), want, dtype, 300000)
    assert_matches(total.float(), TORCH.linalg.vector_norm(flat.float()), dtype, flat.numel())
    assert norms.dtype == tensors[0].dtype
    sums = reducelab.foreach("sum", tensors)
    assert_matches(sums, TORCH.stack([t.sum() for t in tensors]), dtype, 300000)
    idx, whole = reducelab.foreach("argmax", tensors[1:], total=True)
    assert idx.tolist() == [t.reshape(-1).argmax().item() for t in tensors[1:]]
    assert whole.item() == flat.argmax().item()
    maxes, top = reducelab.foreach("max", tensors[1:], total=True)
    assert maxes.tolist() == [t.max().item() for t in tensors[1:]]
    assert top.item() == flat.max().item()


def test_foreach_rejects_mixed_lists():
    a, b = make((10,), "f32"), make((10,), "f64")
    with pytest.raises(ValueError):
        reducelab.foreach("sum", [a, b])
    with pytest.raises(ValueError):
        reducelab.foreach("sum", [a, make((4, 6), "f32").t()])
    with pytest.raises(ValueError):
        reducelab.foreach("dot", [a])
    with pytest.raises(TypeError):
        reducelab.foreach("sum", [a.cpu()])


@pytest.mark.parametrize("op", ["sum", "mean", "amin", "argmax", "count_nonzero", "all",
                                "var_mean", "aminmax", "norm"])
def test_item(op):
    x = make((5000,), "f32")
    got = reducelab.item({"amin": "min"}.get(op, op), x)
    want = reference(op, x, None, False)
    if isinstance(want, tuple):
        assert got == pytest.approx(tuple(w.item() for w in want), rel=1e-4)
    else:
        assert got == pytest.approx(want.item(), rel=1e-4, abs=1e-3)
    assert isinstance(reducelab.sum(x).item(), float)


def test_current_stream_orders_after_queued_work():
    x = TORCH.zeros(1 << 20, device="cuda")
    s = TORCH.cuda.Stream()
    with TORCH.cuda.stream(s):
        TORCH.cuda._sleep(50_000_000)  # keeps s busy, so a result read too early would be 0
        x.fill_(1.0)
        r = reducelab.sum(x)           # on s, torch's current stream here
    s.synchronize()
    assert r.item() == float(1 << 20)


def test_stream_argument():
    x = TORCH.zeros(1 << 20, device="cuda")
    s = TORCH.cuda.Stream()
    with TORCH.cuda.stream(s):
        TORCH.cuda._sleep(50_000_000)
        x.fill_(2.0)
    r = reducelab.sum(x, stream=s)                 # a torch.cuda.Stream
    r2 = reducelab.sum(x, stream=s.cuda_stream)    # a raw handle
    assert reducelab.item("sum", x, stream=s) == float(2 << 20)
    s.synchronize()
    assert r.item() == r2.item() == float(2 << 20)


def test_cuda_graph_capture():
    x = make((1 << 16,), "f32")
    s = TORCH.cuda.Stream()
    s.wait_stream(TORCH.cuda.current_stream())
    with TORCH.cuda.stream(s):  # warm-up outside the capture, as torch recommends
        reducelab.sum(x)
    TORCH.cuda.current_stream().wait_stream(s)
    g = TORCH.cuda.CUDAGraph()
    with TORCH.cuda.graph(g):
        total = reducelab.sum(x)
        mx = reducelab.amax(x.view(256, 256), 1)
    for seed in (1, 2):
        x.copy_(make((1 << 16,), "f32", seed))
        g.replay()
        TORCH.cuda.synchronize()
        assert_matches(total, x.sum(), "f32", 1 << 16)
        assert TORCH.equal(mx, x.view(256, 256).amax(1))


def test_bad_inputs_leave_the_context_usable():
    x = make((100,), "f32")
    with pytest.raises(TypeError, match="CUDA device"):
        reducelab.sum(x.cpu())
    with pytest.raises(TypeError, match="not supported"):
        reducelab.sum(x > 0)
    with pytest.raises(TypeError, match="not supported"):
        reducelab.sum(TORCH.zeros(4, dtype=TORCH.complex64, device="cuda"))
    with pytest.raises(ValueError, match="out of range"):
        reducelab.sum(x, dim=1)
    with pytest.raises(TypeError, match="floating-point"):
        reducelab.mean(make((10,), "i32"))
    with pytest.raises(ValueError, match="no elements"):
        reducelab.amax(x[:0])
    with pytest.raises(ValueError):
        reducelab.dot(x, make((99,), "f32"))
    assert_matches(reducelab.sum(x), x.sum(), "f32", 100)  # still works


@pytest.mark.skipif(HAS_GPU and TORCH.cuda.device_count() < 2, reason="needs two GPUs")
def test_second_device():
    x = make((1000,), "f32").to("cuda:1")
    r = reducelab.sum(x)
    assert r.device == x.device
    assert_matches(r, x.sum(), "f32", 1000)
    with pytest.raises(ValueError):
        reducelab.dot(x, make((1000,), "f32"))


def test_out_argument():
    x = make((64, 33), "f32")
    out = TORCH.empty(64, device="cuda")
    assert reducelab.sum(x, 1, out=out) is out
    assert_matches(out, x.sum(1), "f32", 33)


def test_empty_inputs():
    x = make((0,), "f32")
    assert reducelab.sum(x).item() == 0.0
    assert math.isnan(reducelab.mean(x).item())
    assert reducelab.all(x).item() is True and reducelab.any(x).item() is False
    assert reducelab.sum(make((0, 5), "f32"), 0).shape == (5,)


@pytest.mark.skipif(CUPY is None, reason="CuPy is not installed")
class TestCupy:
    def test_cupy_in_cupy_out(self):
        cp = CUPY
        x = cp.random.default_rng(1).standard_normal((300, 40), dtype=cp.float32)
        r = reducelab.sum(x, 1)
        assert isinstance(r, cp.ndarray) and r.shape == (300,)
        assert cp.allclose(r, x.sum(1), rtol=1e-4, atol=1e-4)
        v, i = reducelab.max(x, 0)
        assert cp.array_equal(i, x.argmax(0)) and cp.array_equal(v, x.max(0))
        assert cp.allclose(reducelab.var(x), x.var(ddof=1), rtol=1e-4)
        assert int(reducelab.argmin(x)) == int(x.argmin())

    def test_cupy_strided_and_negative_strides(self):
        cp = CUPY
        x = cp.random.default_rng(2).standard_normal((64, 50), dtype=cp.float64)
        for view in (x.T, x[::2, 3:], x[::-1], x[:, ::-3]):
            assert cp.allclose(reducelab.sum(view), view.sum())
        assert cp.allclose(reducelab.sum(x[::-1], 0), x[::-1].sum(0))
        with pytest.raises(ValueError, match="negative stride"):
            reducelab.sum(x[::-1], 1)
        with pytest.raises(ValueError, match="negative stride"):
            reducelab.argmax(x[::-1])

    def test_cupy_stream(self):
        cp = CUPY
        x = cp.ones(1 << 20, dtype=cp.float32)
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            r = reducelab.sum(x)  # CuPy's current stream
        s.synchronize()
        assert float(r) == float(1 << 20)

    def test_raw_cuda_array_interface(self):
        cp = CUPY

        class Raw:
            def __init__(self, a):
                self.__cuda_array_interface__ = a.__cuda_array_interface__

        x = cp.arange(1000, dtype=cp.int32)
        r = reducelab.sum(Raw(x))
        assert int(r) == 999 * 1000 // 2

    def test_dlpack_only(self):
        cp = CUPY

        class DLPackOnly:
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, **kw):
                return self.a.__dlpack__(**kw)

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        x = cp.arange(10, dtype=cp.float32)
        assert float(reducelab.sum(DLPackOnly(x))) == 45.0


def _bits(t):
    """The bits of a result array, as integers (NaN payloads included)."""
    return t.contiguous().view({2: TORCH.int16, 4: TORCH.int32, 8: TORCH.int64}[t.element_size()])


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("op,kwargs", [("sum", {}), ("mean", {}), ("var", {}), ("std", {"correction": 0}),
                                       ("var_mean", {}), ("norm", {"ord": 1}), ("norm", {"ord": 2}),
                                       ("logsumexp", {})])
def test_gpu_to_gpu(op, kwargs, dtype):
    """determinism="gpu_to_gpu": the same bits at every pointer offset (the default mode's
    rounding may change with the start's place in its 16-byte line, this one's never), close to
    torch; along any dim each result is the whole-array result of its elements."""
    # f16 results are f16, as torch's: its 1-norm of 2^20 normal values (~8e5) would be inf.
    n = (1 << 20) + 3 if dtype != "f16" else (1 << 14) + 3
    base = make((n,), dtype)
    f = getattr(reducelab, op)
    first = None
    for offset in range(8):
        x = TORCH.empty(n + offset, dtype=base.dtype, device="cuda")[offset:]
        x.copy_(base)
        got = f(x, determinism="gpu_to_gpu", **kwargs)
        got = got if isinstance(got, tuple) else (got,)
        if first is None:
            first = got
            if op == "norm":
                want = (TORCH.linalg.vector_norm(base.double(), **kwargs),)
            elif op == "std":
                want = (TORCH.std(base.double(), **kwargs),)
            else:
                want = reference(op, base.double(), None, False)
                want = want if isinstance(want, tuple) else (want,)
            for g, w in zip(got, want):
                assert g.double().item() == pytest.approx(w.item(), rel=1e-2, abs=1e-3)
        for g, w in zip(got, first):
            assert TORCH.equal(_bits(g), _bits(w)), f"{op} {dtype} offset {offset}"
    if op not in ("var_mean",):
        value = reducelab.item(op, base, determinism="gpu_to_gpu", **kwargs)
        assert value == pytest.approx(first[0].double().item(), rel=1e-2)
    # Along a dim whose reduced elements are contiguous (rows): each row's result is the
    # whole-array result of the row, so one row gives the same bits.
    row = f(base.reshape(1, n), dim=1, determinism="gpu_to_gpu", **kwargs)
    row = row if isinstance(row, tuple) else (row,)
    for g, w in zip(row, first):
        assert TORCH.equal(_bits(g.reshape(())), _bits(w)), f"{op} {dtype} along dim 1"
    m = n - n % 7
    rows = f(base[:m].reshape(7, m // 7), dim=1, determinism="gpu_to_gpu", **kwargs)
    rows = rows if isinstance(rows, tuple) else (rows,)
    segs = reducelab.segment_reduce(base[:m], op, segment_size=m // 7, determinism="gpu_to_gpu",
                                    **kwargs)
    segs = segs if isinstance(segs, tuple) else (segs,)
    for r, g in zip(rows, segs):
        assert TORCH.equal(_bits(r), _bits(g)), f"{op} {dtype} rows against segment_reduce"
    for i in (0, 6):
        one = f(base[i * (m // 7):(i + 1) * (m // 7)], determinism="gpu_to_gpu", **kwargs)
        one = one if isinstance(one, tuple) else (one,)
        for r, w in zip(rows, one):
            assert TORCH.equal(_bits(r[i]), _bits(w)), f"{op} {dtype} row {i}"
    # Columns (strided): each column's result is the whole-array result of the column copied out.
    matrix = base[:m].reshape(7, m // 7)
    cols = f(matrix, dim=0, determinism="gpu_to_gpu", **kwargs)
    cols = cols if isinstance(cols, tuple) else (cols,)
    for c in (0, 5, m // 7 - 1):
        one = f(matrix[:, c].contiguous(), determinism="gpu_to_gpu", **kwargs)
        one = one if isinstance(one, tuple) else (one,)
        for r, w in zip(cols, one):
            assert TORCH.equal(_bits(r[c]), _bits(w)), f"{op} {dtype} column {c}"


# ---- reducelab.distributed: a 1-rank torch.distributed group (the NCCL backend) ---------------

@pytest.fixture(scope="module")
def one_rank_group(tmp_path_factory):
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or not dist.is_nccl_available():
        pytest.skip("torch.distributed with the NCCL backend is not available")
    created = not dist.is_initialized()
    if created:
        store = dist.FileStore(str(tmp_path_factory.mktemp("dist") / "store"), 1)
        dist.init_process_group("nccl", store=store, rank=0, world_size=1)
    yield dist
    if created:
        dist.destroy_process_group()


def _as_tuple(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "i64"])
@pytest.mark.parametrize("op", ["sum", "mean", "var", "std_mean", "norm", "logsumexp", "max",
                                "argmin", "argmax", "aminmax", "count_nonzero", "any", "dot"])
def test_distributed_one_rank_is_the_single_gpu_call(one_rank_group, op, dtype):
    """With one rank the sharded reduce (state, all-gather through torch.distributed, fold) gives
    the bits of the whole-array call (multigpu.hpp's promise)."""
    import reducelab.distributed as rd
    from reducelab import _ops
    if op in STATISTICS and dtype not in FLOATS:
        pytest.skip("statistics take floating types")
    n = 100_003
    x = make((n,), dtype)
    x[n // 3] = x.max()  # a tie: the lowest index wins
    y = make((n,), dtype, seed=99) if op == "dot" else None
    got = _as_tuple(rd.reduce(op, x, y))
    want = _as_tuple(_ops._reduce(_ops._OP[op], x, y=y))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert TORCH.equal(_bits(g) if g.is_floating_point() else g,
                           _bits(w) if w.is_floating_point() else w), f"{op} {dtype}"


def test_distributed_empty_shard_and_errors(one_rank_group):
    import reducelab.distributed as rd
    empty = make((0,), "f32")
    assert rd.reduce("sum", empty).item() == 0.0
    assert math.isnan(rd.reduce("mean", empty).item())
    with pytest.raises(ValueError, match="dot takes y"):
        rd.reduce("sum", empty, empty)
    with pytest.raises(ValueError, match="unknown reduce"):
        rd.reduce("median", empty)
    with pytest.raises(TypeError):
        rd.reduce("sum", empty.cpu())
    with pytest.raises(ValueError, match="contiguous"):
        rd.reduce("sum", make((64, 33), "f32")[:, :5])
    with pytest.raises(ValueError):  # the sharded fixed order is not built
        rd.reduce("sum", make((100,), "f32"), determinism="gpu_to_gpu")
    assert rd.reduce("max", make((100,), "f32"), determinism="gpu_to_gpu").item() == \
        reducelab.amax(make((100,), "f32")).item()


@pytest.mark.skipif(TORCH.cuda.device_count() < 2, reason="needs two GPUs")
def test_distributed_two_ranks(tmp_path):
    """reducelab.distributed over a real two-rank NCCL group, one process per GPU
    (two_rank_worker.py): uneven shards (an empty and a 1-element one), the extreme on the shard
    boundary, a tie across the ranks, NaN on one rank; each rank checks its results against the
    single-GPU call on the whole array, and both ranks must print the same bits."""
    import os
    import subprocess
    import sys
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or not dist.is_nccl_available():
        pytest.skip("torch.distributed with the NCCL backend is not available")
    worker = os.path.join(os.path.dirname(__file__), "two_rank_worker.py")
    env = dict(os.environ, WORLD_SIZE="2", STORE=str(tmp_path / "store"))
    procs = [subprocess.Popen([sys.executable, worker], env=dict(env, RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"rank {r} failed:\n{err[-4000:]}"
    assert outs[0][0] == outs[1][0], "the two ranks got different bits"
    assert outs[0][0].count("\n") > 100
