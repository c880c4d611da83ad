"""Run specs for scripts/nki-public-census.py: how to call a public NKI kernel (by its file name
and function name, as found in a local mirror) and the project's own numpy reference for it.
Written for gensweep from each kernel's documented contract (its docstring and signature): no
public code is copied here. Shapes are small ones the kernels' tiling accepts, so a census runs
in minutes on the test build. SPECS: (file name, kernel) -> {"args": [--arg ...],
"ref": a function below, "grid": --grid (optional)}.
"""
import numpy as np


def add(a, b):
    return a + b


def exp(x):
    return np.exp(x)


def split_even_odd(x):
    return x[:, 0::2], x[:, 1::2]


def _pool(x, k, f):
    c, h, w = x.shape
    return f(x.reshape(c, h // k, k, w // k, k), axis=(2, 4))


def maxpool(x, k):
    return _pool(x, k, np.max)


def avgpool(x, k):
    return _pool(x, k, np.mean)


def transpose2d(x, shape2d):
    a, b = shape2d
    return x.reshape(x.shape[0], a, b).transpose(0, 2, 1).reshape(x.shape[0], a * b)


def matmul_t(lhs_t, rhs, *_):  # *_: the kernels' meta-parameters (block sizes) after them
    return lhs_t.T @ rhs


def matmul(a, b, *_):
    return a @ b


def rmsnorm(a, g):
    return a / np.sqrt(np.mean(a * a, axis=1, keepdims=True)) * g[None, :]


def layernorm(x, eps, gamma, beta):
    m = x.mean(axis=1, keepdims=True)
    v = (x * x).mean(axis=1, keepdims=True) - m * m
    return (x - m) / np.sqrt(v + eps) * gamma[None, :] + beta[None, :]


_ADD = {"args": ["a_input=bf16:256x1024", "b_input=bf16:256x1024"], "ref": "add"}
_ADD1 = {"args": ["a_input=bf16:128x512", "b_input=bf16:128x512"], "ref": "add"}
_EXP = {"args": ["in_tensor=bf16:128x512"], "ref": "exp"}
_MM = {"args": ["lhsT=bf16:1024x1024", "rhs=bf16:1024x2048"], "ref": "matmul_t"}
_MM_SMALL = {"args": ["lhsT=bf16:128x64", "rhs=bf16:128x512"], "ref": "matmul_t"}
_MM_FULL = {"args": ["lhsT=bf16:2048x2048", "rhs=bf16:2048x1024"], "ref": "matmul_t"}

SPECS = {
    ("tensor_addition_nki_kernels.py", "nki_tensor_add"): _ADD,
    ("spmd_tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_"): dict(_ADD1, grid="1x1"),
    ("getting_started_baremetal.py", "nki_tensor_add_kernel"): _ADD1,
    ("getting_started_jax.py", "nki_tensor_add_kernel"): _ADD1,
    ("getting_started_torch.py", "nki_tensor_add_kernel"): _ADD1,
    ("nki_simulate_example.py", "add_kernel"): {"args": ["a_ptr=fp32:128x512",
                                                         "b_ptr=fp32:128x512"], "ref": "add"},
    ("layout-pass.py", "tensor_exp_kernel_"): _EXP,
    ("layout-loop.py", "tensor_exp_kernel_"): _EXP,
    ("layout-dynamic-loop.py", "tensor_exp_kernel_"): _EXP,
    ("layout-violation.py", "tensor_exp_kernel_"): _EXP,
    ("prof-kernel-benchmark.py", "tensor_exp_kernel_"): _EXP,
    ("prof-kernel-profile.py", "tensor_exp_kernel_"): _EXP,
    ("index-case-1.py", "tensor_split_kernel_"): {"args": ["in_tensor=fp32:128x64"],
                                                  "ref": "split_even_odd"},
    ("index-case-3.py", "tensor_maxpool_kernel_"): {"args": ["in_tensor=fp32:64x32x32",
                                                             "pool_size=2"], "ref": "maxpool"},
    ("average_pool2d_nki_kernels.py", "tensor_avgpool_kernel"): {
        "args": ["in_tensor=fp32:64x32x32", "pool_size=2"], "ref": "avgpool"},
    ("transpose2d_nki_kernels.py", "tensor_transpose2D_kernel_"): {
        "args": ["in_tensor=fp32:128x32", "shape2D=(4,8)"], "ref": "transpose2d"},
    ("matrix_multiplication_nki_kernels.py", "nki_matmul_basic_"): _MM_SMALL,
    ("matrix_multiplication_nki_kernels.py", "nki_matmul_tiled_"): _MM,
    ("matrix_multiplication_nki_kernels.py", "nki_matmul_hoist_load_"): _MM,
    ("matrix_multiplication_nki_kernels.py", "nki_matmul_block_free_dimension_"): _MM,
    ("matrix_multiplication_nki_kernels.py", "nki_matmul_fully_optimized_"): _MM_FULL,
    ("mm-nl-spmd.py", "matmul_128x128x512_spmd"): {
        "args": ["A=bf16:512x128", "B=bf16:128x1024"], "ref": "matmul", "grid": "4x2"},
    ("mm-nisa-spmd.py", "matmul_128x128x512_spmd"): {
        "args": ["A_T=bf16:128x512", "B=bf16:128x1024"], "ref": "matmul_t", "grid": "4x2"},
    ("rmsnorm_nki_kernels.py", "nki_rmsnorm_kernel"): {
        "args": ["a_tensor=fp32:256x512", "g_tensor=fp32:512"], "ref": "rmsnorm"},
    ("layernorm_nki_kernel.py", "nki_layernorm_kernel_v1"): {
        "args": ["input_tensor=fp32:256x512", "epsilon=1e-5", "gamma_vector=fp32:512",
                 "beta_vector=fp32:512"], "ref": "layernorm"},
    ("layernorm_nki_kernel.py", "nki_layernorm_kernel_v2"): {
        "args": ["input_tensor=fp32:256x512", "epsilon=1e-5", "gamma_vector=fp32:512",
                 "beta_vector=fp32:512"], "ref": "layernorm"},
}


# ---- the NKI Library (aws-neuron/nki-library): entry points run from their own files ----------

def cumsum_last(x, *_):
    return np.cumsum(x, axis=-1)


def rope_halves(x, cos, sin, *_):
    """x [d, B, H, S], cos/sin [d/2, B, S]: the two halves of d rotated (contiguous layout)."""
    h = x.shape[0] // 2
    c, s = cos[:, :, None, :], sin[:, :, None, :]
    return np.concatenate([x[:h] * c - x[h:] * s, x[h:] * c + x[:h] * s], axis=0)


def rope_pairs(x, cos, sin, *_):
    """The same rotation of (even, odd) element pairs of d (interleaved layout)."""
    c, s = cos[:, :, None, :], sin[:, :, None, :]
    out = np.empty_like(x)
    out[0::2] = x[0::2] * c - x[1::2] * s
    out[1::2] = x[1::2] * c + x[0::2] * s
    return out


def router_topk_act2_softmax(x, w, w_bias, router_logits, expert_affinities, expert_index,
                             k=4, *_):
    """x [H, T], w [H, E], bias [1, E]: logits = x.T @ w + bias [T, E]; the k largest per token
    (their indices, descending); softmax over those k, scattered back to [T, E] (zeros
    elsewhere). Outputs in argument order: logits, affinities, indices."""
    logits = x.T @ w + w_bias.reshape(1, -1)
    idx = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    top = np.take_along_axis(logits, idx, axis=-1)
    e = np.exp(top - top.max(axis=-1, keepdims=True))
    aff = np.zeros_like(logits)
    np.put_along_axis(aff, idx, e / e.sum(axis=-1, keepdims=True), axis=-1)
    return logits, aff, idx.astype(np.float64)


def out_proj(attention, weight, *_):
    """attention [D, B, N, S], weight [N * D, H]: out [B * S, H] = A @ weight with
    A[b * S + s, n * D + d] = attention[d, b, n, s] (no bias)."""
    D, B, N, S = attention.shape
    return attention.transpose(1, 3, 2, 0).reshape(B * S, N * D) @ weight


def out_proj_bias(attention, weight, bias, *_):
    """out_proj plus the [1, H] bias on every row."""
    return out_proj(attention, weight) + bias.reshape(1, -1)


def qkv_rms(hidden, qkv_w, norm_w, *_):
    """hidden [B, S, H]: RMS norm over H (eps 1e-6) times gamma norm_w [1, H], then @ qkv_w
    [H, I]: out [B, S, I] (the BSD layout)."""
    B, S, H = hidden.shape
    h = hidden.reshape(B * S, H)
    y = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + 1e-6) * norm_w.reshape(1, -1)
    return (y @ qkv_w).reshape(B, S, -1)


def out_proj_t(attention, weight, *_):
    """The same product stored transposed, [H_1 = 128, H_0 = 1, H_2, B * S] with
    h = h_0 * H_1 * H_2 + h_1 * H_2 + h_2 (one core)."""
    o = out_proj(attention, weight)
    bs, h = o.shape
    return o.reshape(bs, 1, 128, h // 128).transpose(2, 1, 3, 0)


def quant_static(hidden, ln_w, scale, *_):
    """fp8 e4m3 static quantization: hidden / scale (one scale, [128, 1] all equal), clipped to
    the format's +-240 (the rounding to fp8 is the model's store)."""
    return np.clip(hidden * (1.0 / scale[0, 0]), -240.0, 240.0)


def rmsnorm_quant_static(hidden, ln_w, scale, *_):
    """RMS normalization over the last axis (eps 1e-6) times gamma ln_w, then the static fp8
    quantization of quant_static."""
    h = hidden.reshape(-1, hidden.shape[-1])
    y = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + 1e-6) * ln_w.reshape(1, -1)
    return quant_static(y.reshape(hidden.shape), ln_w, scale)


_ROPE = ["x_in=bf16:128x2x2x128", "cos=bf16:64x2x128", "sin=bf16:64x2x128"]
LIBRARY_SPECS = [
    ("nkilib.core.cumsum.cumsum", "cumsum", "fp32 2-D ragged",
     {"args": ["x=fp32:200x3000"], "ref": "cumsum_last"}),
    ("nkilib.core.cumsum.cumsum", "cumsum", "bf16 3-D",
     {"args": ["x=bf16:2x3x1000"], "ref": "cumsum_last"}),
    ("nkilib.core.embeddings.rope", "RoPE", "contiguous",
     {"args": _ROPE, "ref": "rope_halves"}),
    ("nkilib.core.embeddings.rope", "RoPE", "interleaved",
     {"args": _ROPE + ["contiguous_layout=False"], "ref": "rope_pairs"}),
    # "wrapper": a launcher of scripts/nki-library-wrappers.py (enum settings, outputs passed in)
    ("nkilib.core.router_topk.router_topk", "router_topk", "T 4, H 3072, E 128, k 4, act2 softmax",
     {"wrapper": "router_topk_act2_softmax",
      "args": ["x=bf16:3072x4", "w=bf16:3072x128", "w_bias=bf16:1x128",
               "router_logits=fp32:4x128", "expert_affinities=fp32:4x128",
               "expert_index=int32:4x4"], "ref": "router_topk_act2_softmax"}),
    ("nkilib.core.output_projection.output_projection_tkg", "output_projection_tkg",
     "B 4, N 8, S 4, D 64, H 3072, no bias",
     {"args": ["attention=bf16:64x4x8x4", "weight=bf16:512x3072"], "ref": "out_proj"}),
    ("nkilib.core.output_projection.output_projection_tkg", "output_projection_tkg",
     "B 4, N 8, S 4, D 64, H 3072, bias",
     {"args": ["attention=bf16:64x4x8x4", "weight=bf16:512x3072", "bias=bf16:1x3072"],
      "ref": "out_proj_bias"}),
    ("nkilib.core.router_topk.router_topk", "router_topk",
     "T 4, H 3072, E 128, k 4, act2 softmax, bias broadcast by stream shuffle",
     {"wrapper": "router_topk_act2_softmax_shuffle",
      "args": ["x=bf16:3072x4", "w=bf16:3072x128", "w_bias=bf16:1x128",
               "router_logits=fp32:4x128", "expert_affinities=fp32:4x128",
               "expert_index=int32:4x4"], "ref": "router_topk_act2_softmax"}),
    ("nkilib.core.qkv.qkv_tkg", "qkv_tkg", "B 1, S 4, H 1024, RMS norm, I 768 (BSD)",
     {"args": ["hidden=bf16:1x4x1024", "qkv_w=bf16:1024x768", "norm_w=bf16:1x1024"],
      "ref": "qkv_rms"}),
    ("nkilib.core.output_projection.output_projection_tkg", "output_projection_tkg",
     "B 4, N 2, S 4, D 64, H 7168, no bias, TRANSPOSE_OUT",
     {"args": ["attention=bf16:64x4x2x4", "weight=bf16:128x7168", "TRANSPOSE_OUT=True"],
      "ref": "out_proj_t"}),
    ("nkilib.core.rmsnorm.rmsnorm_quant", "rmsnorm_quant_kernel",
     "B 1, S 2, H 16384, static quantization only (NO_NORM)",
     {"wrapper": "rmsnorm_quant_static_only",
      "args": ["hidden=bf16:1x2x16384:-4:4", "ln_w=bf16:16384",
               "input_dequant_scale=fp32:128x1:0.0125:0.0125001"], "ref": "quant_static"}),
    ("nkilib.core.rmsnorm.rmsnorm_quant", "rmsnorm_quant_kernel",
     "B 1, S 2, H 4096, RMS norm then static quantization",
     {"wrapper": "rmsnorm_quant_rms_static",
      "args": ["hidden=bf16:1x2x4096:-4:4", "ln_w=bf16:4096",
               "input_dequant_scale=fp32:128x1:0.0125:0.0125001"],
      "ref": "rmsnorm_quant_static"}),
]
