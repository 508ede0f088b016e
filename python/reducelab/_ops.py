"""The reductions, named and shaped like torch's. Each call describes its input without copying
it (_adapt.py), allocates the result in the caller's library, and makes one call into the
extension, which launches one kernel on the stream and returns without synchronising.

Rules shared by every function (each docstring adds its own):

- ``dim``: None (every axis), an int, or a tuple of ints (negative counts from the end); a dim out
  of range or repeated raises ValueError. ``keepdim`` keeps each reduced axis as size 1.
- ``stream``: None runs on the producer's current stream (torch's current stream of the tensor's
  device, CuPy's current stream; for ``__cuda_array_interface__`` inputs the stream it names, else
  the legacy default stream); otherwise an int handle or an object with ``__cuda_stream__``
  (torch.cuda.Stream and cupy Streams work too). The result is allocated by the caller's library
  on its current stream: with a different ``stream=``, keep the input and the result alive until
  that stream has run the call (as with any work on a side stream), or use the library's stream
  context (``with torch.cuda.stream(s):``) instead.
- ``out``: a contiguous device array of exactly the result's dtype and shape, written in place
  (single-result functions; no conversion is made, so f16/bf16 sums and statistics take a float32
  ``out``).
- Results: torch tensors for torch inputs, CuPy arrays for CuPy inputs; for
  ``__cuda_array_interface__`` and DLPack-only inputs, torch tensors if torch is installed, else
  CuPy arrays. Nothing synchronises: ``.item()`` on the result, or :func:`item`, does.
- Errors: TypeError for arrays not in GPU memory and for unsupported dtypes (bool, complex, 8- and
  16-bit integers), ValueError for bad dims and arguments, :class:`CudaError` (a RuntimeError) for
  CUDA failures. Nothing is launched after an error, and the CUDA context stays usable.
- Negative strides (CuPy) are read in place along reduced axes; on a kept axis, and for index
  results, they raise ValueError (no silent copy). Strided views of rank > 8 raise ValueError.
- Determinism: the same call on the same GPU model gives bitwise identical results. The
  whole-array sum, mean, var, std, var_mean, std_mean, norm (ord 1, 2), logsumexp, dot and
  item take ``determinism="gpu_to_gpu"`` (default ``"run_to_run"``): the same bits on every GPU,
  grid and pointer offset for the same input values and reducelab version, in a fixed order
  (reducelab/reproducible.hpp; the f64 2-norm reads the input twice).
  Along any dims each result has the bits of the whole-array result of its elements taken in
  row-major order (columns gather them into rows first: three times the bytes).
"""

import collections

from . import _adapt
from . import _reducelab

_OPS = _adapt._TABLE["ops"]
_DTYPES = _adapt.DTYPES
_CODE_NAMES = _adapt.CODE_NAMES
_RAW = _adapt._RAW
_backends = _adapt._backends
_launch = _reducelab.reduce

MinMax = collections.namedtuple("MinMax", ["min", "max"])
MinMax.__doc__ = "aminmax's result: (min, max), as torch.return_types.aminmax."
ValuesIndices = collections.namedtuple("ValuesIndices", ["values", "indices"])
ValuesIndices.__doc__ = "min/max along a dim: (values, indices), as torch.return_types.min."


class _Op:
    __slots__ = ("name", "code", "result", "empty", "integers", "inputs")

    def __init__(self, name):
        info = _OPS[name]
        self.name, self.code, self.result = name, info["code"], info["result"]
        self.empty, self.integers, self.inputs = info["empty"], info["integers"], info["inputs"]


_OP = {name: _Op(name) for name in _OPS}
_PAIRS = ("value_index", "statistic_pair", "min_max")
_specs = {}


