"""@nki.jit kernels and SPMD launches under gensweep's tracer (docs/NKI.md)."""

import itertools

from . import tracer
from .tracer import NKIError, caller


class Kernel:
    """An @nki.jit function. Called inside a trace it traces its body (once per SPMD instance:
    kernel[grid](...)); called with numpy arrays outside a trace it runs on the model through
    gensweep.nki_run (config from GENSWEEP_CONFIG, default configs/gen3.yaml)."""

    def __init__(self, fn, grid=()):
        self.fn, self.grid = fn, grid
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __getitem__(self, grid):
        if not isinstance(grid, tuple):
            grid = (grid,)
        try:
            grid = tuple(int(g) for g in grid)
        except (TypeError, ValueError):
            raise NKIError(f"an SPMD grid is a tuple of integers, got {grid!r}")
        if any(g <= 0 for g in grid):
            raise NKIError(f"SPMD grid {grid} has an empty dimension")
        return Kernel(self.fn, grid)

    def __call__(self, *args, **kwargs):
        ctx = tracer._CTX
        if ctx is None:
            from . import api
            return api.nki_run(self, list(args), kwargs=kwargs)
        if ctx.grid:  # a kernel called from inside a kernel: an ordinary function call
            return self.fn(*args, **kwargs)
        grid = self.grid or (1,)
        cores = max(1, int(ctx.caps.get("cores", 1)))
        result = None
        saved = (ctx.grid, ctx.pid, ctx.core)
        try:
            for n, pid in enumerate(itertools.product(*(range(g) for g in grid))):
                ctx.grid, ctx.pid = grid, pid
                ctx.core = n % cores if self.grid else 0
                ctx.site_count = {}
                r = self.fn(*args, **kwargs)
                if n == 0:
                    result = r
        finally:
            ctx.grid, ctx.pid, ctx.core = saved
        return result


def jit(fn=None, **options):
    """@nki.jit or @nki.jit(mode=..., ...): options other than the function are ignored."""
    if fn is None:
        return lambda f: Kernel(f)
    if isinstance(fn, Kernel):
        return fn
    return Kernel(fn)


baremetal = benchmark = profile = simulate_kernel = jit


def program_id(axis=0):
    ctx = tracer._ctx()
    if not ctx.grid:
        return 0
    if axis < 0 or axis >= len(ctx.grid):
        raise NKIError(f"nl.program_id({axis}): the grid has {len(ctx.grid)} dimensions",
                       where=caller())
    return ctx.pid[axis]


def num_programs(axes=0):
    ctx = tracer._ctx()
    grid = ctx.grid or (1,)
    if isinstance(axes, (tuple, list)):
        n = 1
        for a in axes:
            n *= grid[a]
        return n
    if axes < 0 or axes >= len(grid):
        raise NKIError(f"nl.num_programs({axes}): the grid has {len(grid)} dimensions",
                       where=caller())
    return grid[axes]


def program_ndim():
    return len(tracer._ctx().grid)
