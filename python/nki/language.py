"""nki.language under gensweep's tracer (docs/NKI.md has the operation table).

Value-returning operations allocate their result tile at the caller's line (one declaration
site each, with the allocation rule of gensweep.tracer); operations the model lacks raise
`unsupported` naming the operation and the kernel line.
"""

import builtins as _b
import math as _math

from gensweep import tracer as _t
from gensweep.kernel import program_id, num_programs, program_ndim  # noqa: F401
from gensweep.tracer import (NKIError, Unsupported, arange, mgrid, caller as _caller,  # noqa: F401
                             DSlice as _DSlice, load, store, SBUF as sbuf, PSUM as psum,
                             HBM as hbm, SHARED_HBM as shared_hbm, PRIVATE_HBM as private_hbm)

float32 = tfloat32 = _t.DTYPES["float32"]
bfloat16 = _t.DTYPES["bfloat16"]
float16 = _t.DTYPES["float16"]
float8_e4m3 = float8_e4m3fn = _t.DTYPES["float8_e4m3"]
float8_e5m2 = _t.DTYPES["float8_e5m2"]
int8 = _t.DTYPES["int8"]
int32 = _t.DTYPES["int32"]
uint32 = int32  # indices (nisa.nc_find_index8, nc_match_replace8): held as int32 by the model
bool_ = uint8 = int8
bool = bool_  # noqa: A001  (nl.bool, as NKI names it)
fp32 = float32
dtype = _t.DType
# named so that kernel files import; any use is `unsupported` by name (docs/NKI.md)
float8_e4m3fn_x4 = _t.DType("float8_e4m3fn_x4", "fp8_e4m3_x4", 4, unmodelled=True)
float8_e5m2_x4 = _t.DType("float8_e5m2_x4", "fp8_e5m2_x4", 4, unmodelled=True)
float4_e2m1fn_x4 = _t.DType("float4_e2m1fn_x4", "fp4_e2m1_x4", 2, unmodelled=True)
int16 = _t.DType("int16", "int16", 2, False, unmodelled=True)
uint16 = _t.DType("uint16", "uint16", 2, False, unmodelled=True)


class finfo:
    """nl.finfo(dtype): the limits of a float dtype (bits, max, min, tiny, eps), as numpy's."""
    _LIMITS = {"fp32": (32, 3.4028234663852886e38, 1.1754943508222875e-38, 2.0 ** -23),
               "bf16": (16, 3.3895313892515355e38, 1.1754943508222875e-38, 2.0 ** -7),
               "fp16": (16, 65504.0, 6.103515625e-05, 2.0 ** -10),
               "fp8_e4m3": (8, 240.0, 2.0 ** -6, 2.0 ** -3),
               "fp8_e5m2": (8, 57344.0, 2.0 ** -14, 2.0 ** -2)}

    def __init__(self, dt):
        d = _t.dtype_of(dt)
        if d.gs not in self._LIMITS:
            raise NKIError(f"nl.finfo({d!r}): not a float dtype", where=_caller())
        self.dtype = d
        self.bits, self.max, self.tiny, self.eps = self._LIMITS[d.gs]
        self.min = -self.max
        self.smallest_normal = self.tiny

NkiTensor = _t.View


class NKIObject:
    """NKI 0.3's base of kernel-side configuration objects (the NKI Library's configs and
    helpers derive from it, most as @dataclass). A subclass without its own __init__ takes its
    annotated fields positionally or by name; class attributes are their defaults."""

    def __init__(self, *args, **kwargs):
        fields = []
        for c in reversed(type(self).__mro__):
            for n in getattr(c, "__annotations__", {}):
                if n not in fields:
                    fields.append(n)
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} fields, "
                            f"{len(args)} given")
        for n, v in zip(fields, args):
            setattr(self, n, v)
        for n, v in kwargs.items():
            if n not in fields and not hasattr(type(self), n):
                raise TypeError(f"{type(self).__name__}() has no field {n!r}")
            setattr(self, n, v)


def ds(start, size):
    return _DSlice(start, size)


def par_dim(n):
    """Marks a shape's partition dimension; the partition dimension is always the first here."""
    return n


def _range(start, stop=None, step=1, directives=None, **_):
    if stop is None:
        start, stop = 0, start
    return _b.range(int(start), int(stop), int(step))


affine_range = sequential_range = static_range = dynamic_range = range = _range