def _spec(op, code, want):
    """(buffer dtype, final dtype or None, cast the input to) for op on dtype `code`, with the
    result dtype `want` (a reducelab dtype name or None): torch's dtype rules, cached."""
    key = (op.code, code, want)
    spec = _specs.get(key)
    if spec is not None:
        return spec
    name = _CODE_NAMES[code]
    info = _DTYPES[name]
    floating = info["kind"] == "floating"
    if not op.integers and not floating:
        raise TypeError(f"reducelab: {op.name} takes floating-point arrays (float32, float64, "
                        f"float16, bfloat16), not {name}; convert first, e.g. x.float()")
    stat = "f64" if name == "f64" else "f32"
    buf = {"accumulator": info["sum_dtype"], "statistic": stat, "statistic_pair": stat,
           "value_index": "i64", "count": "i64", "boolean": "bool"}.get(op.result, name)
    # Floating sums and statistics come back in the input's dtype (f16/bf16 accumulate in f32,
    # converted at the end), integer sums in the 64-bit type.
    final = name if op.result in ("statistic", "statistic_pair") or (
        op.result == "accumulator" and floating) else buf
    cast = None
    if want is not None and want != final:
        if want == buf:
            final = buf                 # e.g. f16 in, dtype=float32: the f32 result as it is
        else:
            cast = want                 # torch: "the input is cast to dtype first"
    spec = _specs[key] = (buf, None if final == buf else final, cast)
    return spec


def _axes(dim, shape, keepdim):
    """(mask, result shape, reduced element count) for `dim` of a view of `shape`."""
    rank = len(shape)
    dims = (dim,) if type(dim) is int else tuple(dim)
    if rank == 0:
        for d in dims:
            if d not in (0, -1):
                raise ValueError(f"reducelab: dim {d} out of range for a 0-d array "
                                 "(expected 0 or -1)")
        return -1, (), 1
    if not dims:
        return -1, (1,) * rank if keepdim else (), _count(shape)
    mask = 0
    for d in dims:
        if type(d) is not int and not hasattr(d, "__index__"):
            raise TypeError(f"reducelab: dim must be an int or a tuple of ints, got {dim!r}")
        d = int(d)
        if d < -rank or d >= rank:
            raise ValueError(f"reducelab: dim {d} out of range for an array of rank {rank} "
                             f"(expected {-rank} to {rank - 1})")
        d %= rank
        if (mask >> d) & 1:
            raise ValueError(f"reducelab: dim {d} appears twice in dim={dim!r}")
        mask |= 1 << d
    kept, reduced = [], 1
    for k, size in enumerate(shape):
        if (mask >> k) & 1:
            reduced *= size
            if keepdim:
                kept.append(1)
        else:
            kept.append(size)
    return mask, tuple(kept), reduced


def _count(shape):
    n = 1
    for size in shape:
        n *= size
    return n


def _describe(x):
    b = _backends.get(type(x)) or _adapt.backend_of(x)
    if b is None:
        x = _adapt.dlpack_to_native(x)
        b = _adapt.backend_of(x)
    return b, x, b.describe(x)


