"""The tracer behind gensweep's nki.language / nki.isa (docs/NKI.md).

Calling an NKI kernel with tensor handles runs its Python body: loops run, and every language or
ISA call records builder instructions (gs/kernel.h) with the kernel's own file:line. After the
trace, tiles get their buffers (the allocation rule below) and the program is written as a .gsk
file (harness/run/nki_prog.h) that `gensweep` replays through the same job pipeline as a C kernel.

Allocation rule (NKI's modulo allocation, written down in docs/NKI.md): every ndarray/tile
declaration site (file:line, memory) is a pool of rotating buffers; the k-th tile of a site
takes buffer k mod d. d is the smallest depth for which no tile is still used when its buffer is
taken again, raised to the preferred depth (2: double buffering) when the site allocates more
than one tile, and lowered back to the smallest safe depth when the kernel would not fit.
"""

import math
import os
import re
import sys

_PKG_DIRS = tuple(
    os.path.dirname(os.path.abspath(p)) + os.sep
    for p in (__file__, os.path.join(os.path.dirname(__file__), "..", "nki", "x"),
              os.path.join(os.path.dirname(__file__), "..", "neuronxcc", "x")))

PREFERRED_DEPTH = 2
DEFAULT_INSTRUCTION_CAP = 4_000_000


class NKIError(Exception):
    """An error in the kernel, at its file:line. status: invalid, unsupported, does-not-fit."""

    def __init__(self, message, status="invalid", where=None):
        super().__init__(message)
        self.status = status
        self.where = where or caller()


class Unsupported(NKIError):
    def __init__(self, message, where=None):
        super().__init__(message, "unsupported", where)