def nc(n):
    """nl.nc(n): a launch-grid dimension over n NeuronCores (kernel[nl.nc(2)]). gensweep spreads
    every grid's instances over the generation's cores round robin (docs/NKI.md, SPMD)."""
    return int(n)


def spmd_dim(*dims):
    """nl.spmd_dim(nl.nc(2), 4): one grid dimension of the product of its parts."""
    n = 1
    for d in dims:
        n *= int(d)
    return n


tensor = _t.View


class _TileSize:
    def _caps(self):
        if _t._CTX is None and _t._CAPS is not None:  # at import, under gensweep nki run
            return _t._CAPS
        return _t._ctx().caps

    @property
    def pmax(self):
        return self._caps()["partitions"]

    @property
    def gemm_stationary_fmax(self):
        return self._caps()["pe_cols"]

    @property
    def gemm_moving_fmax(self):
        return self._caps()["moving_free_max"]

    @property
    def psum_fmax(self):
        return self._caps()["psum_bank_bytes"] // 4

    psum_bank_fmax = psum_fmax

    @property
    def psum_bank_fmax_bytes(self):
        return self._caps()["psum_bank_bytes"]

    @property
    def psum_num_banks(self):
        return self._caps()["psum_banks"]

    @property
    def sbuf_fmax_bytes(self):
        return self._caps()["sbuf_partition_bytes"]

    total_available_sbuf_size = sbuf_fmax_bytes

    @property
    def sbuf_fmax(self):
        return self._caps()["sbuf_partition_bytes"] // 4

    @property
    def sbuf_size_bytes(self):
        c = self._caps()
        return c["sbuf_partition_bytes"] * c["partitions"]

    @property
    def bn_stats_fmax(self):
        raise Unsupported("nl.tile_size.bn_stats_fmax (bn_stats is not modelled with NKI's "
                          "layout)")

    sbuf_min_align = 64

    @property
    def psum_min_align(self):
        return 4


tile_size = _TileSize()


# ---- tiles and tensors --------------------------------------------------------------------

def ndarray(shape, dtype, buffer=sbuf, name="", address=None, **_):
    ctx = _t._ctx()
    where = _caller()
    dt = _t.dtype_of(dtype)
    if isinstance(shape, int):
        shape = (shape,)
    if _t.is_hbm_buffer(buffer):
        return ctx.hbm(shape, dt, buffer, name, where)
    if buffer not in (sbuf, psum):
        raise NKIError(f"unknown buffer {buffer!r}", where=where)
    return _t.Tile(ctx, shape, dt, buffer, where, name)


def zeros(shape, dtype, buffer=sbuf, name="", **_):
    t = ndarray(shape, dtype, buffer, name)
    if isinstance(t, _t.Tile):
        if buffer is psum:
            t.zero_pending = True  # the first matmul overwrites; anything else sees a memset
        else:
            _t._ctx().memset(t.full_view(), 0.0, _caller())
    else:
        raise Unsupported("nl.zeros in HBM")
    return t


def full(shape, fill_value, dtype, buffer=sbuf, name="", **_):
    t = ndarray(shape, dtype, buffer, name)
    _t._ctx().memset(t.full_view(), float(fill_value), _caller())
    return t


def ones(shape, dtype, buffer=sbuf, name="", **_):
    return full(shape, 1.0, dtype, buffer, name)


def zeros_like(x, dtype=None, buffer=None, name=""):
    return zeros(x.shape, dtype or x.dtype, buffer or sbuf, name)


def empty_like(x, dtype=None, buffer=None, name=""):
    return ndarray(x.shape, dtype or x.dtype, buffer or sbuf, name)


def _view(x, where):
    if isinstance(x, _t.MatmulResult):  # nl.copy(nisa.nc_matmul(a, b)): the product's tile
        x = x.materialize()
    v = _t.as_view(x)
    if v is None:
        raise NKIError(f"expected a tile, got {x!r}", where=where)
    return v


def copy(x, dtype=None, mask=None):
    _mask(mask)
    ctx = _t._ctx()
    where = _caller()
    v = _view(x, where)
    out = ctx.new_tile(v.shape, _t.dtype_of(dtype) if dtype else v.dtype, sbuf, where)
    ctx.tensor_copy(out, v, None, where)
    return out


def _mask(mask):
    _t.check_mask(mask, _caller())


# ---- elementwise ----------------------------------------------------------------------------

def _binary(op):
    def f(x, y, dtype=None, mask=None, **_):
        _mask(mask)
        return _t._ctx().binary(op, x, y, _caller(), dtype)
    f.__name__ = op
    return f


