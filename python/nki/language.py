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

NkiTensor = _t.View


def ds(start, size):
    return _DSlice(start, size)


def par_dim(n):
    """Marks a shape's partition dimension; the partition dimension is always the first here."""
    return n


def _range(start, stop=None, step=1):
    if stop is None:
        start, stop = 0, start
    return range(int(start), int(stop), int(step))


affine_range = sequential_range = static_range = dynamic_range = _range


def spmd_dim(*a, **k):
    raise Unsupported("nl.spmd_dim (launch the kernel with kernel[grid] instead)")


class _TileSize:
    def _caps(self):
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
    if mask is not None:
        raise Unsupported("mask= (predicated execution is not modelled)")


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
           "rms_norm", "prod", "var", "all", "gather_flattened", "load_transpose2d",
           "shared_constant", "shared_identity_matrix", "device_print", "fori_loop", "while_loop",
           "expand_dims", "broadcast_to"):
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