def _reduce(op, x, dim=None, keepdim=False, want=None, correction=1.0, ord=2.0, stream=None,
            out=None, y=None, determinism=0, launch=None):
    b, x, (ptr, code, shape, strides, unit, device) = _describe(x)
    buf_name, final, cast = _spec(op, code, want)
    if cast is not None:
        return _reduce(op, b.cast(x, cast), dim, keepdim, None, correction, ord, stream, out,
                       None if y is None else b.cast(y, cast), determinism, launch)
    if dim is None:
        mask, shape_out = -1, (1,) * len(shape) if keepdim else ()
        reduced = _count(shape) if op.empty != "zero" else 1
    else:
        mask, shape_out, reduced = _axes(dim, shape, keepdim)
    # (A shard of a sharded reduce, launch given, may be empty: only the global count matters.)
    if reduced == 0 and launch is None and (op.empty == "error" or
                                            (op.name == "norm" and ord in _INF)):
        raise ValueError(f"reducelab: {op.name} of no elements has no value (an empty input or "
                         "an empty reduced dim), as in torch")
    yptr = 0
    if y is not None:
        yb, y, (yptr, ycode, yshape, ystrides, yunit, ydevice) = _describe(y)
        if (ycode, tuple(yshape), tuple(ystrides), ydevice) != (code, tuple(shape),
                                                               tuple(strides), device):
            raise ValueError("reducelab: dot needs x and y of the same dtype, shape, strides and "
                             "device")
    s = _stream(b, x, device, stream)
    pair = op.result in _PAIRS
    ob = b
    if out is not None:
        result = _check_out(out, op, buf_name, shape_out, device)
        buf = out
    else:
        shape_buf = shape_out + (2,) if pair else shape_out
        if b is _RAW:
            ob = _adapt.output_backend()
            if device < 0:
                device = ob.current_device()
            buf = ob.empty(shape_buf, buf_name, device)
        elif b.name == "torch":
            # On the input's device through the tensor itself: 2.4 us of host time on the H200
            # machine against 3.1 us for torch.empty with a cached torch.device (efc11bb).
            buf = x.new_empty(shape_buf, dtype=b.dtypes[buf_name])
        else:
            buf = ob.empty(shape_buf, buf_name, device)
        result = ob.address(buf)
    (launch or _launch)(op.code, correction, ord, code, ptr, yptr, shape, strides, unit, mask,
                        result, s, device, determinism)
    if not pair:
        return buf if final is None else ob.cast(buf, final)
    return _split(ob, op, buf, final, code)


def _split(ob, op, buf, final, code):
    """The two results of a pair op from its buffer of (..., 2): (values, indices) of argmin and
    argmax (ArgResult {value, int64 index} per result), else (first, second)."""
    if op.result == "value_index":
        return ob.view_as(buf, _CODE_NAMES[code])[..., 0], buf[..., 1]
    first, second = buf[..., 0], buf[..., 1]
    if final is not None:
        first, second = ob.cast(first, final), ob.cast(second, final)
    return first, second


def _second_array(y, code, n):
    """The address of dot's y (0 without one), checked against x's dtype and size."""
    if y is None:
        return 0
    _, y, (yptr, ycode, yshape, _, _, _) = _describe(y)
    if ycode != code or _count(yshape) != n:
        raise ValueError("reducelab: y must have x's dtype and size")
    return yptr


def _stream(b, x, device, stream):
    """The stream handle of a call: stream= if given, else the producer's current stream (for a
    __cuda_array_interface__ input the stream it names, else the legacy default stream)."""
    if stream is not None:
        return _adapt.stream_handle(stream)
    if b is _RAW:
        cai_stream = x.__cuda_array_interface__.get("stream")
        return cai_stream if isinstance(cai_stream, int) else 0
    return b.current_stream(device)


_INF = (float("inf"), float("-inf"))


def _check_out(out, op, buf_name, shape_out, device):
    if op.result in _PAIRS:
        raise ValueError(f"reducelab: {op.name} has two results and takes no out=")
    ob, out, (address, code, shape, strides, unit, out_device) = _describe(out)
    if _CODE_NAMES[code] != buf_name or tuple(shape) != tuple(shape_out):
        raise ValueError(f"reducelab: out= must be a {buf_name} array of shape {shape_out}, got "
                         f"{_CODE_NAMES[code]} of shape {tuple(shape)}")
    if out_device >= 0 and device >= 0 and out_device != device:
        raise ValueError(f"reducelab: out= is on device {out_device}, the input on {device}")
    _require_contiguous(shape, strides, unit, "out= must be contiguous")
    return address


def _require_contiguous(shape, strides, unit, message):
    expected = unit
    for size, stride in zip(reversed(tuple(shape)), reversed(tuple(strides))):
        if size != 1 and stride != expected:
            raise ValueError("reducelab: " + message)
        expected *= size


def _correction(correction, unbiased):
    if unbiased is not None:
        return 1.0 if unbiased else 0.0
    return 1.0 if correction is None else float(correction)