add, subtract, multiply, divide, maximum, minimum, power = (
    _binary(o) for o in ("add", "subtract", "multiply", "divide", "maximum", "minimum",
                         "power"))
equal, not_equal, greater, greater_equal, less, less_equal = (
    _binary(o) for o in ("equal", "not_equal", "greater", "greater_equal", "less",
                         "less_equal"))


def _unary(name):
    def f(x, dtype=None, mask=None, **_):
        _mask(mask)
        ctx = _t._ctx()
        where = _caller()
        v = _view(x, where)
        out = ctx.new_tile(v.shape, _t.dtype_of(dtype) if dtype else v.dtype, sbuf, where)
        ctx.activation(out, name, v, where)
        return out
    f.__name__ = name
    return f


exp, log, tanh, sigmoid, relu, gelu, gelu_apprx_tanh, silu, sqrt, rsqrt, reciprocal, square, \
    abs = (_unary(n) for n in ("exp", "log", "tanh", "sigmoid", "relu", "gelu",
                               "gelu_apprx_tanh", "silu", "sqrt", "rsqrt", "reciprocal", "square",
                               "abs"))
identity = copy


def negative(x, dtype=None, mask=None):
    _mask(mask)
    return _t._ctx().binary("multiply", x, -1.0, _caller(), dtype)


def _missing(name):
    def f(*a, **k):
        raise Unsupported(f"nl.{name}")
    f.__name__ = name
    return f


for _n in ("sin", "cos", "tan", "arctan", "ceil", "floor", "trunc", "sign", "fmod", "mod",
           "erf", "erf_dx", "softplus", "mish", "gelu_dx", "gelu_apprx_sigmoid",
           "gelu_apprx_sigmoid_dx", "silu_dx", "abs_max", "abs_min", "bitwise_and", "bitwise_or",
           "bitwise_xor", "invert", "left_shift", "right_shift", "logical_and", "logical_or",
           "logical_xor", "logical_not", "where", "dropout", "rand", "random_seed", "softmax",
           "rms_norm", "prod", "var", "all", "gather_flattened",
           "shared_identity_matrix", "device_print", "fori_loop", "while_loop",
           "expand_dims", "static_cast", "loop_reduce"):
    globals()[_n] = _missing(_n)


def no_reorder():
    class _Nop:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False
    return _Nop()


# ---- reductions -----------------------------------------------------------------------------

def _reduce(alu, name):
    def f(x, axis, dtype=None, keepdims=False, mask=None, **_):
        _mask(mask)
        ctx = _t._ctx()
        where = _caller()
        v = _view(x, where)
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        v, k, keep = _t.reduce_view(v, axes, where, f"nl.{name}")
        nd = len(v.shape)
        out_shape = keep + (1,) * k if keepdims else (keep if len(keep) > 1 else (keep[0], 1))
        out = ctx.new_tile(out_shape, _t.dtype_of(dtype) if dtype else v.dtype, sbuf, where)
        ctx.mark_read(v)
        n = _math.prod(v.shape[nd - k:])
        ctx.reduction = _b.max(ctx.reduction, n)
        ov = _t._flat2(out, where)
        ctx.emit("tensor_reduce", where, ov, v, alu, k)
        if name == "mean":
            ctx.binary("multiply", out, 1.0 / n, where, dst=out)
        return out
    f.__name__ = name
    return f


sum = _reduce("add", "sum")
max = _reduce("max", "max")
min = _reduce("min", "min")
mean = _reduce("add", "mean")


# ---- tensor engine ----------------------------------------------------------------------------

def matmul(x, y, transpose_x=False, mask=None):
    """x [K, M] (transpose_x) or [M, K] times y [K, N] -> a PSUM tile [M, N] in fp32."""
    _mask(mask)
    ctx = _t._ctx()
    where = _caller()
    vx, vy = _view(x, where), _view(y, where)
    if not transpose_x:
        vx = transpose(vx)
        s = ctx.new_tile(vx.shape, _view(x, where).dtype, sbuf, where)
        ctx.tensor_copy(s, vx, None, where)
        vx = s
    vx, vy = _to_sbuf(ctx, vx, where), _to_sbuf(ctx, vy, where)
    out = ctx.new_tile((vx.shape[-1], vy.shape[-1]), float32, psum, where)
    ctx.matmul(out, vx, vy, False, where)
    return out


