"""python/xpuruntime/adapters/pytorch/_flash.py: flash_v2 attention's launches on torch
tensors: flash_v2.cu's mma.sync kernels anywhere, flash_hopper.cu's wgmma kernels on compute
capability 9.0 (the sources and their modules are ``_kernels.py``'s). The settings below are
module globals that tests and the benchmark set here.
"""

import functools

import numpy as np

from ._kernels import _like, _module, _multiprocessors, _ptr, dtype_name, torch_stream

# Warps of a forward block (16 query rows each). 8 share each K/V tile between 128 rows, but
# measured slower than 4 on the H100 (163 vs 181 TFLOP/s, bf16, s=4096, d=128, non-causal).
FORWARD_WARPS = 4
# On compute capability 9.0 (H100, H200) the forward and the backward run flash_hopper.cu's
# wgmma kernels (Note [flash_v2 on Hopper], Note [flash_v2 backward on Hopper]); False keeps
# the portable mma.sync kernels there too.
HOPPER_KERNELS = True
HOPPER_THREADS = 384
# The fewest 128-row blocks a grid needs to take the wgmma kernel (None: one a
# multiprocessor; tests set 0).
HOPPER_MIN_BLOCKS = None


@functools.cache
def _is_hopper(device_index):
    from ..._core import _cuda

    p = _cuda.get_device_properties(device_index)
    return (p.major, p.minor) == (9, 0)


def _hopper_shared_bytes(d, backward):
    """flash_hopper.cu's Layout<T, D>::BYTES (Q, three stages of K and V, 7 mbarriers) or
    BackwardLayout<T, D>::BYTES (K, V, two stages of Q and dO, two dS^T buffers, lse2 and
    delta, 5 mbarriers), each with 1 KB to align the panels."""
    if backward:
        return 2 * 128 * d * 2 + 2 * 2 * 64 * d * 2 + 2 * 128 * 64 * 2 + 2 * 512 + 5 * 8 + 1024
    return 128 * d * 2 + 3 * 2 * 128 * d * 2 + 7 * 8 + 1024


def _use_hopper(torch, device_index, blocks):
    """Whether flash_hopper.cu's kernel runs a grid of `blocks` 128-row blocks. Under one
    block a multiprocessor, the mma.sync kernel's 64-row blocks (twice as many) fill the chip
    better: the small GPT's step (16 x 4 heads of 128 tokens, d = 64) took 1.533 ms with the
    wgmma kernels and 1.512-1.519 without (H100, CUDA graphs)."""
    least = HOPPER_MIN_BLOCKS
    if least is None:
        least = _multiprocessors(torch, device_index)
    return HOPPER_KERNELS and _is_hopper(device_index) and blocks >= least


def _shared_bytes(d, backward, warps=4):
    tile = 64 * (d + 8) * 2
    if backward:
        return 4 * tile + 64 * 72 * 2 + 2 * 64 * 4
    return (16 * warps + 128) * (d + 8) * 2


def _strides3(t):
    return tuple(np.int64(s) for s in t.stride()[:3])


def _mask_strides(mask):
    if mask is None:
        return (np.int64(0),) * 3
    return tuple(np.int64(s) for s in mask.stride()[:3])


def flash_forward(torch, q, k, v, mask, is_causal, scale, like=None):
    """(out, lse2) for [B, H, S, D] inputs (D 64 or 128, last stride 1); lse2 is the
    log-sum-exp in base 2, fp32 [B, H, Sq]; out is laid out as `like` (default q)."""
    b, h, sq, d = q.shape
    sk = k.shape[2]
    out = _like(torch, q if like is None else like)  # Note [Attention outputs' layout]
    lse = torch.empty((b, h, sq), device=q.device, dtype=torch.float32)
    if b * h * sq == 0:
        return out, lse
    name = dtype_name(q.dtype)
    if _use_hopper(torch, q.device.index, -(-sq // 128) * b * h):
        kernel = _module("flash_hopper", None).get_function(f"flash_fwd_sm90_{name}_{d}")
        grid, threads = (-(-sq // 128), b * h), HOPPER_THREADS
        shared = _hopper_shared_bytes(d, False)
    else:
        warps = FORWARD_WARPS
        kernel = _module("flash", None).get_function(f"flash_fwd_{name}_{d}_w{warps}")
        grid, threads = (-(-sq // (16 * warps)), b * h), 32 * warps
        shared = _shared_bytes(d, False, warps)
    kernel(grid, (threads,), (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
           lse.data_ptr(), _ptr(mask), np.int64(sq), np.int64(sk), np.int64(h),
           *_strides3(q), *_strides3(k), *_strides3(v), *_strides3(out), *_mask_strides(mask),
           np.float32(scale), np.int32(bool(is_causal))),
           shared_mem=shared, stream=torch_stream(torch, q.device.index))
    return out, lse


def _grad_like(torch, t):
    """An empty gradient for t in t's layout where rows stay unit-stride (the kernels write
    pairs of elements), else contiguous."""
    g = _like(torch, t)
    return g if g.stride(-1) == 1 else torch.empty(t.shape, device=t.device, dtype=t.dtype)


def flash_backward(torch, grad, q, k, v, mask, out, lse, is_causal, scale, like=None):
    """(dq, dk, dv), each laid out as its input (`like`: the inputs before any aligning
    copy; Note [Attention outputs' layout])."""
    b, h, sq, d = q.shape
    sk = k.shape[2]
    name = dtype_name(q.dtype)
    stream = torch_stream(torch, q.device.index)
    module = _module("flash", None)
    dq, dk, dv = (_grad_like(torch, t) for t in like or (q, k, v))
    dq_acc = torch.zeros((b, h, sq, d), device=q.device, dtype=torch.float32)
    delta = torch.empty((b, h, sq), device=q.device, dtype=torch.float32)
    rows = b * h * sq
    if rows and sk:
        module.get_function(f"flash_delta_{name}_{d}")(
            (-(-rows // 8),), (256,), (delta.data_ptr(), out.data_ptr(), grad.data_ptr(),
                                       np.int64(rows), np.int64(sq), np.int64(h),
                                       *_strides3(out), *_strides3(grad)), stream=stream)
        if _use_hopper(torch, q.device.index, -(-sk // 128) * b * h):
            kernel = _module("flash_hopper", None).get_function(f"flash_bwd_sm90_{name}_{d}")
            grid, threads = (-(-sk // 128), b * h), HOPPER_THREADS
            shared = _hopper_shared_bytes(d, True)
        else:
            kernel = module.get_function(f"flash_bwd_{name}_{d}")
            grid, threads, shared = (-(-sk // 64), b * h), 128, _shared_bytes(d, True)
        kernel(grid, (threads,),
               (q.data_ptr(), k.data_ptr(), v.data_ptr(), grad.data_ptr(), lse.data_ptr(),
                delta.data_ptr(), _ptr(mask), dq_acc.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                np.int64(sq), np.int64(sk), np.int64(h), *_strides3(q), *_strides3(k),
                *_strides3(v), *_strides3(grad), *_mask_strides(mask), *_strides3(dk),
                *_strides3(dv), np.float32(scale), np.int32(bool(is_causal))),
               shared_mem=shared, stream=stream)
    else:  # no query or no key: nothing flows back to the keys and values
        dk.zero_()
        dv.zero_()
    dq.copy_(dq_acc)
    return dq, dk, dv
