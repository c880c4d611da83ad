"""float64 numpy references for tests/nki/kernels (gensweep nki run --reference)."""
import numpy as np


def add(a, b):
    return a + b


def rowops(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return 2.0 * e / e.sum(axis=1, keepdims=True)


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def unary(x):
    from math import erf
    gelu = x * 0.5 * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))
    return np.tanh(_sig(x)) + np.maximum(x, 0) + x * x + x * _sig(x) + gelu


def matmul(lhsT, rhs):
    return lhsT.T @ rhs


def matmul_plain(x, y):
    return x @ y


def transpose(x):
    return x.T


def pool_max(x, k):
    c, h, w = x.shape
    return x.reshape(c, h // k, k, w // k, k).max(axis=(2, 4))


def strided(x):
    return x[:, ::2]


def scalar_new(x, bias):
    u = x * 3.0 + bias
    v = np.exp(0.5 * u + bias)
    return v, v.sum(axis=1, keepdims=True)


def memset_iota(x):
    P, F = x.shape
    return 2.0 * (5 + F * np.arange(P)[:, None] + np.arange(F)[None, :]).astype(np.float64)


def wrong_add(a, b):
    return a - b


def rmsnorm(x, eps):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)


def layernorm(x, eps):
    c = x - x.mean(axis=1, keepdims=True)
    return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + eps)


def through_bf16(x):
    """x rounded to fp32, then to bfloat16 (nearest even), as a converting DMA stores it."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def raising(*_):
    raise ValueError("this reference cannot compute")


def scan_mul_add(a, b):
    h, out = 0.5, np.empty_like(a)
    for i in range(a.shape[1]):
        h = a[:, i] * h + b[:, i]
        out[:, i] = h
    return out


def scan_mul_max(a, b, h0):
    h, out = h0[:, 0], np.empty_like(a)
    for i in range(a.shape[1]):
        h = np.maximum(a[:, i] * h, b[:, i])
        out[:, i] = h
    return out


def spin(*_):
    """A reference that never returns (stopped by --wall-limit or a signal)."""
    import hostile
    hostile._mark("reference")
    while True:
        pass


def noisy(*_):
    raise ValueError("\x1b[2J\x1b]0;owned\x07\u202eevil")