def _to_sbuf(ctx, v, where):
    if v.is_tile and v.base.buffer is sbuf:
        return v
    s = ctx.new_tile(v.shape, v.dtype, sbuf, where)
    if v.is_tile:
        ctx.tensor_copy(s, v, None, where)
    else:
        ctx.dma(s, v, where)
    return s


def transpose(x, dtype=None, mask=None):
    """The tensor engine's transpose of a [P, F] tile into a PSUM tile [F, P]."""
    _mask(mask)
    ctx = _t._ctx()
    where = _caller()
    v = _to_sbuf(ctx, _view(x, where), where)
    v = _t._flat2(v, where)
    out = ctx.new_tile((v.shape[1], v.shape[0]), _t.dtype_of(dtype) if dtype else v.dtype, psum,
                       where)
    ctx.mark_read(v)
    ctx.emit("transpose", where, out, v)
    return out


# ---- nki.language.constants (older kernels: `from ...language.constants import sizeinbytes`) ---

def _sizeinbytes(dtype):
    return _t.dtype_of(dtype).itemsize


import sys as _sys  # noqa: E402
import types as _types  # noqa: E402

constants = _types.ModuleType(__name__ + ".constants", "nki.language.constants")
constants.sizeinbytes = _sizeinbytes
_sys.modules[constants.__name__] = constants


# ---- older forms still in the public samples ----------------------------------------------

def shared_constant(constant, dtype=None, **_):
    """An HBM tensor holding a numpy array's values (nl.shared_constant(np.identity(128), ...)):
    an input of the program whose data the front end writes once, content-addressed, under
    $XDG_CACHE_HOME/gensweep/nki-constants (so a kept program stays valid)."""
    import hashlib
    import os
    import numpy as np
    ctx = _t._ctx()
    where = _caller()
    try:
        a = np.ascontiguousarray(np.asarray(constant, dtype=np.float64), dtype="<f8")
    except (TypeError, ValueError) as e:
        raise NKIError(f"nl.shared_constant: not an array of numbers ({e})", where=where)
    if a.ndim < 1 or a.ndim > 4 or a.size == 0:
        raise NKIError(f"nl.shared_constant: shape {a.shape} (1 to 4 dims, not empty)",
                       where=where)
    dt = _t.dtype_of(dtype) if dtype is not None else _t.dtype_of(np.asarray(constant).dtype.name
                                                                  if np.asarray(constant).dtype.name
                                                                  != "float64" else "float32")
    key = hashlib.sha256(a.tobytes() + repr(a.shape).encode()).hexdigest()[:32]
    consts = ctx.__dict__.setdefault("constants", {})
    if (key, dt.gs) in consts:
        return consts[(key, dt.gs)]
    d = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"), "gensweep", "nki-constants")
    path = os.path.join(d, key + ".f64")
    try:
        if not os.path.exists(path):
            os.makedirs(d, exist_ok=True)
            tmp = f"{path}.{os.getpid()}"
            a.tofile(tmp)
            os.replace(tmp, path)
    except OSError as e:
        raise NKIError(f"nl.shared_constant: cannot write its data under {d}: {e.strerror}",
                       where=where)
    t = _t.HbmTensor(ctx, f"const{len(consts)}", a.shape, dt, "in")
    t.data_path = path
    t.read = True
    ctx.tensors.append(t)
    consts[(key, dt.gs)] = t
    return t


def load_transpose2d(src, dtype=None, mask=None, **_):
    """nl.load_transpose2d(hbm[A, B]) -> an SBUF tile [B, A]: one DMA with a transposed
    access pattern (costed as the DMA of those elements; the DMA engine's 2-D transpose
    throughput is not modelled apart)."""
    _mask(mask)
    ctx = _t._ctx()
    where = _caller()
    v = _view(src, where)
    if v.is_tile:
        raise NKIError("nl.load_transpose2d loads from HBM; this is a tile", where=where)
    if len(v.shape) != 2:
        raise NKIError(f"nl.load_transpose2d of a {len(v.shape)}-d view (2-d only)",
                       where=where)
    vt = _t.View(v.base, v.offset, [v.axes[1], v.axes[0]], v.p0)
    out = ctx.new_tile(vt.shape, _t.dtype_of(dtype) if dtype else v.dtype, sbuf, where)
    ctx.dma(out, vt, where)
    return out


def broadcast_to(x, shape):
    """nl.broadcast_to(t, shape) / t.broadcast_to(shape) (gensweep.tracer.broadcast_to)."""
    return _t.broadcast_to(x, shape, _caller())


# mask= executed as predication (gensweep.tracer.masked)
_t.wrap_masked(globals())