_DETERMINISM = {"run_to_run": 0, "gpu_to_gpu": 1}


def _determinism(value):
    code = _DETERMINISM.get(value) if isinstance(value, str) else None
    if code is None:
        raise ValueError(f"reducelab: determinism must be 'run_to_run' or 'gpu_to_gpu', not "
                         f"{value!r}")
    return code


def _want(x, dtype):
    if dtype is None:
        return None
    b, _, _ = _describe(x)
    return b.name_of(dtype)


# ---- the functions ----

def sum(x, dim=None, keepdim=False, dtype=None, *, stream=None, out=None,
        determinism="run_to_run"):
    """Sum of the elements of ``x`` over ``dim`` (all by default), as ``torch.sum``.

    Result dtype as torch's: floating inputs give their own dtype (float16/bfloat16 accumulate in
    float32 and are rounded to 16 bits at the end; ``dtype=torch.float32`` returns the float32
    sum without that rounding), int32/int64 give int64, uint32/uint64 give uint64 (torch has no
    sum for them). ``dtype=`` otherwise casts the input first, as torch does. Integer sums wrap
    modulo 2^64. NaN in, NaN out; an empty sum is 0. See the module notes for dim, stream, out.
    """
    return _reduce(_OP["sum"], x, dim, keepdim, _want(x, dtype), stream=stream, out=out,
                   determinism=_determinism(determinism))


def mean(x, dim=None, keepdim=False, dtype=None, *, stream=None, out=None,
         determinism="run_to_run"):
    """Mean over ``dim``, as ``torch.mean``: floating inputs only (TypeError for integers, as
    torch), the result in the input's dtype (float16/bfloat16 computed in float32; ``dtype=``
    as in :func:`sum`). The mean of no elements is NaN, as torch."""
    return _reduce(_OP["mean"], x, dim, keepdim, _want(x, dtype), stream=stream, out=out,
                   determinism=_determinism(determinism))


def var(x, dim=None, *, correction=None, keepdim=False, unbiased=None, stream=None, out=None,
        determinism="run_to_run"):
    """Variance over ``dim`` with torch's ``correction`` (default 1; 0 is the population
    variance; ``unbiased=`` is accepted as torch's older spelling): sum (x - mean)^2 /
    max(0, n - correction), in one pass with Welford/Chan merges (accurate for a large mean
    against the spread). Floating inputs only; the result in the input's dtype. n <= correction
    gives NaN or inf, as torch."""
    return _reduce(_OP["var"], x, dim, keepdim, None, _correction(correction, unbiased),
                   stream=stream, out=out, determinism=_determinism(determinism))


def std(x, dim=None, *, correction=None, keepdim=False, unbiased=None, stream=None, out=None,
        determinism="run_to_run"):
    """Standard deviation over ``dim``: sqrt(:func:`var`), same arguments and rules."""
    return _reduce(_OP["std"], x, dim, keepdim, None, _correction(correction, unbiased),
                   stream=stream, out=out, determinism=_determinism(determinism))


def var_mean(x, dim=None, *, correction=None, keepdim=False, unbiased=None, stream=None,
             determinism="run_to_run"):
    """(var, mean) over ``dim`` in one pass, as ``torch.var_mean`` (a tuple of two arrays,
    strided views of one buffer when the input is float32 or float64)."""
    return _reduce(_OP["var_mean"], x, dim, keepdim, None, _correction(correction, unbiased),
                   stream=stream, determinism=_determinism(determinism))


def std_mean(x, dim=None, *, correction=None, keepdim=False, unbiased=None, stream=None,
             determinism="run_to_run"):
    """(std, mean) over ``dim`` in one pass, as ``torch.std_mean``; arguments and rules as
    :func:`var_mean`."""
    return _reduce(_OP["std_mean"], x, dim, keepdim, None, _correction(correction, unbiased),
                   stream=stream, determinism=_determinism(determinism))


def norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, stream=None, out=None,
         determinism="run_to_run"):
    """Vector norm of order ``ord`` over ``dim``, as ``torch.linalg.vector_norm``: ord 2 (never
    overflows or underflows where the result is representable), 1, 0 (count of nonzeros), inf
    (max |x|), -inf (min |x|); other orders raise ValueError. Floating inputs only. The norm of
    no elements is 0; with ord inf or -inf it raises ValueError, as torch."""
    ord = float(ord)
    if ord not in (0.0, 1.0, 2.0) and ord not in _INF:
        raise ValueError(f"reducelab: norm takes ord 0, 1, 2, inf or -inf, not {ord}")
    return _reduce(_OP["norm"], x, dim, keepdim, _want(x, dtype), ord=ord, stream=stream,
                   out=out, determinism=_determinism(determinism))


def logsumexp(x, dim=None, keepdim=False, *, stream=None, out=None, determinism="run_to_run"):
    """log(sum(exp(x))) over ``dim`` in one pass, as ``torch.logsumexp`` (dim=None reduces every
    axis). Floating inputs only (torch also takes integers, as float: convert first). NaN if any
    element is NaN, else +inf if any is +inf; -inf for no elements. float32 exponentials use the
    hardware ex2.approx (terms below 2^-126 of the largest flush to zero)."""
    return _reduce(_OP["logsumexp"], x, dim, keepdim, stream=stream, out=out,
                   determinism=_determinism(determinism))


def count_nonzero(x, dim=None, *, stream=None, out=None):
    """Number of nonzero elements over ``dim`` as int64, as ``torch.count_nonzero``: NaN counts,
    -0.0 does not."""
    return _reduce(_OP["count_nonzero"], x, dim, False, stream=stream, out=out)


def any(x, dim=None, keepdim=False, *, stream=None, out=None):
    """Whether some element over ``dim`` is nonzero (bool), as ``torch.any``; NaN is nonzero;
    False for no elements."""
    return _reduce(_OP["any"], x, dim, keepdim, stream=stream, out=out)


def all(x, dim=None, keepdim=False, *, stream=None, out=None):
    """Whether every element over ``dim`` is nonzero (bool), as ``torch.all``; True for no
    elements."""
    return _reduce(_OP["all"], x, dim, keepdim, stream=stream, out=out)


def amin(x, dim=(), keepdim=False, *, stream=None, out=None):
    """Smallest element over ``dim`` (every axis by default), as ``torch.amin``: NaN if any
    element is NaN, as torch. An empty input or reduced dim raises ValueError."""
    return _reduce(_OP["min"], x, dim, keepdim, stream=stream, out=out)


def amax(x, dim=(), keepdim=False, *, stream=None, out=None):
    """Largest element over ``dim``, as ``torch.amax``; NaN and empty rules as :func:`amin`."""
    return _reduce(_OP["max"], x, dim, keepdim, stream=stream, out=out)


def _extremum(op, extreme, x, dim, keepdim, stream):
    if dim is None:
        return _reduce(extreme, x, None, False, stream=stream)
    if type(dim) is not int and not hasattr(dim, "__index__"):
        raise TypeError(f"reducelab: {op.name} takes one int dim (amin/amax take a tuple)")
    values, indices = _reduce(op, x, dim, keepdim, stream=stream)
    return ValuesIndices(values, indices)


def min(x, dim=None, keepdim=False, *, stream=None):
    """As ``torch.min``: without ``dim`` the smallest element (a 0-d array); with an int ``dim``
    a (values, indices) named tuple, the index of the first smallest element (of the first NaN if
    any) along dim. The two arrays are strided views of one 16-byte-per-result buffer (call
    ``.contiguous()`` if contiguity matters)."""
    return _extremum(_OP["argmin"], _OP["min"], x, dim, keepdim, stream)


def max(x, dim=None, keepdim=False, *, stream=None):
    """As ``torch.max``: the largest element, or (values, indices) along an int ``dim``; see
    :func:`min`."""
    return _extremum(_OP["argmax"], _OP["max"], x, dim, keepdim, stream)


