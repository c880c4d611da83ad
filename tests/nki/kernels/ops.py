"""The project's own NKI kernels for the front end's tests: each operation in both API styles
(the current dst= style and the older value-returning one). Written for gensweep's tests."""
import nki
import nki.isa as nisa
import nki.language as nl


# ---- older, value-returning style --------------------------------------------------------

@nki.jit
def add_old(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(a.shape[0])[:, None]
    jf = nl.arange(a.shape[1])[None, :]
    x = nl.load(a[ip, jf])
    y = nl.load(b[ip, jf])
    nl.store(out[ip, jf], value=x + y)
    return out


@nki.jit
def rowops_old(x):
    """exp, row max / sum, divide by a per-partition column, scale by an immediate."""
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nl.max(t, axis=1)
    e = nl.exp(nl.subtract(t, m))
    s = nl.sum(e, axis=1)
    r = nl.divide(e, s)
    nl.store(out, value=nl.multiply(r, 2.0))
    return out


@nki.jit
def unary_old(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    u = nl.tanh(nl.sigmoid(t)) + nl.relu(t) + nl.square(t) + nl.silu(t) + nl.gelu(t)
    nl.store(out, value=u)
    return out


@nki.jit
def matmul_old(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nisa.nc_matmul(a, b)
    nl.store(out, value=nl.copy(acc, dtype=nl.float32))
    return out


@nki.jit
def matmul_nl(x, y):
    """nl.matmul without transpose_x: the front end transposes x on the tensor engine."""
    out = nl.ndarray((x.shape[0], y.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    nl.store(out, value=nl.matmul(a, b))
    return out


@nki.jit
def transpose_old(x):
    out = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nl.copy(nl.transpose(t)))
    return out


@nki.jit
def pool_old(x, k):
    c, h, w = x.shape
    out = nl.ndarray((c, h // k, w // k), dtype=x.dtype, buffer=nl.shared_hbm)
    i0, i1, i2, i3, i4 = nl.mgrid[0:c, 0:h // k, 0:k, 0:w // k, 0:k]
    t = nl.load(x)
    nl.store(out, value=nl.max(t[i0, k * i1 + i2, k * i3 + i4], axis=[2, 4]))
    return out


@nki.jit
def strided_old(x):
    """Even columns of x, as an affine index expression into HBM."""
    P, F = x.shape
    out = nl.ndarray((P, F // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(P)[:, None]
    jf = nl.arange(F // 2)[None, :]
    nl.store(out[ip, jf], value=nl.load(x[ip, 2 * jf]))
    return out


@nki.jit
def rmsnorm_old(x, eps=1e-6):
    """Row RMS norm, rows on partitions, 128 rows a tile."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    R, D = x.shape
    for r in nl.affine_range(R // 128):
        t = nl.load(x[r * 128:(r + 1) * 128, :], dtype=nl.float32)
        ms = nl.multiply(nl.sum(nl.square(t), axis=1), 1.0 / D)
        inv = nl.rsqrt(nl.add(ms, eps))
        nl.store(out[r * 128:(r + 1) * 128, :], value=nl.multiply(t, inv, dtype=x.dtype))
    return out


@nki.jit
def layernorm_old(x, eps=1e-5):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x, dtype=nl.float32)
    mu = nl.mean(t, axis=1)
    c = nl.subtract(t, mu)
    var = nl.mean(nl.square(c), axis=1)
    nl.store(out, value=nl.multiply(c, nl.rsqrt(nl.add(var, eps)), dtype=x.dtype))
    return out


# ---- current style: dst= operands ---------------------------------------------------------

@nki.jit
def add_new(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    P, F = a.shape
    for i in nl.affine_range(F // 256):
        x = nl.ndarray((P, 256), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((P, 256), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[:, nl.ds(i * 256, 256)])
        nisa.dma_copy(dst=y, src=b[:, nl.ds(i * 256, 256)])
        z = nl.ndarray((P, 256), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[:, i * 256:(i + 1) * 256], src=z)
    return out


@nki.jit
def scalar_new(x, bias):
    """tensor_scalar (two ops), activation with a per-partition bias and a scale, reduce."""
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    rows = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=bt, src=bias)
    u = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=3.0, op1=nl.add, operand1=bt)
    v = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=v, op=nl.exp, data=u, bias=bt, scale=0.5)
    r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=r, op=nl.add, data=v, axis=1)
    nisa.dma_copy(dst=out, src=v)
    nisa.dma_copy(dst=rows, src=r)
    return out, rows


@nki.jit
def matmul_new(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            ps = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
            sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=sb, src=ps, dtype=out.dtype)
            nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=sb)
    return out


@nki.jit
def transpose_new(x):
    out = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    p = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.psum)
    nisa.nc_transpose(dst=p, data=t)
    s = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=p)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def memset_iota_new(x):
    """memset, iota (GpSimd) and a copy on the scalar engine."""
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(dst=t, pattern=[[1, x.shape[1]]], offset=5, channel_multiplier=x.shape[1])
    z = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=z, value=2.0)
    w = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=w, data1=t, data2=z, op=nl.multiply)
    c = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=c, src=w, engine=nisa.engine.scalar)
    nisa.dma_copy(dst=out, src=c)
    return out


@nki.jit
def cast_new(x):
    """dma_copy converting on every path: fp32 HBM -> bf16 SBUF, bf16 -> fp32 within SBUF,
    fp32 SBUF -> bf16 HBM (a DMA cast, where the target's DMA converts)."""
    out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    narrow = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=narrow, src=x)
    wide = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=wide, src=narrow)
    nisa.dma_copy(dst=out, src=wide)
    return out


@nki.jit
def spmd_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0) * 128
    c = nl.program_id(1) * 256
    x = nl.load(a[r:r + 128, c:c + 256])
    y = nl.load(b[r:r + 128, c:c + 256])
    nl.store(out[r:r + 128, c:c + 256], value=nl.add(x, y))
    return out


def spmd_launch(a, b):
    """A plain function launching an SPMD kernel over a grid, as the tutorials do."""
    return spmd_add[a.shape[0] // 128, a.shape[1] // 256](a, b)


@nki.jit
def unsupported_op(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nisa.dropout(dst=t, data=t, prob=0.5)
    nl.store(out, value=t)
    return out


@nki.jit
def scan_old(a, b):
    """tensor_tensor_scan, older style (returns its tile), immediate initial: h = a * h + b."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    h = nisa.tensor_tensor_scan(x, y, 0.5, nl.multiply, nl.add)
    nl.store(out, value=h)
    return out


@nki.jit
def scan_new(a, b, h0):
    """tensor_tensor_scan, newer style (dst=), per-partition initial: h = max(a * h, b)."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    i = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    nisa.dma_copy(dst=i, src=h0)
    h = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor_scan(dst=h, data0=x, data1=y, initial=i, op0=nl.multiply, op1=nl.maximum)
    nisa.dma_copy(dst=out, src=h)
    return out
