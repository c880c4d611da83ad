"""The project's own kernels for NKI 0.3's tensor views (tests/nki/test_views.py): `.ap(...)`
access patterns on SBUF tiles and HBM tensors, `.reshape()` on SBUF/PSUM tiles, and the
NkiTensor view methods. Written for gensweep's tests from the public NKI language reference
(nki/deep-dives/nki-aps.rst and nki/get-started/nki-language-guide.rst of
aws-neuron/aws-neuron-sdk at 81ce03ae), not copied."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def ap_window(x):
    """out = x[:, 16:48] read through a tile access pattern with an offset, and
    out2 = x[:, 1::2] read through an HBM access pattern with a step."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    w = nl.ndarray((P, 32), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=w, src=t.ap(pattern=[[F, P], [1, 32]], offset=16))
    out = nl.ndarray((P, 32), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=w)
    odd = nl.ndarray((P, F // 2), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=odd, src=x.ap([[F, P], [2, F // 2]], 1))
    out2 = nl.ndarray((P, F // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out2, src=odd)
    return out, out2


@nki.jit
def ap_rows(x):
    """Partitions 64..127 of x through a tile pattern whose offset starts at a partition:
    out = x[64:128, :]."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    w = nl.ndarray((64, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=w, src=t.ap(pattern=[[F, 64], [1, F]], offset=64 * F))
    out = nl.ndarray((64, F), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=w)
    return out


@nki.jit
def reshape_permute(x):
    """x [128, 4*32] -> out [128, 32, 4]: an SBUF tile reshaped to [128, 4, 32] and its free
    dims permuted (a view), copied; then a PSUM tile reshaped for the copy back."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    v = t.reshape((P, 4, F // 4)).permute(0, 2, 1)
    ps = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=ps.reshape((P, F // 4, 4)), src=v)
    o = nl.ndarray((P, F // 4, 4), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=o, src=ps.reshape([P, F // 4, 4]))
    out = nl.ndarray((P, F // 4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=o)
    return out


@nki.jit
def view_methods(x):
    """x [2, 128, 64] in HBM: select(0, 1), slice(dim=1, 8, 40), expand_dim/squeeze_dim,
    flatten_dims / reshape_dim round trip, broadcast of a size-1 column:
    out = x[1][:, 8:40] + x[1][:, 0:1]."""
    B, P, F = x.shape
    src = x.select(0, 1).slice(dim=1, start=8, end=40)
    src = src.expand_dim(0).squeeze_dim(0)
    t = nl.ndarray((P, 32), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    c = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=c, src=x.flatten_dims(0, 1).reshape_dim(0, (B, P))[1, :, 0:1])
    s = nl.ndarray((P, 32), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=t, data2=c.broadcast(1, 32), op=nl.add)
    out = nl.ndarray((P, 32), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def ap_out_of_range(x):
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    w = nl.ndarray((P, 32), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=w, src=t.ap(pattern=[[F, P], [1, 32]], offset=48))  # AP_OOR
    return x


@nki.jit
def ap_strided_partitions(x):
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    v = t.ap(pattern=[[2 * F, P // 2], [1, F]])  # AP_PSTEP
    return x


@nki.jit
def reshape_across_partitions(x):
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    v = t.reshape((P // 2, 2 * F))  # RESHAPE_P
    return x


@nki.jit
def reshape_strided(x):
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    v = t[:, 0:F:2].reshape((P, 2, F // 4))  # fine: splits one strided dim
    w = t.reshape((P, 2, F // 2))[:, :, 0:4].reshape((P, 8))  # RESHAPE_NC
    return x


@nki.jit
def mm_hoisted(lhsT, rhs):
    """lhsT [K, M] . rhs [K, N] with the K tiles of rhs loaded once per N block (a list of
    tiles from one declaration site, all live across the M loop) and lhsT's K tiles per M
    block: the shape of loop that made the scheduler hoist an allocation past the last use of
    the buffer it takes over."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // 512):
        rt = []
        for k in nl.affine_range(K // 128):
            t = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            rt.append(t)
        for m in nl.affine_range(M // 128):
            lt = []
            for k in nl.affine_range(K // 128):
                t = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                lt.append(t)
            ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                nisa.nc_matmul(dst=ps, stationary=lt[k], moving=rt[k], accumulate=k > 0)
            o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=o, src=ps)
            nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=o)
    return out


@nki.jit
def ap_unused_out_of_range(x):
    """Views made for every step of a loop and used only where in range (as
    output_projection_tkg's last PSUM tile): the out-of-range ones are never an error."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in range(F // 16 + 1):
        w = t.ap(pattern=[[F, P], [1, 16]], offset=16 * j)  # j = F // 16 reaches past F
        h = x.ap([[F, P], [1, 16]], 16 * j)
        if j < F // 16:
            c = nl.ndarray((P, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c, src=w)
            nisa.dma_copy(dst=out[:, 16 * j:16 * j + 16], src=c)
            assert h.shape == (P, 16)
    return out


@nki.jit
def ap_out_of_range_used_later(x):
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    v = t.ap(pattern=[[F, P], [1, 32]], offset=48)  # AP_LATE
    w = nl.ndarray((P, 8), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=w, src=v[:, 0:8])  # a slice of it keeps the error
    return x