def argmin(x, dim=None, keepdim=False, *, stream=None):
    """Index (int64) of the first smallest element over ``dim``, as ``torch.argmin``: dim=None
    gives the flat row-major index of the view; a tuple of dims (which torch does not take) the
    flat index over those dims. The first NaN wins if there is one. The result is a strided view
    of one 16-byte-per-result buffer."""
    return _reduce(_OP["argmin"], x, dim, keepdim, stream=stream)[1]


def argmax(x, dim=None, keepdim=False, *, stream=None):
    """Index of the first largest element over ``dim``, as ``torch.argmax``; see :func:`argmin`."""
    return _reduce(_OP["argmax"], x, dim, keepdim, stream=stream)[1]


def aminmax(x, *, dim=None, keepdim=False, stream=None):
    """(min, max) over ``dim`` in one pass, a named tuple as ``torch.aminmax`` (both NaN if any
    element is NaN; ValueError when empty)."""
    return MinMax(*_reduce(_OP["aminmax"], x, dim, keepdim, stream=stream))


def dot(x, y, *, stream=None, out=None, determinism="run_to_run"):
    """Sum of x[i] * y[i] over two 1-D arrays of one dtype, shape and stride, as ``torch.dot``.
    Floating inputs give their dtype (float16/bfloat16 computed in float32); integer dots give
    int64/uint64 (torch keeps the input's integer type)."""
    det = _determinism(determinism)
    for a in (x, y):
        if len(_describe(a)[2][2]) != 1:
            raise ValueError("reducelab: dot takes 1-D arrays, as torch.dot")
    return _reduce(_OP["dot"], x, None, False, stream=stream, out=out, y=y, determinism=det)


def foreach(reduce, tensors, *, total=False, correction=1.0, ord=2.0, stream=None):
    """One result per tensor of the list ``tensors`` in one call (two kernels at most, however
    many tensors), and with ``total=True`` also the op over all of them together: what gradient
    clipping needs, as ``torch._foreach_norm`` plus the global norm::

        norms, total_norm = reducelab.foreach("norm", [p.grad for p in params], total=True)

    ``reduce`` is the name of an op that reads one array (every op but "dot"); the tensors are
    contiguous device arrays of one dtype on one device, read flat, of any lengths (empty ones
    included). Returns a 1-D array of the per-tensor results (a pair of them for argmin/argmax,
    var_mean, std_mean and aminmax, as :func:`segment_reduce`), and with ``total=True`` a tuple
    (results, total) where total is a 0-d array (a pair for the pair ops). Dtype rules as
    :func:`sum`; argmin/argmax give the index within each tensor, and the total's index counts
    through the tensors in list order. Empty tensors get the empty-segment results of
    :func:`segment_reduce`, and so does the total of a list of empty tensors.
    """
    op = _OP.get(reduce)
    if op is None:
        raise ValueError(f"reducelab: unknown reduce {reduce!r}; one of {', '.join(_OP)}")
    if op.inputs != 1:
        raise ValueError(f"reducelab: {op.name} reads two arrays; foreach takes one-array ops")
    tensors = list(tensors)
    if not tensors:
        raise ValueError("reducelab: foreach needs at least one tensor (its result dtype and "
                         "device come from the first)")
    b, first, (ptr, code, shape, strides, unit, device) = _describe(tensors[0])
    buf_name, final, _ = _spec(op, code, None)
    if b.name == "torch":
        # The common case in one pass of cheap calls (get_device() is an int; .device would
        # build a torch.device per tensor): torch tensors of one dtype and device.
        dtype, dev = first.dtype, first.get_device()
        addresses, sizes = [], []
        add_address, add_size = addresses.append, sizes.append
        for t in tensors:
            if t.dtype is not dtype or t.get_device() != dev or not t.is_contiguous():
                raise ValueError("reducelab: foreach takes contiguous tensors of one dtype and "
                                 f"device (first: {dtype} on {first.device}); got {t.dtype} on "
                                 f"{t.device}{'' if t.is_contiguous() else ', not contiguous'}")
            add_address(t.data_ptr())
            add_size(t.numel())
    else:
        addresses, sizes = [], []
        for t in tensors:
            _, t, (tptr, tcode, tshape, tstrides, tunit, tdevice) = _describe(t)
            if tcode != code or tdevice != device:
                raise ValueError("reducelab: foreach takes tensors of one dtype and device")
            _require_contiguous(tshape, tstrides, tunit, "foreach reads each tensor flat: it "
                                "must be contiguous")
            addresses.append(tptr)
            sizes.append(_count(tshape))
    s = _stream(b, first, device, stream)
    ob = _adapt.output_backend() if b is _RAW else b
    pair = op.result in _PAIRS
    count = len(tensors)
    buf = ob.empty((count + 1, 2) if pair else (count + 1,), buf_name, device)
    base = ob.address(buf)
    size = _DTYPES[buf_name]["size"] * (2 if pair else 1)  # bytes per result
    _reducelab.reduce_tensors(op.code, float(correction), float(ord), code, addresses, sizes,
                              base, base + count * size if total else 0, s, device)
    results, whole = buf[:count], buf[count]
    if not pair:
        results = results if final is None else ob.cast(results, final)
        whole = whole if final is None else ob.cast(whole, final)
        return (results, whole) if total else results

    def split(part):
        first_, second = _split(ob, op, part, final, code)
        if op.result == "value_index":
            return second if op.name.startswith("arg") else first_
        return (first_, second) if op.result == "statistic_pair" else MinMax(first_, second)

    return (split(results), split(whole)) if total else split(results)


