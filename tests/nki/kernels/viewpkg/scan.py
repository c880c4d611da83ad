"""Row cumsum with tensor_tensor_scan over free tiles, the carry passed on through `initial`;
imports its helpers relatively (a module of a package)."""
import nki
import nki.isa as nisa
import nki.language as nl

from .helpers import P_MAX, ceil_div

TILE = 512


@nki.jit
def cumsum_rows(x):
    R, F = x.shape
    out = nl.ndarray((R, F), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in range(ceil_div(R, P_MAX)):
        p = min(P_MAX, R - r * P_MAX)
        carry = nl.ndarray((P_MAX, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=carry, value=0.0)
        ones = nl.ndarray((P_MAX, TILE), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=ones, value=1.0)
        for f in range(ceil_div(F, TILE)):
            n = min(TILE, F - f * TILE)
            d = nl.ndarray((P_MAX, TILE), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=d[0:p, 0:n], src=x[r * P_MAX:r * P_MAX + p, f * TILE:f * TILE + n])
            s = nl.ndarray((P_MAX, TILE), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor_scan(dst=s[0:p, 0:n], data0=ones[0:p, 0:n], data1=d[0:p, 0:n],
                                    initial=carry[0:p, 0:1], op0=nl.multiply, op1=nl.add)
            nisa.dma_copy(dst=out[r * P_MAX:r * P_MAX + p, f * TILE:f * TILE + n],
                          src=s[0:p, 0:n])
            nisa.tensor_copy(dst=carry[0:p, 0:1], src=s[0:p, n - 1:n])
    return out
