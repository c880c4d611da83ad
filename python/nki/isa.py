"""nki.isa under gensweep's tracer: one call, one hardware instruction (docs/NKI.md).

Both styles: the current one (`dst=` first, nothing returned) and the older value-returning one
(no dst: the result is a new tile at the caller's line; `res += nisa.nc_matmul(a, b)`
accumulates into res). Instructions the model lacks raise `unsupported` with their name.
"""

import enum as _enum
import math as _math
import sys as _sys
import types as _types

from gensweep import tracer as _t
from gensweep.tracer import NKIError, Unsupported, caller as _caller
from nki import language as _nl


class _Enum:
    def __init__(self, name, values):
        for v in values:
            setattr(self, v, f"{name}.{v}")


engine = _Enum("engine", ("unknown", "tensor", "vector", "scalar", "gpsimd", "activation",
                          "pool", "sync", "dma"))
engine.activation = "engine.scalar"
engine.pool = "engine.gpsimd"
oob_mode = _Enum("oob_mode", ("error", "skip"))
dge_mode = _Enum("dge_mode", ("unknown", "none", "swdge", "hwdge"))
reduce_cmd = _Enum("reduce_cmd", ("idle", "reset", "reduce", "reset_reduce", "load_reduce"))
matmul_perf_mode = _Enum("matmul_perf_mode", ("none", "double_row", "double_row_gen3"))
dma_engine = _Enum("dma_engine", ("dma", "gpsimd"))

_ENGINES = {None: None, "engine.unknown": None, "engine.vector": "vector",
            "engine.scalar": "scalar", "engine.gpsimd": "gpsimd"}


def _eng(e, where):
    if e not in _ENGINES:
        raise Unsupported(f"engine {e!r} for this instruction", where=where)
    return _ENGINES[e]


def _name(op):
    return getattr(op, "__name__", op)


def _alu(op, where):
    n = _name(op)
    if n not in _t.ALU:
        raise Unsupported(f"ALU operation {n!r}", where=where)
    return _t.ALU[n]


def _out(dst, like, dtype, buffer, where):
    ctx = _t._ctx()
    if dst is not None:
        return _t.as_view(dst)
    return ctx.new_tile(like.shape, _t.dtype_of(dtype) if dtype else like.dtype, buffer, where)


def _v(x, where, what="operand"):
    if isinstance(x, _t.MatmulResult):  # a value-returning nc_matmul used as an operand
        x = x.materialize()
    v = _t.as_view(x)
    if v is None:
        raise NKIError(f"{what} must be a tile or tensor, got {x!r}", where=where)
    return v


class nc_version(_enum.IntEnum):
    """The NeuronCore version a kernel runs on, ordered: `get_nc_version() >= nc_version.gen3`
    (and `>= 3`) compare as NKI's do. gensweep's genN is NeuronCore-vN (docs/NKI.md)."""
    gen1 = 1
    gen2 = 2
    gen3 = 3
    gen4 = 4

    def __str__(self):
        return f"nc_version.{self.name}"


def get_nc_version():
    """The generation being traced, as an nc_version."""
    g = str(_t._ctx().caps.get("generation", ""))
    try:
        return nc_version[g]
    except KeyError:
        raise NKIError(f"get_nc_version: unknown generation {g!r} in the target's "
                       "capabilities", where=_caller())


# NKI 0.3's engine selectors (engine=nisa.vector_engine): the same values as engine.*
vector_engine, scalar_engine, gpsimd_engine, tensor_engine, sync_engine = (
    engine.vector, engine.scalar, engine.gpsimd, engine.tensor, engine.sync)
activation_engine, pool_engine, unknown_engine = engine.scalar, engine.gpsimd, engine.unknown


# ---- data movement --------------------------------------------------------------------------

def dma_copy(dst=None, src=None, mask=None, dge_mode=None, oob_mode=None, engine=None, name=None,
             **_):
    _nl._mask(mask)
    where = _caller()
    _t._ctx().dma(_v(dst, where, "dst"), _v(src, where, "src"), where)