def segment_reduce(x, reduce, *, segment_size=None, offsets=None, lengths=None, y=None,
                   correction=1.0, ord=2.0, stream=None, determinism="run_to_run"):
    """One result per segment of the 1-D contiguous array ``x`` (any contiguous array, read
    flat), in the spirit of ``torch.segment_reduce``. ``reduce`` is the name of any reducelab op
    ("sum", "mean", "min", "max", "argmin", "argmax", "dot", "var", "std", "var_mean",
    "std_mean", "norm", "logsumexp", "count_nonzero", "any", "all", "aminmax"); ``y`` is the
    second array of "dot". The segments are, exactly one of:

    - ``segment_size``: an int, consecutive segments of that many elements (``x.numel()`` must be
      a multiple of it);
    - ``offsets``: a device array of num_segments + 1 int32 or int64 offsets, segment s being
      x[offsets[s]:offsets[s + 1]] (nondecreasing, inside x: not checked on the host);
    - ``lengths``: a device array of segment lengths (int32 or int64); the offsets are made from
      it by the caller's library (a cumsum, so one or two extra launches).

    Results follow :func:`sum`'s dtype rules; argmin/argmax give int64 indices within each
    segment, min/max/aminmax values, the pairs a tuple. Empty segments never raise (unlike
    torch's, which take ``initial``): sum 0, min +inf (or the type's largest), max -inf (or the
    lowest), argmin/argmax -1, mean/var/std NaN, logsumexp -inf, any False, all True, norm 0
    (+inf for ord -inf).

    ``determinism="gpu_to_gpu"``: each segment's result has the bits of the whole-array
    gpu_to_gpu result of that segment alone, on every GPU (module notes).
    """
    op = _OP.get(reduce)
    if op is None:
        raise ValueError(f"reducelab: unknown reduce {reduce!r}; one of {', '.join(_OP)}")
    if (segment_size is not None) + (offsets is not None) + (lengths is not None) != 1:
        raise ValueError("reducelab: give exactly one of segment_size, offsets and lengths")
    det = _determinism(determinism)
    b, x, (ptr, code, shape, strides, unit, device) = _describe(x)
    n = _count(shape)
    _require_contiguous(shape, strides, unit, "segment_reduce reads x flat: it must be contiguous")
    buf_name, final, _ = _spec(op, code, None)
    if (y is None) != (op.inputs == 1):
        raise ValueError(f"reducelab: {op.name} takes {'one array' if op.inputs == 1 else 'y='}")
    yptr = _second_array(y, code, n)
    s = _stream(b, x, device, stream)
    ob = _adapt.output_backend() if b is _RAW else b
    if lengths is not None:
        offsets = _offsets_from_lengths(ob, lengths)
    pair = op.result in _PAIRS
    if segment_size is not None:
        segment_size = int(segment_size)
        if segment_size <= 0 or n % segment_size:
            raise ValueError(f"reducelab: segment_size {segment_size} does not divide the "
                             f"{n} elements of x")
        segments = n // segment_size
        buf = ob.empty((segments, 2) if pair else (segments,), buf_name, device)
        _reducelab.reduce_segments_fixed(op.code, float(correction), float(ord), code, ptr, yptr,
                                         segments, segment_size, ob.address(buf), s, device,
                                         det)
    else:
        _, offsets, (optr, ocode, oshape, _, ounit, odevice) = _describe(offsets)
        oname = _CODE_NAMES[ocode]
        if oname not in ("i32", "i64") or len(oshape) != 1 or oshape[0] < 1:
            raise TypeError("reducelab: offsets must be a 1-D int32 or int64 device array of "
                            "num_segments + 1 entries")
        segments = oshape[0] - 1
        buf = ob.empty((segments, 2) if pair else (segments,), buf_name, device)
        _reducelab.reduce_segments_ragged(op.code, float(correction), float(ord), code, ptr,
                                          yptr, segments, optr, _DTYPES[oname]["size"],
                                          ob.address(buf), s, device, det)
    if not pair:
        return buf if final is None else ob.cast(buf, final)
    first, second = _split(ob, op, buf, final, code)
    if op.result == "value_index":
        return second if op.name.startswith("arg") else first
    return (first, second) if op.result == "statistic_pair" else MinMax(first, second)


