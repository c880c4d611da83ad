"""Launchers for NKI Library entry points whose arguments are no command-line literals
(configuration enums, outputs passed in as mutable tensors): each calls the entry point,
imported unmodified from a checkout on PYTHONPATH (`nkilib.core...`), with fixed settings.
Written for gensweep's census (scripts/nki-public-census.py, LIBRARY_SPECS "wrapper"); no
public code is copied here. The outputs are kernel arguments written and never read: the
reference gets zeros in their places and returns them in argument order."""


def router_topk_act2_softmax(x, w, w_bias, router_logits, expert_affinities, expert_index, k=4):
    """nkilib.core.router_topk.router_topk as its test's "PE broadcast bias" case: x in HBM
    as [H, T], softmax over the top k logits (router_pre_norm=False), the bias broadcast over
    the tokens on the tensor engine, one-hot scatter of the affinities."""
    from nkilib.core.router_topk.router_topk import router_topk
    from nkilib.core.utils.common_types import RouterActFnType
    router_topk(x=x, w=w, w_bias=w_bias, router_logits=router_logits,
                expert_affinities=expert_affinities, expert_index=expert_index,
                act_fn=RouterActFnType.SOFTMAX, k=k, x_hbm_layout=0, x_sb_layout=0,
                router_pre_norm=False, use_PE_broadcast_w_bias=True)


def rmsnorm_quant_static_only(hidden, ln_w, input_dequant_scale):
    """nkilib.core.rmsnorm.rmsnorm_quant.rmsnorm_quant_kernel with its configuration object
    RmsNormQuantKernelArgs(norm_type=NO_NORM, quantization_type=STATIC): the fp8 quantization
    of hidden by a static scale, without the RMS normalization (its test's quant_only case)."""
    from nkilib.core.rmsnorm.rmsnorm_quant import RmsNormQuantKernelArgs, rmsnorm_quant_kernel
    from nkilib.core.utils.common_types import NormType, QuantizationType
    kargs = RmsNormQuantKernelArgs(norm_type=NormType.NO_NORM,
                                   quantization_type=QuantizationType.STATIC)
    return rmsnorm_quant_kernel(hidden, ln_w, kargs, input_dequant_scale)


def rmsnorm_quant_rms_static(hidden, ln_w, input_dequant_scale):
    """The same entry point with the RMS normalization (norm_type=RMS_NORM, eps 1e-6) before the
    static quantization: the gamma step is nisa.scalar_tensor_tensor."""
    from nkilib.core.rmsnorm.rmsnorm_quant import RmsNormQuantKernelArgs, rmsnorm_quant_kernel
    from nkilib.core.utils.common_types import NormType, QuantizationType
    kargs = RmsNormQuantKernelArgs(norm_type=NormType.RMS_NORM,
                                   quantization_type=QuantizationType.STATIC)
    return rmsnorm_quant_kernel(hidden, ln_w, kargs, input_dequant_scale)


def router_topk_act2_softmax_shuffle(x, w, w_bias, router_logits, expert_affinities,
                                     expert_index, k=4):
    """router_topk as router_topk_act2_softmax, with the bias broadcast over the tokens by the
    vector engine's stream shuffle (use_PE_broadcast_w_bias=False, the entry point's default)."""
    from nkilib.core.router_topk.router_topk import router_topk
    from nkilib.core.utils.common_types import RouterActFnType
    router_topk(x=x, w=w, w_bias=w_bias, router_logits=router_logits,
                expert_affinities=expert_affinities, expert_index=expert_index,
                act_fn=RouterActFnType.SOFTMAX, k=k, x_hbm_layout=0, x_sb_layout=0,
                router_pre_norm=False, use_PE_broadcast_w_bias=False)
