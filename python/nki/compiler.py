"""nki.compiler (and neuronxcc.nki.compiler) under gensweep: the compiler directives public
kernels use at module level or in loops. Accepted so that kernel files run unchanged; what they
ask of NKI's compiler is NOT modelled (docs/NKI.md, "Accepted, not modelled"):

- `sbuf.mod_alloc(base_addr=, num_free_tiles=)`, `psum.mod_alloc(...)`, `sbuf.alloc(...)`,
  `psum.alloc(...)`, `auto_alloc()`: the tile goes to that memory, placed by gensweep's own
  allocation rule (the address and the buffer count asked for are ignored);
- `skip_middle_end_transformations`, `enable_stack_allocator(...)`, `force_auto_alloc`,
  `enable_explicit_tiling`: decorators that return the kernel unchanged;
- `no_reorder()`, `multi_buffer(n)`, `tile(...)`: loop directives, ignored (gensweep's scheduler
  orders the trace: docs/NKI.md, "Scheduling").
"""

from gensweep.tracer import SBUF as sbuf, PSUM as psum, HBM as hbm  # noqa: F401


def _decorator(fn=None, **_):
    """Used bare (@skip_middle_end_transformations) or called (@enable_stack_allocator(...))."""
    if callable(fn):
        return fn
    return lambda f: f


skip_middle_end_transformations = enable_stack_allocator = force_auto_alloc = \
    enable_explicit_tiling = _decorator


class _Directive:
    def __init__(self, name, *a, **k):
        self.name, self.args, self.kwargs = name, a, k

    def __repr__(self):
        return f"ncc.{self.name}(...)"

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def no_reorder(*a, **k):
    return _Directive("no_reorder", *a, **k)


def multi_buffer(*a, **k):
    return _Directive("multi_buffer", *a, **k)


def tile(*a, **k):
    return _Directive("tile", *a, **k)


def auto_alloc(*a, **k):
    return None