def _offsets_from_lengths(ob, lengths):
    if ob.name == "torch":
        torch = ob.torch
        offsets = torch.zeros(lengths.shape[0] + 1, dtype=torch.int64, device=lengths.device)
        torch.cumsum(lengths, 0, out=offsets[1:])
        return offsets
    cupy = ob.cupy
    offsets = cupy.zeros(lengths.shape[0] + 1, dtype=cupy.int64)
    cupy.cumsum(lengths, out=offsets[1:])
    return offsets


def item(reduce, x, y=None, *, correction=1.0, ord=2.0, stream=None, determinism="run_to_run"):
    """The whole-array reduction of the contiguous array ``x`` as a Python number (a pair for
    var_mean, std_mean and aminmax; the flat index for argmin/argmax), the fast path to a host
    value: one launch and a wait on the stream only (not the device), no result array.
    ``reducelab.item("sum", x)`` equals ``reducelab.sum(x).item()`` for float32 and the integer
    types; for float16/bfloat16 it gives the float32 sum (not rounded to 16 bits).
    ``determinism="gpu_to_gpu"``: the fixed-order result, the same bits on every GPU (module notes).
    """
    op = _OP.get(reduce)
    if op is None:
        raise ValueError(f"reducelab: unknown reduce {reduce!r}; one of {', '.join(_OP)}")
    det = _determinism(determinism)
    b, x, (ptr, code, shape, strides, unit, device) = _describe(x)
    _spec(op, code, None)  # the dtype checks
    n = _count(shape)
    _require_contiguous(shape, strides, unit, "item() reads x flat: it must be contiguous")
    yptr = _second_array(y, code, n)
    s = _stream(b, x, device, stream)
    return _reducelab.item(op.code, float(correction), float(ord), code, ptr, yptr, n, s, device,
                           det)
