"""NKI kernels for the top-k selection instructions (max8, nc_find_index8, nc_match_replace8)
in both API styles. Written for gensweep's tests (tests/nki/test_topk.py)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def top16_new(x):
    """Two rounds of max8 / nc_find_index8 / nc_match_replace8 per row: the 16 largest values
    of each row (descending) and their indices, dst= style."""
    P, F = x.shape
    vals = nl.ndarray((P, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 16), dtype=nl.uint32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    for r in range(2):
        m = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(dst=m, src=t)
        i = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=i, data=t, vals=m)
        nisa.nc_match_replace8(dst=t, data=t, vals=m, imm=float("-inf"))
        nisa.dma_copy(dst=vals[:, r * 8:(r + 1) * 8], src=m)
        nisa.dma_copy(dst=idx[:, r * 8:(r + 1) * 8], src=i)
    return vals, idx


@nki.jit
def top8_old(x):
    """One round, value-returning style, indices from nc_match_replace8's dst_idx; also stores
    the replaced row."""
    P, F = x.shape
    vals = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    rest = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nisa.max8(src=t, dtype=nl.float32)
    i = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.sbuf)
    r = nisa.nc_match_replace8(data=t, vals=m, imm=-5.0, dst_idx=i, dtype=nl.float32)
    nl.store(vals, value=m)
    nl.store(idx, value=i)
    nl.store(rest, value=r)
    return vals, idx, rest


@nki.jit
def find_old(x):
    """nc_find_index8 in the value-returning style, on the values max8 found."""
    P, F = x.shape
    idx = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(idx, value=nisa.nc_find_index8(data=t, vals=nisa.max8(src=t)))
    return idx


@nki.jit
def max8_short(x):
    """max8 over fewer than 8 elements per partition: the builder refuses it at this line."""
    P, F = x.shape
    out = nl.ndarray((P, 8), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nisa.max8(src=t))  # MARK: short
    return out
