"""The project's own kernels for NKI 0.3's language surface and the older forms still in the
public samples (tests/nki/test_nki03.py). Written for gensweep's tests, not copied."""
import enum
from dataclasses import dataclass

import numpy as np

import nki
import nki.compiler as ncc
import nki.isa as nisa
import nki.language as nl
from nki.isa.constants import oob_mode  # noqa: F401  (NKI 0.3: the ISA enums as a module)


@dataclass(frozen=True)
class ScaleCfg(nl.NKIObject):
    scale: float
    width: int = 128


class TileCfg(nl.NKIObject):  # NKI 0.3: fields by annotation, no @dataclass
    rows: int
    cols: int
    engine: object = None


SCRATCH = ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))  # module level, as the samples


@nki.compiler.skip_middle_end_transformations
@nki.jit
def surface_v03(x, out_dtype: nki.dtype = nl.float32):
    """y = x * s, s = 3 on NeuronCore-v3 and later, 2 before (nc_version compared as NKI's);
    copies on the vector engine selected with nisa.vector_engine."""
    cfg = TileCfg(rows=x.shape[0], cols=x.shape[1], engine=nisa.vector_engine)
    sc = ScaleCfg(scale=3.0 if nisa.get_nc_version() >= nisa.nc_version.gen3 else 2.0)
    assert nisa.get_nc_version() >= 2 and str(nisa.get_nc_version()).startswith("nc_version.")
    out = nl.ndarray((cfg.rows, cfg.cols), dtype=out_dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(1, directives=ncc.no_reorder()):
        t = nl.ndarray((cfg.rows, cfg.cols), dtype=x.dtype, buffer=SCRATCH)
        nisa.dma_copy(dst=t, src=x)
        u = nl.ndarray((cfg.rows, cfg.cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=sc.scale,
                           engine=nisa.scalar_engine)
        v = nl.ndarray((cfg.rows, cfg.cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=v, src=u, engine=cfg.engine)
        nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def uses_helper(x):
    """Imports a helper package found only through the user's PYTHONPATH."""
    import nki03_helper_pkg
    return nki03_helper_pkg.double(x)


@nki.jit
def np_dtype_kernel(x):
    out = nl.ndarray(x.shape, dtype=np.float32, buffer=nl.shared_hbm)
    t = nl.load(x, dtype=np.float32)
    nl.store(out, value=t)
    return out


class Act(enum.Enum):
    SCALE = 1
    NEGATE = 2


@nki.jit
def enum_default(x, act=Act.SCALE, dt=nl.float32, k=2.0):
    out = nl.ndarray(x.shape, dtype=dt, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nl.multiply(t, k if act is Act.SCALE else -1.0))
    return out


@nki.jit
def finfo_clamp(x):
    """min(x, finfo(bf16).max) with nl.fp32 / numpy dtypes: the values pass unchanged."""
    out = nl.ndarray(x.shape, dtype=np.float32, buffer=nl.shared_hbm)
    t = nl.load(x, dtype=nl.fp32)
    nl.store(out, value=nl.minimum(t, nl.finfo(nl.bfloat16).max))
    return out


@nki.jit
def mx_dtype_tile(x):
    t = nl.ndarray(x.shape, dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)  # unsupported here
    nisa.dma_copy(dst=t, src=x)
    return x


@nki.jit
def out_as_argument(a, out, b):
    """Older samples take their output as an argument: out = a - b."""
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out, value=nl.subtract(x, y))


@nki.jit
def positional_forms(a, b):
    """Older value-returning nisa calls with positional operands, mgrid .p / .x."""
    out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    i = nl.mgrid[0:a.shape[0], 0:a.shape[1]]
    j = nl.mgrid[0:b.shape[0], 0:b.shape[1]]
    ta = nisa.tensor_copy(nl.load(a[i.p, i.x]))
    tb = nl.load(b[j.p, j.x])
    p1 = nisa.nc_matmul(stationary=ta, moving=tb)                 # no dst: the product
    s1 = nisa.tensor_scalar(nisa.tensor_copy(p1), nl.multiply, 2.0)
    s1 = nl.add(s1, nl.copy(nisa.nc_matmul(ta, tb)))            # nl.copy of a product
    p2 = nl.ndarray(p1.shape, dtype=nl.float32, buffer=nl.psum)
    p2[...] = nisa.nc_matmul(ta, tb, perf_mode="none")
    nl.store(out, value=nl.add(s1, p2))
    return out


@nki.jit
def bias_gelu(x, bias):
    """The everyday per-column bias + GELU: bias [1, F] broadcast over the partitions (a tile's
    .broadcast_to) and a per-row scale [P, 1] broadcast along the free axis (nl.broadcast_to)."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    b = nl.load(bias)                                   # [1, F]
    bb = b.broadcast_to((P, F))
    rs = nl.load(x[:, 0:1])                             # [P, 1]
    y = nl.add(t, bb)
    z = nl.multiply(y, nl.broadcast_to(rs, (P, F)))
    nl.store(out, value=nl.gelu(z))
    return out


@nki.jit
def transpose_const(a):
    """nl.load_transpose2d and nl.shared_constant (a numpy matrix as an HBM constant)."""
    A, B = a.shape
    out = nl.ndarray((B, A), dtype=nl.float32, buffer=nl.shared_hbm)
    c = nl.shared_constant(np.arange(B * A, dtype=np.float32).reshape(B, A) / 64.0,
                           dtype=nl.float32)
    t = nl.load_transpose2d(a)
    k = nl.load(c)
    nl.store(out, value=nl.add(t, k))
    return out


@nki.jit
def uses_broken_helper(x):
    import nki03_helper_pkg
    return nki03_helper_pkg.broken(x)


@nki.jit
def grid_matmul(a, b):
    """A 2-D SPMD grid (gensweep nki run --grid 2x2): instance (i, j) computes the
    [128 x 256] block (i, j) of a @ b, a [256, 128], b [128, 512]."""
    out = nl.ndarray((a.shape[0], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    assert nl.num_programs(0) * 128 == a.shape[0] and nl.num_programs(1) * 256 == b.shape[1]
    t = nl.load(a[i * 128:(i + 1) * 128, :])
    u = nl.load(b[:, j * 256:(j + 1) * 256])
    p = nl.matmul(t, u)
    nl.store(out[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256], value=nl.copy(p))
    return out


@nki.jit
def masked_rows(x):
    """mask= true for every index (rows a multiple of 128): runs as unmasked."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(x.shape[1])[None, :]
    for i in nl.affine_range((x.shape[0] + 127) // 128):
        t = nl.load(x[i * 128 + ip, jf], mask=(i * 128 + ip < x.shape[0]))
        y = nl.exp(t, mask=(i * 128 + ip < x.shape[0]) & (jf >= 0))
        nl.store(out[i * 128 + ip, jf], value=y, mask=(i * 128 + ip < x.shape[0]))
    return out


@nki.jit
def masked_partial(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    jf = nl.arange(x.shape[1])[None, :]
    t = nl.load(x)
    ip = nl.arange(x.shape[0])[:, None]
    y = nl.exp(t, mask=(ip + jf < 32))  # two variables in one comparison: unsupported
    nl.store(out, value=y)
    return out


@nki.jit
def masked_box(x):
    """x [128, 64]: out = x, then rows < 64 and columns < 48 squared under a mask of two
    variables' intervals (nl.multiply and nl.store predicated)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(64)[None, :]
    t = nl.load(x)
    nl.store(out, value=t)
    box = (ip < 64) & (jf < 48)
    y = nl.multiply(t, t, mask=box)
    nl.store(out[ip, jf], value=y, mask=box)
    return out


@nki.jit
def masked_never(x):
    """A mask true for no index: the predicated operations issue no instruction."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    t = nl.load(x)
    nl.store(out, value=t)
    y = nl.multiply(t, 2.0, mask=(ip < 0))
    nl.store(out, value=y, mask=(ip >= 128))
    return out


# ---- forms of the NKI Library's kernels (nkilib.core.router_topk and others) ----------------

@nki.jit
def library_forms(x, negmax, gram):
    """negmax [P, 1] = -max of each row of x (tensor_reduce(negate=True)); gram = x.T @ x with
    nc_matmul's tile_position / tile_size naming the whole PE array; where tensors live read
    from .buffer; a core_barrier of a kernel launched on one core (no instruction)."""
    assert x.buffer == nl.hbm and negmax.buffer == nl.hbm
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    assert t.buffer == nl.sbuf and t[:, 0:4].buffer == nl.sbuf
    nisa.dma_copy(dst=t, src=x)
    m = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=m, op=nl.maximum, data=t, axis=1, negate=True, keepdims=True)
    nisa.dma_copy(dst=negmax, src=m)
    acc = nl.ndarray((F, F), dtype=nl.float32, buffer=nl.psum)
    assert acc.buffer == nl.psum
    nisa.nc_matmul(dst=acc, stationary=t, moving=t, tile_position=(0, 0),
                   tile_size=(nl.tile_size.pmax, nl.tile_size.pmax))
    g = nl.ndarray((F, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=g, src=acc)
    nisa.core_barrier(gram, cores=[0, 1])
    nisa.dma_copy(dst=gram, src=g)


@nki.jit
def pe_tile_quarter(x):
    """nc_matmul on a 64 x 64 tile of the PE array: the plain product."""
    t = nl.load(x)
    acc = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=t[0:64, 0:64], moving=t[0:64, 0:64],  # named by the test
                   tile_position=(0, 64), tile_size=(64, 64))
    out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, acc)
    return out


@nki.jit
def pe_column_tiles(h, w):
    """The token-generation projection's form: per 128-row block of the contraction, four
    column tiles of 32 (two of 64 on gen2), each a [128, T] stationary block whose product
    lands at the tile's own PSUM rows, accumulated over the blocks; the tiles' rows summed."""
    K, T = h.shape
    N = w.shape[1]
    dim = 64 if nisa.get_nc_version() == nisa.nc_version.gen2 else 32
    f = 128 // dim
    ht = nl.ndarray((128, K // 128, T), dtype=h.dtype, buffer=nl.sbuf)
    wt = nl.ndarray((128, K // 128, N), dtype=w.dtype, buffer=nl.sbuf)
    for k in range(K // 128):
        nisa.dma_copy(dst=ht[:, k, :], src=h[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=wt[:, k, :], src=w[k * 128:(k + 1) * 128, :])
    acc = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.psum)
    for k in range(K // 128):
        i = k % f
        nisa.nc_matmul(acc[i * dim:i * dim + T, 0:N], ht[:, k, :], wt[:, k, :],
                       tile_position=(0, i * dim), tile_size=(128, dim))
    s = nl.ndarray((T, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=acc[0:T, 0:N])
    for i in range(1, f):
        p = nl.ndarray((T, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=p, src=acc[i * dim:i * dim + T, 0:N])
        nisa.tensor_tensor(dst=s, data1=s, data2=p, op=nl.add)
    out = nl.ndarray((T, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def pe_tile_misplaced(x):
    """A column tile at an offset that is no multiple of its size: an error at its line."""
    t = nl.load(x)
    acc = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc[0:16, 0:64], stationary=t[0:64, 0:16], moving=t[0:64, 0:64],
                   tile_position=(0, 48), tile_size=(64, 64))  # misplaced tile
    out = nl.ndarray((16, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, acc[0:16, 0:64])
    return out


@nki.jit
def barrier_in_grid(x):
    """core_barrier between the instances of an SPMD grid (not modelled)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.core_barrier(out, cores=[0, 1])  # the line the test names
    nl.store(out, nl.load(x))
    return out


@nki.jit
def stt_forms(x, g, y, z):
    """scalar_tensor_tensor: y = (x * rinv) * g with rinv a [P, 1] column (the RMS-norm form,
    operand1 read from PSUM as the library reads its broadcast gamma), and z = g - (2 - x)
    with a scalar operand0 and both operands reversed (older, value-returning style)."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    gs = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=gs, src=g)
    gp = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=gp, src=gs)
    sq = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    x2 = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=x2, data1=t, data2=t, op=nl.multiply)
    nisa.tensor_reduce(dst=sq, op=nl.add, data=x2, axis=1, keepdims=True)
    rinv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=rinv, op=nl.rsqrt, data=sq)
    o = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=o, data=t, op0=nl.multiply, operand0=rinv, op1=nl.multiply,
                              operand1=gp)
    nisa.dma_copy(dst=y, src=o)
    r = nisa.scalar_tensor_tensor(data=t, op0=nl.subtract, operand0=2.0, reverse0=True,
                                  op1=nl.subtract, operand1=gs, reverse1=True)
    nisa.dma_copy(dst=z, src=r)


@nki.jit
def stt_both_psum(x):
    """scalar_tensor_tensor with data and operand1 both in PSUM: an error at its line."""
    t = nl.load(x)
    p = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=p, src=t)
    o = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=o, data=p, op0=nl.add, operand0=1.0,  # both in PSUM
                              op1=nl.add, operand1=p)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, o)
    return out


@nki.jit
def shuffle_forms(x, y, z):
    """nc_stream_shuffle: row 0 of x broadcast onto 96 partitions, one quadrant a call with
    mask [0] * 32 from a one-partition source (the library's bias broadcast form, keywords in
    the older order); then in place (dst is src, NKI 0.3's positional order) each quadrant's
    even partitions take the mirrored partition and the odd ones (255) stay."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    b = nl.ndarray((96, F), dtype=x.dtype, buffer=nl.sbuf)
    for i in range(3):
        nisa.nc_stream_shuffle(src=t[0:1, 0:F], dst=b[i * 32:(i + 1) * 32, 0:F],
                               shuffle_mask=[0] * 32)
    nisa.dma_copy(dst=y, src=b)
    nisa.nc_stream_shuffle(t, t, [31 - i if i % 2 == 0 else 255 for i in range(32)])
    nisa.dma_copy(dst=z, src=t)


@nki.jit
def shuffle_beyond_source(x):
    """A mask entry reading past the source's partitions: an error at its line."""
    t = nl.load(x)
    d = nl.ndarray((32, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_stream_shuffle(dst=d, src=t[0:2, :], shuffle_mask=[2] * 32)  # beyond the source
    out = nl.ndarray((32, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, d)
    return out