def tensor_copy(dst=None, src=None, engine=None, dtype=None, mask=None, name=None, **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if src is None and dst is not None:  # older style: x = nisa.tensor_copy(src)
        dst, src = None, dst
    s = _v(src, where, "src")
    if dst is not None and dtype is not None:
        _retype(_v(dst, where, "dst"), _t.dtype_of(dtype))
    d = _out(dst, s, dtype, _t.SBUF, where)
    ctx.tensor_copy(d, s, _eng(engine, where), where)
    return d if dst is None else None


def _retype(d, dt):
    """tensor_copy(dst=t, dtype=X) into a tile declared with another dtype and not used yet:
    the tile holds X (the tutorials declare it fp32 and cast on the copy)."""
    t = d.base
    if d.is_tile and t.dtype != dt and t.last_use == t.created and d.offset == 0:
        t.dtype = dt
        t.bytes = t.free * dt.itemsize


def memset(dst, value, engine=None, name=None, **_):
    where = _caller()
    _t._ctx().memset(_v(dst, where, "dst"), value, where, _eng(engine, where))


# ---- tensor engine --------------------------------------------------------------------------

def nc_matmul(dst=None, stationary=None, moving=None, is_stationary_onezero=False,
              is_moving_onezero=False, is_transpose=False, accumulate=None, tile_position=(),
              tile_size=(), perf_mode=None, mask=None, name=None, **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if is_transpose:
        raise Unsupported("nc_matmul(is_transpose=True) (use nc_transpose)", where=where)
    tile = _pe_tile(tile_position, tile_size, ctx, where)
    if perf_mode not in (None, "none", "matmul_perf_mode.none"):
        raise Unsupported(f"nc_matmul perf_mode={perf_mode}", where=where)
    if moving is None or dst is None:
        if tile is not None:
            raise Unsupported("nc_matmul tile_position/tile_size on a value-returning matmul",
                              where=where)
    if moving is None:  # older style: nc_matmul(stationary, moving) returns the product
        st, mv = _v(dst, where, "stationary"), _v(stationary, where, "moving")
        return _t.MatmulResult(ctx, st, mv, where)
    if dst is None:  # nc_matmul(stationary=, moving=) without dst: the product, as above
        return _t.MatmulResult(ctx, _v(stationary, where, "stationary"),
                               _v(moving, where, "moving"), where)
    ctx.matmul(_v(dst, where, "dst"), _v(stationary, where), _v(moving, where), accumulate,
               where, tile=tile)


def _pe_tile(position, size, ctx, where):
    """tile_position / tile_size as (row, col, rows, cols), or None for the whole PE array
    (none given, or position (0, 0) and the array's size). Row and column tiles are 64 or 32
    (32 from NeuronCore-v3 on: the NKI ISA nc_matmul page, "Tiling mode"), at multiples of
    their size; the builder checks the rest."""
    rows = ctx.caps.get("pe_rows", ctx.caps["partitions"])
    cols = ctx.caps.get("pe_cols", rows)
    if not position and not size:
        return None
    try:
        pos = tuple(int(x) for x in position) if position else (0, 0)
        sz = tuple(int(x) for x in size) if size else (rows, cols)
    except (TypeError, ValueError):
        raise NKIError(f"nc_matmul: tile_position {position!r} / tile_size {size!r} must be "
                       "pairs of integers", where=where) from None
    if len(pos) != 2 or len(sz) != 2:
        raise NKIError(f"nc_matmul: tile_position {pos} / tile_size {sz} must be pairs",
                       where=where)
    if pos == (0, 0) and sz == (rows, cols):
        return None
    if ctx.caps["generation"] == "gen1":
        raise NKIError(f"nc_matmul: tile_size {sz}: PE array tiling needs NeuronCore-v2 or "
                       "later", where=where)
    if 32 in sz and ctx.caps["generation"] == "gen2":
        raise NKIError(f"nc_matmul: tile_size {sz}: 32-row or -column PE tiles need "
                       f"NeuronCore-v3 or later ({ctx.caps['generation']} has 64 and "
                       f"{rows})", where=where)
    return pos + sz


def nc_transpose(dst=None, data=None, engine=None, mask=None, name=None, **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if data is None:
        data, dst = dst, None
    e = _eng(engine, where) if engine not in ("engine.tensor",) else None
    if e is not None:
        raise Unsupported(f"nc_transpose on the {e} engine (the tensor engine's is modelled)",
                          where=where)
    s = _t._flat2(_v(data, where, "data"), where)
    if dst is None:
        d = ctx.new_tile((s.shape[1], s.shape[0]), s.dtype, _t.PSUM, where)
    else:
        d = _v(dst, where, "dst")
        if not (d.is_tile and d.base.buffer is _t.PSUM):
            raise Unsupported("nc_transpose into SBUF (the tensor engine writes PSUM)",
                              where=where)
    ctx.mark_read(s)
    ctx.emit("transpose", where, _t._flat2(d, where), s)
    return d if dst is None else None


# ---- vector / scalar / gpsimd ---------------------------------------------------------------

def tensor_tensor(dst=None, data1=None, data2=None, op=None, engine=None, dtype=None, mask=None,
                  name=None, **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if dst is not None and data2 is None:  # older style: tensor_tensor(data1, data2, op)
        dst, data1, data2, op = None, dst, data1, op
    a, b = _v(data1, where), _v(data2, where)
    if a.shape != b.shape:
        raise NKIError(f"tensor_tensor: shapes {a.shape} and {b.shape} differ", where=where)
    d = _out(dst, a, dtype, _t.SBUF, where)
    if _eng(engine, where) not in (None, "vector"):
        raise Unsupported(f"tensor_tensor on the {engine} engine", where=where)
    ctx.mark_read(a)
    ctx.mark_read(b)
    ctx.emit("tensor_tensor", where, _t._same(d, a, where), a, b, _alu(op, where))
    return d if dst is None else None


def scalar_tensor_tensor(dst=None, data=None, op0=None, operand0=None, op1=None, operand1=None,
                         reverse0=False, reverse1=False, reduce_cmd=None, reduce_op=None,
                         reduce_res=None, dtype=None, mask=None, name=None, **_):
    """(data op0 operand0) op1 operand1 on the vector engine: operand0 a number or a [P, 1]
    tile, operand1 a tile of data's shape; reverse0 / reverse1 swap op0's / op1's operands.
    Both styles: dst= (NKI 0.3), or keyword operands returning the result (older)."""
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if reduce_res is not None:
        raise Unsupported("scalar_tensor_tensor(reduce_res=) (the accumulated reduction)",
                          where=where)
    if data is None or op0 is None or op1 is None or operand0 is None or operand1 is None:
        raise NKIError("scalar_tensor_tensor needs data, op0, operand0, op1 and operand1",
                       where=where)
    a, b = _v(data, where, "data"), _v(operand1, where, "operand1")
    if tuple(a.shape) != tuple(b.shape):
        raise NKIError(f"scalar_tensor_tensor: data {tuple(a.shape)} and operand1 "
                       f"{tuple(b.shape)} differ", where=where)
    if a.buffer is _t.PSUM and b.buffer is _t.PSUM:
        raise NKIError("scalar_tensor_tensor: data and operand1 cannot both be in PSUM",
                       where=where)
    d = _out(dst, a, dtype, _t.SBUF, where)
    ctx.mark_read(a)
    ctx.mark_read(b)
    ctx.emit("scalar_tensor_tensor", where, _t._same(d, a, where), a, _alu(op0, where),
             ctx.scalar_operand(operand0, where), 1 if reverse0 else 0, _alu(op1, where), b,
             1 if reverse1 else 0)
    return d if dst is None else None


def nc_stream_shuffle(dst=None, src=None, shuffle_mask=None, dtype=None, mask=None, name=None,
                      **_):
    """Cross-partition movement within quadrants of 32 partitions (vector engine): dst
    partition q takes src partition 32 * (q // 32) + shuffle_mask[q % 32] (partitions counted
    from each view's first), or is left unchanged where the entry is 255. Positional operands
    in NKI 0.3's order (dst, src, shuffle_mask); the older (src, dst, ...) by keyword."""
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if "stream_shuffle" not in ctx.ops_supported:
        raise Unsupported(f"nisa.nc_stream_shuffle on {ctx.caps['generation']}", where=where)
    d, s = _v(dst, where, "dst"), _v(src, where, "src")
    if not (d.is_tile and s.is_tile):
        raise NKIError("nc_stream_shuffle: src and dst must be SBUF or PSUM tiles", where=where)
    try:
        entries = [int(e) for e in shuffle_mask]
    except (TypeError, ValueError):
        raise Unsupported("nc_stream_shuffle with a shuffle_mask that is no list of integers "
                          f"({shuffle_mask!r})", where=where) from None
    if len(entries) != 32 or any(not (0 <= e < 32 or e == 255) for e in entries):
        raise NKIError(f"nc_stream_shuffle: shuffle_mask must be 32 entries of 0..31 or 255, "
                       f"got {entries}", where=where)
    if d.dtype != s.dtype:
        raise NKIError(f"nc_stream_shuffle: dst ({d.dtype}) and src ({s.dtype}) dtypes differ",
                       where=where)
    ctx.mark_read(s)
    ctx.emit("stream_shuffle", where, d, s, *entries)


def tensor_tensor_scan(dst=None, data0=None, data1=None, initial=None, op0=None, op1=None,
                       reverse0=False, reverse1=False, dtype=None, mask=None, name=None, **_):
    """Vector-engine scan along the free dim: out[i] = (data0[i] op0 out[i-1]) op1 data1[i],
    out[-1] = initial (a float or a [P, 1] tile)."""
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if dst is not None and op1 is None:  # older style: tensor_tensor_scan(data0, data1, init, ..)
        dst, data0, data1, initial, op0, op1 = None, dst, data0, data1, initial, op0
    if "tensor_tensor_scan" not in ctx.ops_supported:
        raise Unsupported(f"nisa.tensor_tensor_scan on {ctx.caps['generation']}", where=where)
    commutes = {"add", "mul", "max", "min"}
    for rev, op in ((reverse0, op0), (reverse1, op1)):
        if rev and op is not None and _alu(op, where) not in commutes:
            raise Unsupported(f"tensor_tensor_scan with reversed operands of {_name(op)}",
                              where=where)
    a, b = _v(data0, where, "data0"), _v(data1, where, "data1")
    if a.shape != b.shape:
        raise NKIError(f"tensor_tensor_scan: shapes {a.shape} and {b.shape} differ", where=where)
    d = _out(dst, a, dtype, _t.SBUF, where)
    ctx.mark_read(a)
    ctx.mark_read(b)
    ctx.emit("tensor_tensor_scan", where, _t._same(d, a, where), a, b,
             ctx.scalar_operand(initial, where), _alu(op0, where), _alu(op1, where))
    # a scan's last output is a chain over the whole free length: the check's tolerance
    # counts it as a reduction of that length (a chain carried on through `initial` from an
    # earlier scan is counted per scan)
    ctx.reduction = max(ctx.reduction, _math.prod(a.shape[1:]))
    return d if dst is None else None


def tensor_scalar(dst=None, data=None, op0=None, operand0=None, reverse0=False, op1=None,
                  operand1=None, reverse1=False, engine=None, dtype=None, mask=None, name=None,
                  **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if dst is not None and data is not None and _t.as_view(data) is None:
        # older style: tensor_scalar(data, op0, operand0, reverse0=, op1=, operand1=, ...)
        dst, data, op0, operand0, reverse0 = None, dst, data, op0, operand0 or False
    commutes = {"add", "mul", "max", "min"}
    for rev, op in ((reverse0, op0), (reverse1, op1)):
        if rev and op is not None and _alu(op, where) not in commutes:
            raise Unsupported(f"tensor_scalar with reversed operands of {_name(op)}", where=where)
    s = _v(data, where, "data")
    d = _out(dst, s, dtype, _t.SBUF, where)
    eng = _eng(engine, where) or "vector"
    ctx.mark_read(s)
    ctx.emit("tensor_scalar", where, eng, _t._same(d, s, where), s, _alu(op0, where),
             ctx.scalar_operand(operand0, where),
             _alu(op1, where) if op1 is not None else "bypass",
             ctx.scalar_operand(operand1, where) if op1 is not None else 0.0)
    return d if dst is None else None


def activation(dst=None, op=None, data=None, bias=None, scale=1.0, reduce_op=None,
               reduce_res=None, reduce_cmd=None, dtype=None, mask=None, name=None, **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if data is None:  # older style: activation(op, data, ...)
        dst, op, data = None, dst, op
    s = _v(data, where, "data")
    d = _out(dst, s, dtype, _t.SBUF, where)
    acc = None
    if reduce_res is not None:
        if _name(reduce_op) not in ("add", None):
            raise Unsupported(f"activation reduce_op={_name(reduce_op)} (add is modelled)",
                              where=where)
        acc = _v(reduce_res, where, "reduce_res")
    ctx.activation(d, _name(op), s, where, bias=bias, scale=scale, acc=acc)
    return d if dst is None else None


def activation_reduce(dst=None, op=None, data=None, reduce_op=None, reduce_res=None, bias=None,
                      scale=1.0, **k):
    return activation(dst=dst, op=op, data=data, bias=bias, scale=scale, reduce_op=reduce_op,
                      reduce_res=reduce_res, **k)


def exponential(dst=None, src=None, max_value=0.0, reduce_res=None, reduce_cmd=None,
                reduce_init=0.0, name=None, **_):
    where = _caller()
    ctx = _t._ctx()
    if "exponential" not in ctx.ops_supported:
        raise Unsupported(f"nisa.exponential on {ctx.caps['generation']} (no vector-engine "
                          "exponential)", where=where)
    s = _v(src, where, "src")
    d = _v(dst, where, "dst")
    ctx.mark_read(s)
    ctx.emit("exponential", where, _t._same(d, s, where), s,
             ctx.scalar_operand(max_value, where),
             _v(reduce_res, where) if reduce_res is not None else "-")


def tensor_reduce(dst=None, op=None, data=None, axis=None, negate=False, keepdims=False,
                  dtype=None, mask=None, name=None, **_):
    _nl._mask(mask)
    where = _caller()
    ctx = _t._ctx()
    if data is None:  # older style: tensor_reduce(op, data, axis)
        dst, op, data, axis = None, dst, op, axis
    s = _v(data, where, "data")
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    s, k, keep = _t.reduce_view(s, axes, where, "tensor_reduce")
    nd = len(s.shape)
    alu = _alu(op, where)
    if dst is None:
        d = ctx.new_tile(keep + (1,) * k if keepdims else (keep if len(keep) > 1 else
                                                           (keep[0], 1)),
                         _t.dtype_of(dtype) if dtype else s.dtype, _t.SBUF, where)
    else:
        d = _v(dst, where, "dst")
    ctx.mark_read(s)
    import math
    ctx.reduction = max(ctx.reduction, math.prod(s.shape[nd - k:]))
    # negate=True: the result negated (one more operand; a plain reduce keeps the older form)
    ctx.emit("tensor_reduce", where, _t._flat2(d, where), s, alu, k, *((1,) if negate else ()))
    return d if dst is None else None


def tensor_partition_reduce(dst=None, op=None, data=None, name=None, **_):
    where = _caller()
    ctx = _t._ctx()
    if not ctx.gpsimd:
        raise Unsupported(f"tensor_partition_reduce on {ctx.caps['generation']} (no GpSimd)",
                          where=where)
    s = _v(data, where, "data")
    d = _v(dst, where, "dst")
    ctx.mark_read(s)
    ctx.reduction = max(ctx.reduction, s.shape[0])
    ctx.emit("partition_reduce", where, d, s, _alu(op, where))


def _one_level(pattern, what, where):
    """The [step, count] of a one-level access pattern (deeper ones are not modelled)."""
    if pattern is None or len(pattern) != 1 or len(pattern[0]) != 2:
        raise Unsupported(f"{what} with a multi-level pattern (one [step, count] level is "
                          "modelled)", where=where)
    return pattern[0]


def iota(dst=None, pattern=None, offset=0, channel_multiplier=0, expr=None, dtype=None,
         name=None, **_):
    where = _caller()
    ctx = _t._ctx()
    if not ctx.gpsimd:
        raise Unsupported(f"iota on {ctx.caps['generation']} (no GpSimd)", where=where)
    step, count = _one_level(pattern, "iota", where)
    d = _v(dst, where, "dst")
    if _nl._math.prod(d.shape[1:]) != count:
        raise NKIError(f"iota: pattern makes {count} elements per partition, dst has "
                       f"{_nl._math.prod(d.shape[1:])}", where=where)
    ctx.emit("iota", where, d, int(offset), int(channel_multiplier), int(step))


def affine_select(dst=None, pattern=None, channel_multiplier=0, on_true_tile=None,
                  on_false_value=0.0, cmp_op=None, offset=0, name=None, **_):
    where = _caller()
    ctx = _t._ctx()
    if not ctx.gpsimd:
        raise Unsupported(f"affine_select on {ctx.caps['generation']} (no GpSimd)", where=where)
    step, _count = _one_level(pattern, "affine_select", where)
    s = _v(on_true_tile, where, "on_true_tile")
    d = _v(dst, where, "dst")
    ctx.mark_read(s)
    ctx.emit("affine_select", where, d, s, _alu(cmp_op or "greater_equal", where), int(offset),
             int(channel_multiplier), int(step), repr(float(on_false_value)))


def reciprocal(dst=None, data=None, name=None, **_):
    """Modelled as the scalar engine's reciprocal activation (NKI runs it on the vector
    engine): partial, its cost is the activation's."""
    where = _caller()
    if data is None:
        dst, data = None, dst
    s = _v(data, where, "data")
    d = _out(dst, s, None, _t.SBUF, where)
    _t._ctx().activation(d, "reciprocal", s, where)
    return d if dst is None else None


def _missing(name):
    def f(*a, **k):
        raise Unsupported(f"nisa.{name}")
    f.__name__ = name
    return f


for _n in ("tensor_scalar_cumulative",
           "tensor_scalar_reduce", "select_reduce", "range_select", "tensor_copy_predicated",
           "max8", "nc_find_index8", "nc_match_replace8", "local_gather", "nc_n_gather",
           "dma_compute", "rng", "rand2", "rand_set_state",
           "rand_get_state", "set_rng_seed", "dropout", "activate2", "sequence_bounds",
           "nonzero_with_count", "quantize_mx", "nc_matmul_mx", "dma_transpose",
           "sendrecv", "register_alloc", "register_move", "register_load", "register_store",
           "bn_stats", "bn_aggr", "builtin_custom_op"):
    globals()[_n] = _missing(_n)


def core_barrier(data=None, cores=None, engine=None, name=None, **_):
    """A barrier among the cores of a logical core (LNC=2 kernels). A kernel launched without
    an SPMD grid is one instance on one core: there is nobody to wait for, so the barrier is no
    instruction (as the NKI Library's kernels expect when run with LNC=1). Within a grid the
    cross-core synchronisation is not modelled: unsupported."""
    where = _caller()
    ctx = _t._ctx()
    if ctx.grid and _math.prod(ctx.grid) > 1:
        raise Unsupported("nisa.core_barrier between the instances of an SPMD grid (cross-core "
                          "synchronisation is not modelled)", where=where)
    if data is not None and _v(data, where, "data") is None:
        raise NKIError("core_barrier: data must be a tensor", where=where)


# ---- top-k selection (vector engine): max8, nc_find_index8, nc_match_replace8 ----------------
# Defined after the table above so they replace its placeholders. Indices are int32 tiles
# (nl.uint32 is an alias: the model has no unsigned dtype); ties, NaN and values not found are
# as hwmodels/src/ops_topk.c defines them (docs/NKI.md).

def _topk_supported(name, op, where):
    ctx = _t._ctx()
    if op not in ctx.ops_supported:
        raise Unsupported(f"nisa.{name} on {ctx.caps['generation']} (no {op} instruction)",
                          where=where)
    return ctx


def max8(dst=None, src=None, dtype=None, mask=None, name=None, **_):
    """dst [P, 8] = the 8 largest values of src per partition, descending. Older style:
    max8(src=..., dtype=...) returns the new [P, 8] tile."""
    _nl._mask(mask)
    where = _caller()
    ctx = _topk_supported("max8", "max8", where)
    s = _v(src, where, "src")
    d = ctx.new_tile((s.shape[0], 8), _t.dtype_of(dtype) if dtype else s.dtype, _t.SBUF,
                     where) if dst is None else _v(dst, where, "dst")
    ctx.mark_read(s)
    ctx.emit("max8", where, d, s)
    return d if dst is None else None


def nc_find_index8(dst=None, data=None, vals=None, dtype=None, mask=None, name=None, **_):
    """dst [P, 8] (int32) = the index in data of each of the 8 vals per partition. Older style:
    nc_find_index8(data=..., vals=...) returns the new [P, 8] index tile."""
    _nl._mask(mask)
    where = _caller()
    ctx = _topk_supported("nc_find_index8", "find_index8", where)
    s = _v(data, where, "data")
    v = _v(vals, where, "vals")
    if dtype is not None and _t.dtype_of(dtype).gs != "int32":
        raise Unsupported(f"nc_find_index8 indices of dtype {dtype} (int32/uint32 is modelled)",
                          where=where)
    d = ctx.new_tile((s.shape[0], 8), _t.DTYPES["int32"], _t.SBUF, where) if dst is None \
        else _v(dst, where, "dst")
    ctx.mark_read(s)
    ctx.mark_read(v)
    ctx.emit("find_index8", where, d, s, v)
    return d if dst is None else None


def nc_match_replace8(dst=None, data=None, vals=None, imm=None, dst_idx=None, dtype=None,
                      mask=None, name=None, **_):
    """dst = data with the first occurrence of each of the 8 vals per partition replaced by
    imm; dst_idx (optional, int32 [P, 8]) receives the indices matched. Older style (no dst):
    returns the new replaced tile."""
    _nl._mask(mask)
    where = _caller()
    ctx = _topk_supported("nc_match_replace8", "match_replace8", where)
    s = _v(data, where, "data")
    v = _v(vals, where, "vals")
    if imm is None:
        raise NKIError("nc_match_replace8 needs imm (the value that replaces the matches)",
                       where=where)
    d = _out(dst, s, dtype, _t.SBUF, where)
    ctx.mark_read(s)
    ctx.mark_read(v)
    ctx.emit("match_replace8", where, _t._same(d, s, where),
             _v(dst_idx, where, "dst_idx") if dst_idx is not None else "-", s, v,
             repr(float(imm)))
    return d if dst is None else None


# ---- nki.isa.constants (NKI 0.3): the enums above as a module ----------------------------------
constants = _types.ModuleType(__name__ + ".constants",
                              "nki.isa.constants: NKI 0.3's ISA enums (the same objects as "
                              "nki.isa's).")
for _n in ("engine", "oob_mode", "dge_mode", "reduce_cmd", "matmul_perf_mode", "dma_engine",
           "nc_version"):
    setattr(constants, _n, globals()[_n])
_sys.modules[constants.__name__] = constants


# mask= executed as predication (gensweep.tracer.masked)
_t.wrap_masked(globals())