def caller():
    """(file, line) of the innermost frame outside the front end: the kernel's line."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_DIRS):
            return (fn, f.f_lineno)
        f = f.f_back
    return ("<unknown>", 0)


# ---- dtypes -------------------------------------------------------------------------------

class DType:
    """An NKI dtype. numpy (Debian's) has no bfloat16 or fp8: values cross into the model as
    float64 and the model rounds them with its own converters; numpy only ever sees float64."""

    def __init__(self, name, gs, size, is_float=True, unmodelled=False):
        self.name, self.gs, self.itemsize, self.is_float = name, gs, size, is_float
        self.unmodelled = unmodelled  # a name kernels may mention; using it is unsupported

    def __repr__(self):
        return "nl." + self.name

    def __eq__(self, other):
        return isinstance(other, DType) and other.gs == self.gs

    def __hash__(self):
        return hash(self.gs)


DTYPES = {
    "float32": DType("float32", "fp32", 4), "bfloat16": DType("bfloat16", "bf16", 2),
    "float16": DType("float16", "fp16", 2), "float8_e4m3": DType("float8_e4m3", "fp8_e4m3", 1),
    "float8_e5m2": DType("float8_e5m2", "fp8_e5m2", 1),
    "int8": DType("int8", "int8", 1, False), "int32": DType("int32", "int32", 4, False),
}
_BY_GS = {d.gs: d for d in DTYPES.values()}
_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "tfloat32": "float32",
            "fp8_e4m3": "float8_e4m3", "fp8_e5m2": "float8_e5m2", "float8_e4m3fn": "float8_e4m3"}


def dtype_of(x):
    """An NKI dtype from a DType, a name, or a numpy dtype."""
    if isinstance(x, DType):
        if x.unmodelled:
            raise Unsupported(f"dtype {x.name} (not modelled by the front end)")
        return x
    if isinstance(x, type):  # a numpy scalar type: dtype=np.float32
        x = x.__name__
    name = getattr(x, "name", None) if not isinstance(x, str) else x
    if name is None:
        name = str(x)
    name = _ALIASES.get(name, name)
    if name in DTYPES:
        return DTYPES[name]
    if name in ("float64",):
        return DTYPES["float32"]
    raise NKIError(f"unsupported dtype {x!r}", "unsupported")


# ---- memory spaces ------------------------------------------------------------------------

class Buffer:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "nl." + self.name

    def __getitem__(self, _):  # nl.sbuf.mod_alloc(...)[...] style accessors fall through
        return self

    def mod_alloc(self, *a, **k):  # nki.compiler placements: accepted, placed by our own rule
        return self

    alloc = auto_alloc = mod_alloc

    def view(self, *a, **k):
        return self


SBUF, PSUM, HBM, SHARED_HBM, PRIVATE_HBM = (Buffer(n) for n in
                                            ("sbuf", "psum", "hbm", "shared_hbm", "private_hbm"))


def is_hbm_buffer(b):
    return b in (HBM, SHARED_HBM, PRIVATE_HBM)


# ---- index expressions --------------------------------------------------------------------

class Var:
    """One index variable: extent, and its axis in a broadcast grid of `rank` axes."""
    __slots__ = ("extent", "axis", "rank")

    def __init__(self, extent, axis=0, rank=1):
        self.extent, self.axis, self.rank = extent, axis, rank


class IndexExpr:
    """const + sum(coeff * var): an affine index expression (nl.arange, nl.mgrid)."""
    __slots__ = ("const", "terms")

    def __init__(self, const=0, terms=None):
        self.const, self.terms = const, terms or {}

    @staticmethod
    def _lift(v):
        if isinstance(v, IndexExpr):
            return v
        if isinstance(v, int) or (hasattr(v, "__index__") and not isinstance(v, float)):
            return IndexExpr(int(v))
        raise NKIError(f"index expressions are affine in integers; got {v!r}")

    def __add__(self, o):
        o = self._lift(o)
        t = dict(self.terms)
        for v, c in o.terms.items():
            t[v] = t.get(v, 0) + c
        return IndexExpr(self.const + o.const, {v: c for v, c in t.items() if c})

    __radd__ = __add__

    def __neg__(self):
        return IndexExpr(-self.const, {v: -c for v, c in self.terms.items()})

    def __sub__(self, o):
        return self + (-self._lift(o))

    def __rsub__(self, o):
        return self._lift(o) + (-self)

    def __mul__(self, o):
        if isinstance(o, IndexExpr):
            if o.terms and self.terms:
                raise NKIError("an index expression may not multiply two index variables")
            if not o.terms:
                o = o.const
            else:
                return o * self
        if not isinstance(o, int):
            o = int(o)
        return IndexExpr(self.const * o, {v: c * o for v, c in self.terms.items() if c * o})

    __rmul__ = __mul__

    def __floordiv__(self, o):
        if self.terms:
            raise Unsupported("a division of an index variable (only affine index expressions)")
        return IndexExpr(self.const // o)

    def __getitem__(self, key):
        """nl.arange(n)[:, None] places the variable on an axis of a broadcast grid."""
        if not isinstance(key, tuple):
            key = (key,)
        if len(self.terms) != 1:
            raise NKIError("only a plain nl.arange can be placed on a grid axis")
        (v, c), = self.terms.items()
        axes = [i for i, k in enumerate(key) if k is not None]
        if len(axes) != 1:
            raise NKIError("nl.arange(n)[...]: exactly one ':' among the None axes")
        nv = Var(v.extent, axes[0], len(key))
        return IndexExpr(self.const, {nv: c})

    # comparisons make masks (mask=(i * 128 + i_p < n)): see Mask
    def _cmp(self, o, op):
        d = self - self._lift(o)
        lo, hi = d.bounds()
        always = {"lt": hi < 0, "le": hi <= 0, "gt": lo > 0, "ge": lo >= 0}[op]
        never = {"lt": lo >= 0, "le": lo > 0, "gt": hi <= 0, "ge": hi < 0}[op]
        ranges = None
        if len(d.terms) == 1:  # c*x + k op 0, x in [0, extent): an interval of x
            (v, c), = d.terms.items()
            k = d.const
            # as c*x <= b (le) or c*x >= b (ge)
            kind, b = {"lt": ("le", -k - 1), "le": ("le", -k), "gt": ("ge", -k + 1),
                       "ge": ("ge", -k)}[op]
            floor_, ceil_ = b // c, -((-b) // c)
            xlo, xhi = 0, v.extent - 1
            if (kind == "le") == (c > 0):
                xhi = min(xhi, floor_)
            else:
                xlo = max(xlo, ceil_)
            ranges = {v: (xlo, xhi)}
        elif not d.terms:
            ranges = {}
        return Mask(always, never, ranges)

    def __lt__(self, o): return self._cmp(o, "lt")
    def __le__(self, o): return self._cmp(o, "le")
    def __gt__(self, o): return self._cmp(o, "gt")
    def __ge__(self, o): return self._cmp(o, "ge")

    def bounds(self):
        lo = hi = self.const
        for v, c in self.terms.items():
            span = c * (v.extent - 1)
            lo, hi = (lo + span, hi) if span < 0 else (lo, hi + span)
        return lo, hi


class Mask:
    """A mask= predicate over index expressions: true for every index (always), for none
    (never), or, when it is a conjunction of comparisons of one index variable each, for an
    interval of each variable (ranges: Var -> (lo, hi), inclusive). An operation under such a
    mask runs on its operands restricted to those intervals (Ctx.emit): exactly what the
    predicated instruction computes and writes. Any other mask (two variables in one
    comparison, a disjunction) is unsupported at the kernel's line."""
    __slots__ = ("always", "never", "ranges")

    def __init__(self, always, never, ranges=None):
        self.always, self.never = always, never
        self.ranges = {} if always else ranges

    def __and__(self, o):
        o = _as_mask(o)
        if self.always or o.never:
            return o
        if o.always or self.never:
            return self
        r = None
        if self.ranges is not None and o.ranges is not None:
            r = dict(self.ranges)
            for v, (lo, hi) in o.ranges.items():
                a, b = r.get(v, (lo, hi))
                r[v] = (max(a, lo), min(b, hi))
        never = r is not None and any(lo > hi for lo, hi in r.values())
        return Mask(False, never, r)

    __rand__ = __and__

    def __or__(self, o):
        o = _as_mask(o)
        if self.always or o.never:
            return self
        if o.always or self.never:
            return o
        return Mask(False, False, None)

    __ror__ = __or__

    def __bool__(self):
        raise NKIError("a mask is not a Python bool (use it as mask=, combine with & and |)")


def _as_mask(m):
    if isinstance(m, Mask):
        return m
    if isinstance(m, bool):
        return Mask(m, not m)
    raise NKIError(f"mask: expected comparisons of index expressions, got {m!r}")


def check_mask(mask, where=None):
    """mask= of an operation: None or always true runs unmasked; a mask the operation's
    wrapper (masked) installed runs predicated; anything else is unsupported."""
    if mask is None:
        return
    m = _as_mask(mask)
    if m.always:
        return
    ctx = _CTX
    if ctx is not None and ctx.mask_src is mask:
        return
    raise Unsupported("mask= here (predicated execution is modelled for masks given by name "
                      "to nl.* / nisa.* operations)", where=where)


def mask_of(mask, where):
    """The Mask of a mask= argument, checked to be one the model executes."""
    m = _as_mask(mask)
    if not m.always and not m.never and m.ranges is None:
        raise Unsupported("mask= that is not a conjunction of comparisons of one index "
                          "variable each (e.g. i_p + i_f < n, or |): predication by such a mask "
                          "is not modelled", where=where)
    return m


def masked(fn):
    """fn with its mask= keyword executed: the operation's instructions run on operands
    restricted to the mask's intervals (Ctx.emit), none when the mask is never true."""
    import functools

    @functools.wraps(fn)
    def w(*a, **k):
        mask = k.get("mask")
        if mask is None or _CTX is None or isinstance(mask, bool) and mask:
            return fn(*a, **k)
        ctx = _CTX
        m = mask_of(mask, caller())
        if m.always:
            k["mask"] = None
            return fn(*a, **k)
        prev = ctx.mask, ctx.mask_src
        ctx.mask, ctx.mask_src = m, mask
        try:
            return fn(*a, **k)
        finally:
            ctx.mask, ctx.mask_src = prev
    w._masked = True
    return w


def wrap_masked(ns):
    """Every function of a module namespace that takes mask=, wrapped by masked()."""
    import inspect
    for name, f in list(ns.items()):
        if name.startswith("_") or not inspect.isfunction(f) or getattr(f, "_masked", False):
            continue
        try:
            params = inspect.signature(f).parameters
        except (TypeError, ValueError):
            continue
        if "mask" in params:
            w = masked(f)
            w._masked = True
            ns[name] = w


def restrict(v, ranges, where):
    """View v restricted to a mask's intervals: an axis made by a mask variable (v.vars), or,
    for a view without them, the axis at the variable's grid position when the ranks agree; a
    size-1 axis there is a broadcast operand and stays whole."""
    if v.oob is not None:  # in range once the mask's intervals bound its variables?
        exprs, sizes, msg, at = v.oob
        if exprs is None:  # an .ap() pattern outside its tensor: no mask brings it back in
            raise NKIError(msg, where=at)
        for e, n in zip(exprs, sizes):
            lo = hi = e.const
            for var, c in e.terms.items():
                a, b = ranges.get(var, (0, var.extent - 1))
                lo, hi = lo + min(c * a, c * b), hi + max(c * a, c * b)
            if lo < 0 or hi >= n:
                raise NKIError(msg + " (not excluded by the operation's mask=)", where=at)
    axes, off, p0 = list(v.axes), v.offset, v.p0
    for var, (lo, hi) in ranges.items():
        ax = None
        if v.vars is not None:
            if var in v.vars:
                ax = v.vars.index(var)
        elif var.rank == len(axes):
            n = axes[var.axis][0]
            if n == var.extent:
                ax = var.axis
            elif n != 1:
                raise Unsupported(f"a mask variable of extent {var.extent} on an operand axis of "
                                  f"size {n}", where=where)
        if ax is None:
            continue
        n, st = axes[ax]
        if ax == 0 and v.is_tile:
            p0 += lo
        else:
            off += lo * st
        axes[ax] = (hi - lo + 1, st)
    return View(v.base, off, axes, p0)


def arange(start, stop=None, step=1):
    if stop is None:
        start, stop = 0, start
    n = max(0, (stop - start + step - 1) // step) if step > 0 else 0
    if n <= 0:
        raise NKIError(f"nl.arange({start}, {stop}, {step}) is empty")
    return IndexExpr(start, {Var(n): step})


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        out = []
        for i, s in enumerate(key):
            if not isinstance(s, slice):
                raise NKIError("nl.mgrid takes slices, e.g. nl.mgrid[0:128, 0:512]")
            start, stop, step = s.start or 0, s.stop, s.step or 1
            n = (stop - start + step - 1) // step
            out.append(IndexExpr(start, {Var(n, i, len(key)): step}))
        return _Grid(out) if len(out) > 1 else out[0]


class _Grid(tuple):
    """nl.mgrid[...] of two or more axes: a tuple, with the older names of its axes (`.p` the
    partition index, `.x` the free one; `.y`, `.z` the next ones)."""

    p = property(lambda self: self[0])
    x = property(lambda self: self[1])
    y = property(lambda self: self[2] if len(self) > 2 else _no_axis("y"))
    z = property(lambda self: self[3] if len(self) > 3 else _no_axis("z"))


def _no_axis(name):
    raise NKIError(f"this nl.mgrid has no .{name} axis")


mgrid = _MGrid()


class DSlice:
    """nl.ds(start, size): a dynamic slice (start may be an expression of loop variables)."""

    def __init__(self, start, size):
        self.start, self.size = start, size


# ---- tensors, tiles and views -------------------------------------------------------------

class HbmTensor:
    """A tensor in device memory: a kernel argument or an nl.ndarray in an HBM buffer."""

    def __init__(self, ctx, name, shape, dtype, kind):
        self.ctx, self.name, self.shape, self.dtype, self.kind = ctx, name, tuple(shape), dtype, kind
        self.read = self.written = False
        self.id = None  # assigned when the program is written
        self.buffer = HBM  # the memory it lives in (x.buffer == nl.sbuf tests: NKI 0.3)

    @property
    def ndim(self):
        return len(self.shape)

    def full_view(self):
        """The whole tensor (views are never changed in place, so one is kept)."""
        fv = self.__dict__.get("_fv")
        if fv is None:
            strides, s = [], 1
            for d in reversed(self.shape):
                strides.append(s)
                s *= d
            fv = self._fv = View(self, 0, [(n, st) for n, st in zip(self.shape, reversed(strides))])
        return fv

    def __getitem__(self, key):
        return self.full_view()[key]

    def __setitem__(self, key, value):
        store(self[key], value)

    def reshape(self, shape):
        shape = tuple(shape)
        if math.prod(shape) != math.prod(self.shape):
            raise NKIError(f"reshape {self.shape} -> {shape}: element counts differ")
        alias = HbmTensor.__new__(HbmTensor)
        alias.__dict__.update(self.__dict__)
        alias.__dict__.pop("_fv", None)
        alias.shape = shape
        alias._base = getattr(self, "_base", self)
        return alias

    def __repr__(self):
        return f"<hbm tensor {self.name} {self.shape} {self.dtype}>"


class Tile:
    """One SBUF/PSUM tile: [partitions x free...] of one dtype, from a declaration site."""

    def __init__(self, ctx, shape, dtype, buffer, where, name=""):
        shape = tuple(int(s) for s in shape)
        if not shape:
            raise NKIError("a tile needs at least a partition dimension", where=where)
        if any(s <= 0 for s in shape):
            raise NKIError(f"tile shape {shape} has an empty dimension", where=where)
        if shape[0] > ctx.caps["partitions"]:
            raise NKIError(
                f"partition dimension {shape[0]} > {ctx.caps['partitions']} "
                f"(nl.tile_size.pmax on {ctx.caps['generation']})", where=where)
        self.ctx, self.shape, self.dtype, self.buffer, self.name = ctx, shape, dtype, buffer, name
        self.where, self.core = where, ctx.core
        self.free = math.prod(shape[1:]) if len(shape) > 1 else 1
        self.bytes = self.free * dtype.itemsize
        self.id = len(ctx.tiles)
        self.created = len(ctx.ops)
        self.last_use = self.created
        self.zero_pending = False
        self.mm_written = set()  # PSUM regions a matmul has written (accumulate=None rule)
        self.acc_len = {}
        self._fv = None
        ctx.tiles.append(self)
        ctx.ops.append(("tile", self))

    @property
    def ndim(self):
        return len(self.shape)

    def full_view(self):
        """The whole tile (kept: views are never changed in place)."""
        fv = self._fv
        if fv is None:
            strides, s = [], 1
            for d in reversed(self.shape[1:]):
                strides.append(s)
                s *= d
            fv = self._fv = View(self, 0, [(self.shape[0], 1)] +
                                 [(n, st) for n, st in zip(self.shape[1:], reversed(strides))])
        return fv

    def __getitem__(self, key):
        return self.full_view()[key]

    def __setitem__(self, key, value):
        assign(self[key], value)

    # arithmetic on whole tiles (older NKI: c = a + b)
    def __add__(self, o): return self.full_view() + o
    def __radd__(self, o): return self.full_view() + o
    def __sub__(self, o): return self.full_view() - o
    def __rsub__(self, o): return self.full_view().__rsub__(o)
    def __mul__(self, o): return self.full_view() * o
    def __rmul__(self, o): return self.full_view() * o
    def __truediv__(self, o): return self.full_view() / o

    def __iadd__(self, o):
        self.full_view().__iadd__(o)
        return self

    def broadcast_to(self, shape):
        return broadcast_to(self, shape, caller())

    def __repr__(self):
        return f"<{self.buffer.name} tile {self.shape} {self.dtype}>"


class View:
    """A region of a tile or HBM tensor: offset (elements) and axes [(size, stride)].

    For a tile, axis 0 is the partition axis (stride in partitions: 1) and offset counts
    elements within a partition; p0 is the first partition. For HBM, every stride counts
    elements and axis 0 is the one DMA maps to partitions.
    """
    __slots__ = ("base", "offset", "axes", "p0", "vars", "oob")

    def __init__(self, base, offset, axes, p0=0, vars=None, oob=None):
        self.base, self.offset, self.axes, self.p0 = base, offset, axes, p0
        self.vars = vars  # the index variable of each axis, for views made by index expressions
        # an index beyond the tensor, allowed until the operation's mask= excludes it (NKI's
        # tail tiles): (index expressions, dimension sizes, error, where), checked in restrict
        self.oob = oob

    @property
    def shape(self):
        return tuple(n for n, _ in self.axes)

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def ndim(self):
        return len(self.axes)

    @property
    def is_tile(self):
        return isinstance(self.base, Tile)

    # -- indexing --
    def __getitem__(self, key):
        where = caller()
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(self.axes) - len(key) + 1) + key[i + 1:]
        if len(key) > len(self.axes):
            raise NKIError(f"{len(key)} indices for a {len(self.axes)}-d tensor", where=where)
        key = key + (slice(None),) * (len(self.axes) - len(key))
        if any(isinstance(k, IndexExpr) for k in key):
            return self._advanced(key, where)
        offset, p0, axes = self.offset, self.p0, []
        for i, (k, (n, st)) in enumerate(zip(key, self.axes)):
            if isinstance(k, DSlice):
                start = _int(k.start, where)
                k = slice(start, start + _int(k.size, where))
            if isinstance(k, slice):
                start, stop, step = _slice_ints(k, n, where)
                if step <= 0:
                    raise Unsupported("a slice with a negative step", where=where)
                if start < 0 or stop > n or start >= stop:
                    raise NKIError(f"index {start}:{stop} out of range for dimension {i} of "
                                   f"size {n}", where=where)
                cnt = (stop - start + step - 1) // step
                if i == 0 and self.is_tile:
                    if step != 1:
                        raise Unsupported("a strided partition slice of a tile", where=where)
                    p0 += start
                else:
                    offset += start * st
                axes.append((cnt, st * step))
            else:
                idx = _int(k, where)
                if idx < 0 or idx >= n:
                    raise NKIError(f"index {idx} out of range for dimension {i} of size {n}",
                                   where=where)
                if i == 0 and self.is_tile:
                    p0 += idx
                    axes.append((1, 1))  # a partition index keeps a 1-partition axis
                else:
                    offset += idx * st
        if not axes:
            axes = [(1, 1)]
        return View(self.base, offset, axes, p0)

    def _advanced(self, key, where):
        exprs = [IndexExpr._lift(k) if not isinstance(k, slice) else k for k in key]
        if any(isinstance(e, slice) for e in exprs):
            raise Unsupported("an index mixing slices with nl.arange / nl.mgrid expressions",
                              where=where)
        rank = 1
        for e in exprs:
            for v in e.terms:
                rank = max(rank, v.rank)
        by_axis = {}
        for e in exprs:
            for v in e.terms:
                ax = v.axis if v.rank == rank else (rank - 1 if v.rank == 1 else None)
                if ax is None:
                    raise NKIError("index variables from grids of different ranks", where=where)
                other = by_axis.get(ax)
                if other is not None and other is not v:
                    if other.extent != v.extent:
                        raise NKIError("two index variables of different extents on one axis",
                                       where=where)
                    raise Unsupported("two index variables on one axis", where=where)
                by_axis[ax] = v
        offset, p0, oob = self.offset, self.p0, None
        for i, (e, (n, st)) in enumerate(zip(exprs, self.axes)):
            lo, hi = e.bounds()
            if (lo < 0 or hi >= n) and oob is None:
                oob = (exprs, [a[0] for a in self.axes],
                       f"index range [{lo}, {hi}] out of range for dimension {i} of size {n}",
                       where)
            if i == 0 and self.is_tile:
                p0 += e.const
            else:
                offset += e.const * st
        axes = []
        for ax in range(rank):
            v = by_axis.get(ax)
            if v is None:
                axes.append((1, 1))
                continue
            stride = 0
            for i, (e, (n, st)) in enumerate(zip(exprs, self.axes)):
                c = e.terms.get(v, 0)
                if c and i == 0 and self.is_tile:
                    if c != 1 or ax != 0:
                        raise Unsupported("a tile's partition index must be a plain index "
                                          "variable on the first axis", where=where)
                    continue
                stride += c * st
            if ax == 0 and self.is_tile:
                stride = 1
                if not exprs[0].terms.get(v):
                    raise Unsupported("the partition axis must index the tile's partition "
                                      "dimension", where=where)
            elif self.is_tile and exprs[0].terms.get(v):
                raise Unsupported("a partition index variable used in a free dimension",
                                  where=where)
            axes.append((v.extent, stride))
        return View(self.base, offset, axes, p0, tuple(by_axis.get(ax) for ax in range(rank)),
                    oob)

    def __setitem__(self, key, value):
        assign(self[key], value)

    # -- NKI 0.3 views (NkiTensor): new patterns over the same storage, no instruction --
    @property
    def storage_offset(self):
        """The view's first element in its storage (a tile's storage flattened partition-major,
        as NKI's access patterns count it)."""
        return self.p0 * self.base.free + self.offset if self.is_tile else self.offset

    @property
    def strides(self):
        if self.is_tile:
            return (self.base.free,) + tuple(st for _, st in self.axes[1:])
        return tuple(st for _, st in self.axes)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def buffer(self):
        return self.base.buffer

    def get_pattern(self):
        return [[st, n] for st, n in zip(self.strides, self.shape)]

    def is_contiguous(self):
        want = 1
        for n, st in reversed(list(zip(self.shape, self.strides))):
            if n != 1 and st != want:
                return False
            want *= n
        return True

    def ap(self, *args, pattern=None, offset=None, scalar_offset=None, vector_offset=None,
           indirect_dim=0, dtype=None, **_):
        """tensor.ap(pattern=[[step, num], ...], offset=): NKI's access pattern over the
        tensor's storage (flattened; a tile's partition-major), not composed with this view's
        pattern; offset None keeps this view's first element."""
        where = caller()
        args = list(args)
        if pattern is None and args:
            if isinstance(args[0], (list, tuple)) and args[0] and \
                    not isinstance(args[0][0], (list, tuple)):
                pattern = []  # t.ap([step, num], [step, num], ...)
                while args and isinstance(args[0], (list, tuple)):
                    pattern.append(args.pop(0))
            else:
                pattern = args.pop(0)
        if offset is None and args:
            offset = args.pop(0)
        if args:
            raise NKIError(f"ap: unexpected positional arguments {args!r}", where=where)
        if scalar_offset is not None or vector_offset is not None:
            raise Unsupported("ap(scalar_offset= / vector_offset=): a dynamic (runtime) offset",
                              where=where)
        if dtype is not None and dtype_of(dtype) != self.dtype:
            raise Unsupported(f"ap(dtype={dtype_of(dtype)!r}) on a {self.dtype!r} tensor: a "
                              "reinterpreting view", where=where)
        if not isinstance(pattern, (list, tuple)) or not pattern:
            raise NKIError(f"ap: pattern must be a non-empty list of [step, num], got "
                           f"{pattern!r}", where=where)
        ent = []
        for e in pattern:
            if not isinstance(e, (list, tuple)) or len(e) != 2:
                raise NKIError(f"ap: pattern entry {e!r} is not [step, num]", where=where)
            step, num = _int(e[0], where), _int(e[1], where)
            if num < 1:
                raise NKIError(f"ap: pattern entry {list(e)!r} has num < 1", where=where)
            ent.append((step, num))
        off = self.storage_offset if offset is None else _int(offset, where)
        if off < 0:
            raise NKIError(f"ap: offset {off} is negative", where=where)
        if not self.is_tile:
            total = math.prod(self.base.shape)
            axes = [(n, st) for st, n in ent]
            lo, hi = _reach(off, axes)
            oob = None
            if lo < 0 or hi >= total:  # an error when an instruction uses it (see below)
                oob = (None, None, f"ap: pattern {[list(e) for e in ent]} at offset {off} "
                       f"reaches elements [{lo}, {hi}] of a {total}-element tensor "
                       f"{self.base.shape}", where)
            return View(self.base, off, axes, oob=oob)
        F, P = self.base.free, self.base.shape[0]
        (pstep, npart), free = ent[0], ent[1:] or [(1, 1)]
        if npart > 1 and pstep != F:
            raise NKIError(f"ap: the partition step {pstep} of a {self.base.buffer.name.upper()} "
                           f"tile must be its free size {F} (partitions are accessed whole and in "
                           "order)", where=where)
        p0, foff = divmod(off, F)
        axes = [(n, st) for st, n in free]
        lo, hi = _reach(foff, axes)
        # A pattern reaching outside the tile is an error when an instruction uses it, not
        # when it is made: NKI's kernels build views they use only under a condition
        # (output_projection_tkg's last, incomplete PSUM tile: `if h_2_idx < h_2_size`).
        oob = None
        if p0 + npart > P or lo < 0 or hi >= F:
            oob = (None, None, f"ap: pattern {[list(e) for e in ent]} at offset {off} reaches "
                   f"partitions [{p0}, {p0 + npart - 1}] and elements [{lo}, {hi}] of each; the "
                   f"tile {self.base.shape} has {P} partitions of {F}", where)
        if len(axes) > 4:
            axes = [a for a in axes if a[0] != 1] or [(1, 1)]
            if len(axes) > 4:
                raise Unsupported("an access pattern of more than 4 free dimensions",
                                  where=where)
        return View(self.base, foff, [(npart, 1)] + axes, p0, oob=oob)

    def reshape(self, *shape, where=None):
        """A view of the same elements in another shape: dims are split or merged where their
        strides allow it without a copy (numpy's rule); a tile keeps its partition dim."""
        where = where or caller()
        if len(shape) == 1 and not isinstance(shape[0], int) and hasattr(shape[0], "__len__"):
            shape = shape[0]
        shape = [_int(d, where) for d in shape]
        total = math.prod(self.shape)
        if shape.count(-1) == 1:
            rest = math.prod(d for d in shape if d != -1)
            if rest and total % rest == 0:
                shape[shape.index(-1)] = total // rest
        if any(d < 1 for d in shape) or math.prod(shape) != total:
            raise NKIError(f"reshape {self.shape} -> {tuple(shape)}: element counts differ",
                           where=where)
        if self.is_tile:
            if not shape or shape[0] != self.shape[0]:
                raise NKIError(f"reshape {self.shape} -> {tuple(shape)} of a "
                               f"{self.base.buffer.name.upper()} tile changes its partition "
                               "dimension (that moves data between partitions: an instruction, "
                               "not a view)", where=where)
            free = _nocopy_reshape(self.axes[1:], shape[1:])
            if free is None:
                raise NKIError(f"reshape {self.shape} -> {tuple(shape)}: the view's free "
                               "dimensions are not contiguous where they would be merged (copy "
                               "it first)", where=where)
            return View(self.base, self.offset, [self.axes[0]] + free, self.p0)
        axes = _nocopy_reshape(self.axes, shape)
        if axes is None:
            raise NKIError(f"reshape {self.shape} -> {tuple(shape)}: the view's dimensions are "
                           "not contiguous where they would be merged (copy it first)",
                           where=where)
        return View(self.base, self.offset, axes or [(1, 1)])

    def _dim(self, dim, where, n=None):
        nd = len(self.axes) if n is None else n
        d = _int(dim, where)
        d = d + nd if d < 0 else d
        if not 0 <= d < nd:
            raise NKIError(f"dimension {dim} out of range for a {nd}-d view", where=where)
        return d

    def slice(self, dim, start=None, end=None, step=1):
        where = caller()
        d = self._dim(dim, where)
        key = [slice(None)] * len(self.axes)
        key[d] = slice(start, end, step)
        return self[tuple(key)]

    def select(self, dim, index):
        where = caller()
        d = self._dim(dim, where)
        if as_view(index) is not None:
            raise Unsupported("select with a tensor index (a dynamic, runtime offset)",
                              where=where)
        key = [slice(None)] * len(self.axes)
        key[d] = _int(index, where)
        return self[tuple(key)]

    def permute(self, *dims, **kw):
        where = caller()
        if "dims" in kw:
            dims = kw["dims"]
        elif len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = dims[0]
        dims = [self._dim(d, where) for d in dims]
        if sorted(dims) != list(range(len(self.axes))):
            raise NKIError(f"permute {tuple(dims)}: not a permutation of {len(self.axes)} dims",
                           where=where)
        if self.is_tile and dims[0] != 0:
            raise NKIError("permute moves a tile's partition dimension (an instruction, not a "
                           "view)", where=where)
        return View(self.base, self.offset, [self.axes[d] for d in dims], self.p0)

    def expand_dim(self, dim):
        where = caller()
        d = self._dim(dim, where, len(self.axes) + 1)
        if self.is_tile and d == 0:
            raise NKIError("expand_dim(0) of a tile: the partition dimension stays first",
                           where=where)
        st = self.axes[d][0] * self.axes[d][1] if d < len(self.axes) else 1
        return View(self.base, self.offset, self.axes[:d] + [(1, st)] + self.axes[d:], self.p0)

    def squeeze_dim(self, dim):
        where = caller()
        d = self._dim(dim, where)
        if self.axes[d][0] != 1:
            raise NKIError(f"squeeze_dim({dim}): dimension of size {self.axes[d][0]}",
                           where=where)
        if self.is_tile and d == 0:
            raise NKIError("squeeze_dim(0) of a tile: the partition dimension stays",
                           where=where)
        return View(self.base, self.offset, self.axes[:d] + self.axes[d + 1:] or [(1, 1)],
                    self.p0)

    def flatten_dims(self, start_dim=0, end_dim=-1):
        where = caller()
        a, b = self._dim(start_dim, where), self._dim(end_dim, where)
        shape = list(self.shape)
        return self.reshape(shape[:a] + [math.prod(shape[a:b + 1])] + shape[b + 1:],
                            where=where)

    def reshape_dim(self, dim, shape):
        where = caller()
        d = self._dim(dim, where)
        s = list(self.shape)
        return self.reshape(s[:d] + list(shape) + s[d + 1:], where=where)

    def broadcast(self, dim, size):
        where = caller()
        d = self._dim(dim, where)
        if self.axes[d][0] != 1:
            raise NKIError(f"broadcast: dimension {d} has size {self.axes[d][0]}, not 1",
                           where=where)
        if self.is_tile and d == 0:
            raise NKIError("broadcast of a tile's partition dimension (an instruction, not a "
                           "view: nl.broadcast_to)", where=where)
        axes = list(self.axes)
        axes[d] = (_int(size, where), 0)
        return View(self.base, self.offset, axes, self.p0)

    # -- arithmetic (older NKI) --
    def __add__(self, o): return _ctx().binary("add", self, o)
    def __radd__(self, o): return _ctx().binary("add", self, o)
    def __sub__(self, o): return _ctx().binary("subtract", self, o)
    def __rsub__(self, o): return _ctx().binary("subtract", o, self)
    def __mul__(self, o): return _ctx().binary("multiply", self, o)
    def __rmul__(self, o): return _ctx().binary("multiply", self, o)
    def __truediv__(self, o): return _ctx().binary("divide", self, o)
    def __neg__(self): return _ctx().binary("multiply", self, -1.0)

    def broadcast_to(self, shape):
        return broadcast_to(self, shape, caller())

    def __iadd__(self, o):
        if isinstance(o, MatmulResult):
            o.into(self, caller())
            return self
        _ctx().binary("add", self, o, dst=self)
        return self

    def __repr__(self):
        return f"<view of {self.base!r} {self.shape}>"


_VIEW_METHODS = ("ap", "slice", "select", "permute", "expand_dim", "squeeze_dim", "flatten_dims",
                 "reshape_dim", "broadcast", "get_pattern", "is_contiguous")


def _delegate(cls, names):
    """Whole tiles and tensors take the view methods of their full view."""
    for name in names:
        def m(self, *a, _n=name, **k):
            return getattr(self.full_view(), _n)(*a, **k)
        m.__name__ = name
        setattr(cls, name, m)
    cls.strides = property(lambda self: self.full_view().strides)
    cls.size = property(lambda self: math.prod(self.shape))
    cls.offset = property(lambda self: 0)


def _keep_ap_oob(cls, names):
    """A view derived from an .ap() view that reaches outside its tensor (an error deferred to
    the instruction that uses it) keeps that error."""
    for name in names:
        def m(self, *a, _f=getattr(cls, name), **k):
            r = _f(self, *a, **k)
            if self.oob is not None and self.oob[0] is None and isinstance(r, View) and \
                    r.oob is None:
                r.oob = self.oob
            return r
        m.__name__ = name
        setattr(cls, name, m)


_keep_ap_oob(View, ("__getitem__", "reshape", "slice", "select", "permute", "expand_dim",
                    "squeeze_dim", "flatten_dims", "reshape_dim", "broadcast"))
_delegate(Tile, _VIEW_METHODS + ("reshape",))
_delegate(HbmTensor, _VIEW_METHODS)


def _slice_ints(k, n, where):
    """A slice's bounds as written: negative ones count from the end, none is clamped (an
    out-of-range slice is the kernel's error, not a shorter view)."""
    start = 0 if k.start is None else _int(k.start, where)
    stop = n if k.stop is None else _int(k.stop, where)
    step = 1 if k.step is None else _int(k.step, where)
    start = start + n if start < 0 else start
    stop = stop + n if stop < 0 else stop
    return start, stop, step


def _reach(off, axes):
    """The lowest and highest element a pattern of (num, step) axes reaches from off."""
    lo = hi = off
    for n, st in axes:
        span = (n - 1) * st
        lo, hi = (lo + span, hi) if span < 0 else (lo, hi + span)
    return lo, hi


def _nocopy_reshape(axes, shape):
    """(num, step) axes of `shape` over the same elements as `axes` (row-major), or None when
    that needs a copy: numpy's rule, dims merged only where they are contiguous."""
    old = [a for a in axes if a[0] != 1]
    new_dims = [d for d in shape if d != 1]
    out, i, j = [], 0, 0
    while i < len(old) and j < len(new_dims):
        oi, nj = i + 1, j + 1
        po, pn = old[i][0], new_dims[j]
        while po != pn:
            if po < pn:
                po *= old[oi][0]
                oi += 1
            else:
                pn *= new_dims[nj]
                nj += 1
        for k in range(i, oi - 1):  # the old dims of this group must be contiguous
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        st = old[oi - 1][1]
        grp = []
        for d in reversed(new_dims[j:nj]):
            grp.append((d, st))
            st *= d
        out += reversed(grp)
        i, j = oi, nj
    res, k = [], 0
    for d in shape:
        if d == 1:
            nxt = out[k] if k < len(out) else None
            res.append((1, nxt[0] * nxt[1] if nxt else 1))
        else:
            res.append(out[k])
            k += 1
    return res


def _int(v, where):
    if isinstance(v, IndexExpr):
        if v.terms:
            raise Unsupported("an index variable where a number is needed", where=where)
        return v.const
    try:
        return int(v.__index__())
    except (AttributeError, TypeError):
        raise NKIError(f"index {v!r} is not an integer", where=where)


def as_view(x):
    if isinstance(x, View):
        return x
    if isinstance(x, (Tile, HbmTensor)):
        return x.full_view()
    return None


# ---- broadcast_to (older NKI) ------------------------------------------------------------

def broadcast_to(x, shape, where):
    """x broadcast to shape: a free axis of size 1 becomes a stride-0 axis of the view (no
    instruction); a tile's partition axis of size 1 is spread to P partitions on the tensor
    engine (ones[1, P] as stationary times the row as moving, K = 1, into PSUM, copied back
    to SBUF in x's dtype: what NKI's compiler emits for a partition broadcast); an HBM view
    broadcasts on every axis with stride 0 (its DMA reads the row again)."""
    if isinstance(x, MatmulResult):
        x = x.materialize()
    v = as_view(x)
    if v is None:
        raise NKIError(f"broadcast_to: expected a tile or tensor, got {x!r}", where=where)
    shape = tuple(int(s) for s in shape)
    if len(shape) != len(v.shape):
        raise NKIError(f"broadcast_to {v.shape} -> {shape}: ranks differ", where=where)
    for n, m in zip(v.shape, shape):
        if n != m and n != 1:
            raise NKIError(f"broadcast_to {v.shape} -> {shape}: only size-1 dimensions "
                           "broadcast", where=where)
    axes = [(m, st if n == m else 0) for (n, st), m in zip(v.axes, shape)]
    if not v.is_tile or v.shape[0] == shape[0]:
        return View(v.base, v.offset, axes, v.p0)
    ctx = _ctx()
    P = shape[0]
    row = View(v.base, v.offset, [v.axes[0]] + axes[1:], v.p0)  # [1, free...], free broadcast
    row2 = _flat2(row, where) if row.ndim > 2 else row
    if row2.ndim == 1:
        row2 = View(row2.base, row2.offset, [row2.axes[0], (1, 1)], row2.p0)
    if any(st == 0 for _, st in row2.axes[1:]):  # a stride-0 moving operand: copy it first
        s = ctx.new_tile(row2.shape, v.dtype, SBUF, where)
        ctx.tensor_copy(s, row2, None, where)
        row2 = s
    F = row2.shape[1]
    ones = ctx.new_tile((1, P), v.dtype, SBUF, where)
    ctx.memset(ones, 1.0, where)
    out = ctx.new_tile((P, F), v.dtype, SBUF, where)
    chunk = max(1, ctx.caps["psum_bank_bytes"] // 4)
    for f0 in range(0, F, chunk):
        n = min(chunk, F - f0)
        ps = ctx.new_tile((P, n), DTYPES["float32"], PSUM, where)
        mv = View(row2.base, row2.offset + f0 * row2.axes[1][1], [(1, 1), (n, row2.axes[1][1])],
                  row2.p0)
        ctx.matmul(ps, ones, mv, False, where)
        ctx.tensor_copy(View(out.base, f0, [(P, 1), (n, 1)]), ps, None, where)
    return View(out.base, 0, [(P, 1)] + [(m, st) for m, st in _strides(shape[1:])])


def _strides(shape):
    st, s = [], 1
    for d in reversed(shape):
        st.append(s)
        s *= d
    return list(zip(shape, reversed(st)))


# ---- the value-returning matmul (older NKI: res += nisa.nc_matmul(a, b)) ----------------

class MatmulResult:
    def __init__(self, ctx, stationary, moving, where):
        self.ctx, self.stationary, self.moving, self.where = ctx, stationary, moving, where

    @property
    def shape(self):
        return (self.stationary.shape[-1], self.moving.shape[-1])

    def into(self, dst, where, accumulate=None):
        self.ctx.matmul(dst, self.stationary, self.moving, accumulate, where)

    def materialize(self):
        t = Tile(self.ctx, self.shape, DTYPES["float32"], PSUM, self.where)
        self.into(t.full_view(), self.where, False)
        return t.full_view()


# ---- the trace context --------------------------------------------------------------------

_CTX = None
# the generation's capabilities when known before a kernel file is imported (gensweep nki run
# --config): module-level constants such as P_MAX = nl.tile_size.pmax read them
_CAPS = None


def _ctx():
    if _CTX is None:
        raise NKIError("this NKI call runs only inside a kernel being traced "
                       "(gensweep nki run, or gensweep.nki_run)")
    return _CTX


ALU = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "maximum": "max",
       "minimum": "min", "power": "pow", "equal": "is_equal", "not_equal": "not_equal",
       "greater": "is_gt", "greater_equal": "is_ge", "less": "is_lt", "less_equal": "is_le",
       "bypass": "bypass"}
ACT = {"exp": "exp", "log": "log", "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu",
       "gelu": "gelu", "gelu_apprx_tanh": "gelu_tanh", "silu": "silu", "sqrt": "sqrt",
       "rsqrt": "rsqrt", "reciprocal": "reciprocal", "square": "square", "abs": "abs",
       "copy": "identity", "identity": "identity"}


class Ctx:
    def __init__(self, caps, instruction_cap=DEFAULT_INSTRUCTION_CAP):
        self.caps = caps
        self.ops = []        # ("tile", Tile) | ("op", core, name, where, operands) | ("fail", ...)
        self.tiles = []
        self.tensors = []    # HbmTensor, in creation order
        self.core = 0
        self.grid = ()
        self.pid = ()
        self.shared = {}     # (site, nth) -> HbmTensor: shared_hbm across SPMD instances
        self.site_count = {}
        self.n_instr = 0
        self.cap = instruction_cap
        self.reduction = 1.0
        self.gpsimd = caps.get("has_gpsimd", True)
        self.ops_supported = set(caps.get("ops", []))
        self.schedule = True  # reorder within the dependencies (gensweep.schedule)
        self.mask = self.mask_src = None  # the mask= of the operation being traced (masked())

    # -- tensors --
    def hbm(self, shape, dtype, buffer, name, where):
        key = (where, self.site_count.get(where, 0))
        self.site_count[where] = key[1] + 1
        if buffer is SHARED_HBM and key in self.shared:
            return self.shared[key]
        t = HbmTensor(self, name or f"t{len(self.tensors)}", shape, dtype, "scratch")
        t.created_in_kernel = True
        t.buffer = buffer
        self.tensors.append(t)
        if buffer is SHARED_HBM:
            self.shared[key] = t
        return t

    # -- emission --
    def emit(self, name, where, *operands):
        if self.mask is not None:
            if self.mask.never:
                return None  # predicated off everywhere: no instruction
            if name in ("matmul", "transpose", "stream_shuffle"):
                raise Unsupported(f"mask= on {name} (its operands do not share the output's "
                                  "index space)", where=where)
            operands = tuple(restrict(o, self.mask.ranges, where) if isinstance(o, View) else o
                             for o in operands)
        for o in operands:
            if isinstance(o, View) and o.oob is not None:
                raise NKIError(o.oob[2], where=o.oob[3])
        self.n_instr += 1
        if self.n_instr > self.cap:
            raise NKIError(f"the kernel issued more than {self.cap} instructions (a runaway "
                           "loop?); raise the cap with --max-instructions", where=where)
        for o in operands:
            if isinstance(o, View):
                if o.is_tile:
                    o.base.last_use = len(self.ops)
                    if o.base.core != self.core:
                        raise NKIError("a tile of another SPMD instance's core", where=where)
        self.ops.append(("op", self.core, name, where, operands))
        return len(self.ops) - 1

    def mark_read(self, v):
        if not v.is_tile:
            (getattr(v.base, "_base", v.base)).read = True
        elif v.base.zero_pending:
            self.flush_zero(v.base)

    def mark_write(self, v):
        if not v.is_tile:
            (getattr(v.base, "_base", v.base)).written = True

    def flush_zero(self, t):
        t.zero_pending = False
        self.memset(t.full_view(), 0.0, t.where)

    def new_tile(self, shape, dtype, buffer, where):
        return Tile(self, shape, dtype, buffer, where).full_view()

    # -- operations (shared by nki.language and nki.isa) --
    def dma(self, dst, src, where):
        dst, src = as_view(dst), as_view(src)
        if dst is None or src is None:
            raise NKIError("dma_copy takes tensors or tiles", where=where)
        if dst.is_tile and dst.base.buffer is PSUM or src.is_tile and src.base.buffer is PSUM:
            raise Unsupported("DMA to or from PSUM (copy the tile to SBUF first)", where=where)
        if math.prod(dst.shape) != math.prod(src.shape):
            raise NKIError(f"dma_copy: {src.shape} into {dst.shape}: sizes differ", where=where)
        if dst.dtype != src.dtype and not self.caps.get("dma_cast", False):
            raise Unsupported(f"dma_copy with a dtype cast ({src.dtype} -> {dst.dtype}): "
                              f"{self.caps['generation']}'s DMA does not convert (core.dma.cast)",
                              where=where)
        self.mark_read(src)
        self.mark_write(dst)
        m = self.mask
        if m is not None:  # restricted before fit_dma squeezes axes away
            if m.never:
                return
            dst, src = restrict(dst, m.ranges, where), restrict(src, m.ranges, where)
        for o in (dst, src):
            if o.oob is not None:
                raise NKIError(o.oob[2], where=o.oob[3])
        d, s = self.fit_dma(dst, src, where)
        self.mask = None
        try:
            self.emit("dma_copy", where, d, s, -1)
        finally:
            self.mask = m

    def fit_dma(self, dst, src, where):
        """The two sides as patterns of equal [partitions x free] shape."""
        tile_side = dst if dst.is_tile else src if src.is_tile else None
        if tile_side is None:
            return dst, src
        other = src if tile_side is dst else dst
        if other.shape == tile_side.shape:
            return dst, src
        # squeeze unit axes on the HBM side until the shapes agree
        o_axes = [a for a in other.axes if a[0] != 1] or [(1, 1)]
        t_axes = [a for a in tile_side.axes[1:] if a[0] != 1] or [(1, 1)]
        o_shape = tuple(a[0] for a in o_axes)
        if o_shape[0] == tile_side.shape[0] and o_shape[1:] == tuple(a[0] for a in t_axes):
            o = View(other.base, other.offset, o_axes, other.p0)
            t = View(tile_side.base, tile_side.offset, [tile_side.axes[0]] + t_axes, tile_side.p0)
            return (t, o) if tile_side is dst else (o, t)
        raise NKIError(f"dma_copy: shapes {src.shape} -> {dst.shape} do not match", where=where)

    def matmul(self, dst, stationary, moving, accumulate, where, tile=None):
        dst, st, mv = as_view(dst), as_view(stationary), as_view(moving)
        if not (dst.is_tile and dst.base.buffer is PSUM):
            raise NKIError("nc_matmul writes a PSUM tile", where=where)
        if not (st.is_tile and mv.is_tile and st.base.buffer is SBUF and mv.base.buffer is SBUF):
            raise NKIError("nc_matmul reads its stationary and moving operands from SBUF",
                           where=where)
        k = st.shape[0]
        st2, mv2, d2 = _flat2(st, where), _flat2(mv, where), _flat2(dst, where)
        key = (dst.offset, dst.p0, d2.shape)
        t = dst.base
        if accumulate is None:
            acc = key in t.mm_written and not t.zero_pending
            if t.zero_pending:
                t.zero_pending = False
                acc = False
        else:
            acc = bool(accumulate)
            if acc and t.zero_pending:
                self.flush_zero(t)
        t.mm_written.add(key)
        t.acc_len[key] = (t.acc_len.get(key, 0) if acc else 0) + k
        self.reduction = max(self.reduction, t.acc_len[key])
        self.emit("matmul", where, d2, st2, mv2, 1 if acc else 0, *(tile or ()))

    def tensor_copy(self, dst, src, engine, where):
        dst, src = as_view(dst), as_view(src)
        self.mark_read(src)
        self.emit("tensor_copy", where, engine or "vector", _same(dst, src, where), src)

    def memset(self, dst, value, where, engine=None):
        dst = as_view(dst)
        eng = engine or ("gpsimd" if self.gpsimd else "vector")
        self.emit("memset", where, eng, dst, repr(float(value)))

    def activation(self, dst, func, src, where, bias=None, scale=1.0, acc=None):
        dst, src = as_view(dst), as_view(src)
        self.mark_read(src)
        f = ACT.get(getattr(func, "__name__", func))
        if f is None:
            raise Unsupported(f"activation function {getattr(func, '__name__', func)!r}",
                              where=where)
        self.emit("activation", where, _same(dst, src, where), src, f,
                  self.scalar_operand(scale, where), self.scalar_operand(bias or 0.0, where),
                  acc if acc is not None else "-")

    def scalar_operand(self, v, where):
        if isinstance(v, (int, float)):
            return float(v)
        w = as_view(v)
        if w is None:
            raise NKIError(f"a scalar operand must be a number or a [P, 1] tile, got {v!r}",
                           where=where)
        self.mark_read(w)
        return w

    def binary(self, op, a, b, where=None, dtype=None, dst=None):
        where = where or caller()
        va, vb = as_view(a), as_view(b)
        if va is None and vb is None:
            raise NKIError(f"{op} needs a tile operand", where=where)
        if va is None:  # scalar op tile
            if op in ("add", "multiply", "maximum", "minimum"):
                va, vb, a, b = vb, None, b, a
            else:
                raise Unsupported(f"a scalar {op} a tile (reversed tensor_scalar operands)",
                                  where=where)
        out_dt = dtype_of(dtype) if dtype is not None else va.dtype
        column = (vb is not None and len(vb.shape) == 2 and vb.shape[1] == 1 and
                  vb.shape[0] == va.shape[0] and math.prod(va.shape[1:]) != 1)
        if vb is None or column:
            out = dst if dst is not None else self.new_tile(va.shape, out_dt, SBUF, where)
            self.mark_read(va)
            self.emit("tensor_scalar", where, "vector", out, va, ALU[op],
                      self.scalar_operand(b if vb is None else vb, where), "bypass", 0.0)
            return out
        if va.shape != vb.shape:
            raise NKIError(f"{op}: shapes {va.shape} and {vb.shape} differ", where=where)
        out = dst if dst is not None else self.new_tile(va.shape, out_dt, SBUF, where)
        self.mark_read(va)
        self.mark_read(vb)
        self.emit("tensor_tensor", where, out, va, vb, ALU[op])
        return out


def reduce_view(v, axes, where, what):
    """The view with its reduced free axes moved innermost (an access pattern may take its
    axes in any order), and how many there are: what tensor_reduce takes."""
    nd = len(v.shape)
    axes = tuple(sorted(set(a % nd for a in axes)))
    if 0 in axes:
        raise Unsupported(f"{what} over the partition axis (use nisa.tensor_partition_reduce "
                          "or a matmul)", where=where)
    keep = [a for a in range(nd) if a not in axes]
    return View(v.base, v.offset, [v.axes[a] for a in keep] + [v.axes[a] for a in axes],
                v.p0), len(axes), tuple(v.shape[a] for a in keep)


def _flat2(v, where):
    """A tile view as [P x F] with one free axis when its free axes are dense."""
    if len(v.axes) == 2:
        return v
    free = v.axes[1:]
    size = math.prod(n for n, _ in free)
    dense = all(st == math.prod(n for n, _ in free[i + 1:]) for i, (_, st) in enumerate(free))
    if not dense:
        raise Unsupported("a matmul operand with more than one strided free dimension",
                          where=where)
    return View(v.base, v.offset, [v.axes[0], (size, 1)], v.p0)


def _same(dst, src, where):
    if dst is None:
        raise NKIError("the destination must be a tile or tensor", where=where)
    if math.prod(dst.shape) != math.prod(src.shape) or dst.shape[0] != src.shape[0]:
        raise NKIError(f"shapes {src.shape} -> {dst.shape} do not match", where=where)
    return dst


# the operand index of each op's destination (what assign() may retarget)
_OUT_INDEX = {"tensor_copy": 1, "tensor_scalar": 1, "tensor_tensor": 0, "activation": 0,
              "exponential": 0, "tensor_reduce": 0, "transpose": 0, "tensor_tensor_scan": 0,
              "scalar_tensor_tensor": 0}


def _squeeze(shape):
    return tuple(n for n in shape if n != 1)


def _retarget(ctx, dst, v):
    """Make the last instruction write dst instead of v, when v is a whole fresh temporary that
    only that instruction wrote (NKI's compiler writes such results in place)."""
    if not v.is_tile or v.offset or v.p0 or tuple(v.shape) != v.base.shape:
        return False
    t = v.base
    if len(ctx.ops) < 2 or ctx.ops[-2] != ("tile", t) or ctx.ops[-1][0] != "op":
        return False
    op = ctx.ops[-1]
    i = _OUT_INDEX.get(op[2])
    outs = op[4]
    if i is None or outs[i] is not v or any(o is v for j, o in enumerate(outs) if j != i):
        return False
    if _squeeze(dst.shape) != _squeeze(v.shape) or dst.shape[0] != v.shape[0]:
        return False
    if op[2] == "transpose" and dst.base.buffer is not PSUM:
        return False
    new = list(outs)
    new[i] = dst
    ctx.ops[-1] = op[:4] + (tuple(new),)
    ctx.ops[-2] = ("nop",)
    t.dropped = True
    dst.base.last_use = len(ctx.ops) - 1
    return True


def assign(dst, value):
    """tile[...] = value: a fresh result is written in place (_retarget), anything else is
    copied (tensor_copy); an HBM destination is a store; a number is a memset."""
    ctx = _ctx()
    where = caller()
    dst = as_view(dst)
    if isinstance(value, MatmulResult):
        value.into(dst, where, False)
        return
    v = as_view(value)
    if v is None:
        ctx.memset(dst, value, where)
        return
    if not dst.is_tile:
        store(dst, value)
        return
    if not _retarget(ctx, dst, v):
        ctx.tensor_copy(dst, v, None, where)


@masked
def store(dst, value, mask=None, **_):
    ctx = _ctx()
    where = caller()
    check_mask(mask, where)
    d = as_view(dst)
    if d is None or d.is_tile:
        raise NKIError("nl.store writes an HBM tensor", where=where)
    if isinstance(value, MatmulResult):
        value = value.materialize()
    v = as_view(value)
    if v is None:
        raise NKIError("nl.store stores a tile", where=where)
    if v.is_tile and v.base.buffer is PSUM:
        s = ctx.new_tile(v.shape, d.dtype, SBUF, where)
        ctx.tensor_copy(s, v, None, where)
        v = s
    if v.dtype != d.dtype:
        s = ctx.new_tile(v.shape, d.dtype, SBUF, where)
        ctx.tensor_copy(s, v, None, where)
        v = s
    ctx.dma(d, v, where)


@masked
def load(src, dtype=None, mask=None, **_):
    ctx = _ctx()
    where = caller()
    check_mask(mask, where)
    s = as_view(src)
    if s is None or s.is_tile:
        raise NKIError("nl.load reads an HBM tensor", where=where)
    t = ctx.new_tile(s.shape, s.dtype, SBUF, where)
    ctx.dma(t, s, where)
    if dtype is not None and dtype_of(dtype) != s.dtype:
        c = ctx.new_tile(s.shape, dtype_of(dtype), SBUF, where)
        ctx.tensor_copy(c, t, None, where)
        return c
    return t


# ---- allocation and writing the program ---------------------------------------------------

def _esc(s):
    out = []
    for b in str(s).encode():
        out.append("%%%02X" % b if b <= 0x20 or b >= 0x7F or b == 0x25 else chr(b))
    return "".join(out)


def allocate(ctx):
    """Sites, their depths and each tile's pool (the rule in the module docstring)."""
    sites = {}
    for t in ctx.tiles:
        if getattr(t, "dropped", False):
            continue
        sites.setdefault((t.core, t.where, t.buffer.name), []).append(t)
    pools = []
    for (core, where, space), tiles in sites.items():
        dmin = 1
        while dmin < len(tiles) and any(tiles[k - dmin].last_use >= tiles[k].created
                                        for k in range(dmin, len(tiles))):
            dmin += 1
        pref = max(dmin, min(len(tiles), PREFERRED_DEPTH))
        nbytes = max(t.bytes for t in tiles)
        pools.append({"core": core, "where": where, "space": space, "tiles": tiles,
                      "dmin": dmin, "depth": pref, "bytes": nbytes})
    # lower preferred depths back to the minimum where a core's space would overflow
    align = {"sbuf": 64, "psum": ctx.caps["psum_bank_bytes"]}
    cap = {"sbuf": ctx.caps["sbuf_partition_bytes"], "psum": ctx.caps["psum_partition_bytes"]}
    for core in {p["core"] for p in pools}:
        for space in ("sbuf", "psum"):
            mine = [p for p in pools if p["core"] == core and p["space"] == space]

            def need():
                return sum(p["depth"] * -(-p["bytes"] // align[space]) * align[space]
                           for p in mine)
            for p in sorted(mine, key=lambda p: -p["bytes"]):
                if need() <= cap[space]:
                    break
                p["depth"] = p["dmin"]
    for i, p in enumerate(pools):
        p["id"] = i
        for t in p["tiles"]:
            t.pool = p
    return pools


def write_program(ctx, path, name, returned, args_order):
    files = {}

    def f(where):
        if where[0] not in files:
            files[where[0]] = len(files)
        return files[where[0]]

    # tensors: inputs (argument order), outputs (returned order), scratch
    ins = [t for t in args_order if isinstance(t, HbmTensor)]
    outs = []
    for t in returned:
        base = getattr(t, "_base", t)
        if base not in outs:
            outs.append(base)
    for t in ins:
        if t.written and not t.read and t not in outs:
            outs.append(t)
    ins = [t for t in ins if t not in outs]
    ins += [t for t in ctx.tensors if t.kind == "in" and t not in ins]  # nl.shared_constant
    ctx.prog_ins, ctx.prog_outs = ins, outs
    scratch = [t for t in ctx.tensors if t not in outs and t not in ins and t.written]
    order = ins + outs + scratch
    if len(order) > 8:
        raise NKIError(f"the kernel uses {len(order)} HBM tensors; the model takes at most 8",
                       "unsupported", where=("<kernel>", 0))
    used = set()
    for i, t in enumerate(order):
        t.id = i
        nm = re.sub(r"[^A-Za-z0-9_]", "_", t.name or f"t{i}") or f"t{i}"
        while nm in used:
            nm += f"_{i}"
        used.add(nm)
        t.name = nm
    for t in ctx.tensors + ins:
        if t.id is None and (t.read or t.written):
            raise NKIError(f"tensor {t.name} is read but never written", where=("<kernel>", 0))
    pools = allocate(ctx)
    if ctx.schedule:
        from .schedule import schedule
        schedule(ctx, pools)
    lines = ["gsk 1", f"kernel {_esc(name)}"]
    body = []
    cur_core = None
    pools_done = set()

    def core_switch(c):
        nonlocal cur_core
        if c != cur_core:
            body.append(f"core {c}")
            cur_core = c
            for p in pools:
                if p["core"] == c and p["id"] not in pools_done:
                    pools_done.add(p["id"])
                    w = p["where"]
                    body.append(f"pool {p['id']} {p['space']} {p['depth']} {p['bytes']} "
                                f"{f(w)} {w[1]} {_esc(os.path.basename(w[0]) + ':' + str(w[1]))}")

    for op in ctx.ops:
        if op[0] == "tile":
            t = op[1]
            if getattr(t, "dropped", False):
                continue
            core_switch(t.core)
            body.append(f"tile {t.id} {t.pool['id']} {t.dtype.gs} {t.shape[0]} {t.free} "
                        f"{f(t.where)} {t.where[1]}")
            continue
        if op[0] == "nop":
            continue
        if op[0] == "fail":
            core_switch(op[1])
            _, core, status, where, msg = op
            body.append(f"fail {f(where)} {where[1]} {status} {_esc(msg)}")
            continue
        _, core, oname, where, operands = op
        core_switch(core)
        body.append(" ".join([oname, str(f(where)), str(where[1])] +
                             [_operand(o) for o in operands]))
    cwd = os.getcwd() + os.sep
    for fn, i in sorted(files.items(), key=lambda kv: kv[1]):
        lines.append(f"file {i} {_esc(fn[len(cwd):] if fn.startswith(cwd) else fn)}")
    lines.append(f"reduction {max(1.0, ctx.reduction):.17g}")
    for t in order:
        kind = "in" if t in ins else "out" if t in outs else "scratch"
        lo, hi, integer = getattr(t, "range", (-1.0, 1.0, 0))
        lines.append(f"tensor {t.id} {kind} {t.dtype.gs} {_esc(t.name)} "
                     f"{'x'.join(str(d) for d in t.shape)} {lo!r} {hi!r} {integer}")
        data = getattr(t, "data_path", None)
        if data and kind == "in":
            lines.append(f"data {t.id} {_esc(data)}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines + body) + "\n")
    return order


def _operand(o):
    if isinstance(o, View):
        if o.is_tile:
            head = f"T{o.base.id},{o.p0},{o.axes[0][0]},{o.offset}"
            free = o.axes[1:] or [(1, 1)]
        else:
            base = o.base
            head = f"H{getattr(base, '_base', base).id},{o.offset},{o.axes[0][0]},{o.axes[0][1]}"
            free = o.axes[1:] or [(1, 1)]
        return head + f",{len(free)}," + ",".join(f"{n},{s}" for n, s in free)
    if isinstance(o, float):
        return "#" + repr(o)
    if isinstance(o, bool):
        return str(int(o))
    if isinstance(o, int):
        return str(o)
    return str(o)
