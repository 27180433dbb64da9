"""python/xpuruntime/adapters/pytorch/_kernels.py: the adapter's CUDA kernels (fused norms,
cuDNN attention; flash_v2's launches are in ``_flash.py``) compiled by xpuruntime's NVRTC
JIT and launched on torch tensors.

- Sources live beside this file (``kernels/*.cu``) and compile through ``RawModule``, so the
  memory and disk caches of the built-in kernels serve them (a second process loads the
  cubin from disk).
- Tensors pass as raw device pointers (ints) and every launch goes to torch's current
  stream, wrapped once per stream handle as an ``ExternalStream``: no DLPack handshake, no
  event, nothing a CUDA graph capture could trip on.
- Integer and float parameters pass as NumPy scalars so that they have the C types the
  kernels declare (a Python int would pass 8 bytes).
"""

import functools
import pathlib

import numpy as np

from ...kernels import RawModule
from ...runtime._streams import ExternalStream

_HERE = pathlib.Path(__file__).parent / "kernels"
_NAMES = {"torch.float16": ("f16", 2), "torch.bfloat16": ("bf16", 2), "torch.float32": ("f32", 4)}
_C_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "float"}


_NORM_SOURCES = ("common.cuh", "norm_rows.cuh", "norm_forward.cuh", "norm_backward.cuh",
                 "norms.cu")
_FLASH_HOPPER_SOURCES = ("common.cuh", "wgmma.cuh", "flash_hopper.cu", "flash_hopper_backward.cu")


def _source(*files):
    text = [(_HERE / f).read_text().replace("#pragma once", "") for f in files]
    return "\n".join(text)


@functools.cache
def _module(kind, variant):
    """One RawModule per source variant (dtype and tile choices), compiled on first use."""
    options = ("-std=c++17", "--use_fast_math")
    if kind == "norms":
        type_name, weight_name, vec, iters, stages = variant
        code = _source(*_NORM_SOURCES) + (
            f"\nNORM_ENTRIES({_C_TYPES[type_name]}, {type_name}, {_C_TYPES[weight_name]}, "
            f"{weight_name}, {vec}, {iters})\n")
        options += (f"-DNORM_FORWARD_STAGES={stages[0]}", f"-DNORM_BACKWARD_STAGES={stages[1]}")
    elif kind == "flash_hopper":  # Note [flash_v2 on Hopper]: wgmma needs the sm_90a target
        code = _source(*_FLASH_HOPPER_SOURCES)
        options += ("-arch=sm_90a",)
    else:
        code = _source("common.cuh", "flash_v2.cu")
    return RawModule(code=code, options=options)


_streams = {}


def torch_stream(torch, device_index):
    """torch's current stream on the device, as an xpuruntime Stream (cached per handle)."""
    handle = torch._C._cuda_getCurrentRawStream(device_index)
    key = (handle, device_index)
    s = _streams.get(key)
    if s is None:
        s = _streams[key] = ExternalStream(handle, device=f"cuda:{device_index}")
    return s


def dtype_name(dtype):
    return _NAMES.get(str(dtype), (None, 0))[0]


def _ptr(t):
    return 0 if t is None else t.data_ptr()


@functools.cache
def _multiprocessors(torch, index):
    return torch.cuda.get_device_properties(index).multi_processor_count


@functools.cache
def _shared_per_multiprocessor(torch, index):
    props = torch.cuda.get_device_properties(index)
    return getattr(props, "shared_memory_per_multiprocessor", 0) or 100 << 10


# ---- norms --------------------------------------------------------------------------------

MAX_ITERS = 16
MAX_THREADS = 512  # the kernels' __launch_bounds__
# Vectors each thread holds per row (the row is split over n / (VEC * ITERS) threads, at most
# 512), and backward blocks per multiprocessor where rows load element by element (each sums
# its rows' weight gradients; through the ring, as many as fit).
NORM_ITERS_TARGET = 2
# The forward's: 4 vectors a thread measured faster for 8192-wide bf16 rows (H100 2.22 TB/s
# against 1.78 with 2, H200 2.51-2.65 against 1.93-2.32) and no slower for 1024-wide ones.
NORM_FORWARD_ITERS_TARGET = 4
NORM_BACKWARD_BLOCKS_PER_SM = 4
# Threads of a block: short rows share one (Note [Rows of a norm block] in norm_rows.cuh).
NORM_BLOCK_THREADS = 256
# Rows in flight per thread, forward and backward, where rows load as 16-byte pieces (Note
# [Norm rows in flight]; NORM_FORWARD_STAGES and NORM_BACKWARD_STAGES in norms.cu): 1 holds
# the next row in registers (the forward only), more is a ring in shared memory. The
# forward with 1 against 2, H100 bf16: layer_norm 8192 x 8192 2.62 TB/s against 2.51,
# rms_norm 2.75 against 2.62, layer_norm 65536 x 1024 2.60 against 2.55.
NORM_STAGES = (1, 2)
# Waves of resident blocks in a forward grid whose rows load ahead (1: persistent blocks),
# layer norm and RMS norm. H100 bf16, TB/s at 1 / 2 / 4 waves: layer_norm 8192 x 8192 2.66 /
# 2.63 / 2.59, rms_norm 2.66 / 2.68 / 2.77; 65536 x 1024: layer 2.45 / 2.51 / 2.63, rms 2.67 /
# 2.70 / 2.79; 4096 x 4096: layer 2.15 / 2.06 / 1.94, rms 2.46 / 2.40 / 2.37.
NORM_FORWARD_WAVES = (1, 4)


def norm_plan(dtype, n, *tensors, target=None):
    """(vec, threads per row, iters) for rows of n elements (about `target` vectors a thread,
    NORM_ITERS_TARGET by default), or None when the fused kernel cannot hold a row in
    registers (more than 512 threads x 16 vectors)."""
    target = NORM_ITERS_TARGET if target is None else target
    name, size = _NAMES.get(str(dtype), (None, 0))
    if name is None or n <= 0:
        return None
    vec = 16 // size
    if n % vec or any(t is not None and t.data_ptr() % 16 for t in tensors):
        vec = 1
    vectors = -(-n // vec)
    threads = min(MAX_THREADS, max(32, 32 * -(-vectors // (target * 32))))
    iters = -(-vectors // threads)
    return None if iters > MAX_ITERS else (vec, threads, iters)


def _norm_launch(x2d, weight_dtype, *aligned, target=None):
    """(kernel name suffix, module, vec, threads per row, iters, rows per block, the
    weights' dtype name) of a norm call over x2d and `aligned` (16-byte vectors where all
    are aligned). weight_dtype is x's or float32 (the parameters' gradients come out in it;
    for column_sum, the sum's)."""
    n = x2d.shape[1]
    vec, tpr, iters = norm_plan(x2d.dtype, n, x2d, *aligned, target=target)
    name = dtype_name(x2d.dtype)
    weight_name = dtype_name(weight_dtype)
    per_block = max(1, NORM_BLOCK_THREADS // tpr)
    suffix = f"{name}_{weight_name}_{vec}_{iters}"
    module = _module("norms", (name, weight_name, vec, iters, NORM_STAGES))
    return suffix, module, vec, tpr, iters, per_block, weight_name


def _param_dtype(x2d, weight, bias):
    param = weight if weight is not None else bias
    return x2d.dtype if param is None else param.dtype


def _sum_partials(module, weight_name, dw, db, pw, pb, parts, n, stream):
    """dw and db (either may be None) from the partial rows pw and pb: norm_grad_sum."""
    module.get_function(f"norm_grad_sum_{weight_name}")(
        (-(-n // 32),), (512,), (_ptr(dw), _ptr(db), _ptr(pw), _ptr(pb), np.int32(parts),
                                 np.int32(n)), stream=stream)


def norm_forward(torch, rms, x2d, weight, bias, eps):
    """(y, mean, rstd) of a [rows, n] contiguous x; mean is empty for RMS norm."""
    rows, n = x2d.shape
    suffix, module, vec, tpr, iters, per_block, _ = _norm_launch(
        x2d, _param_dtype(x2d, weight, bias), weight, bias, target=NORM_FORWARD_ITERS_TARGET)
    y = torch.empty_like(x2d)
    rstd = torch.empty(rows, device=x2d.device, dtype=torch.float32)
    mean = torch.empty(0 if rms else rows, device=x2d.device, dtype=torch.float32)
    if rows == 0:
        return y, mean, rstd
    kernel = module.get_function(f"{'rms' if rms else 'layer'}_norm_fwd_{suffix}")
    threads = tpr * per_block
    stages = NORM_STAGES[0]
    ring = _ring_bytes(vec, iters, threads, stages, 1) if stages > 1 else 0
    grid = _norm_grid(torch, x2d, rows, per_block, kernel, threads, ring, 1 << 20,
                      persistent=vec > 1 and stages > 0, waves=NORM_FORWARD_WAVES[rms])
    kernel((grid,), (threads,), (
        y.data_ptr(), _ptr(None if rms else mean), rstd.data_ptr(), x2d.data_ptr(),
        _ptr(weight), _ptr(None if rms else bias), np.int64(rows), np.int32(n),
        np.int32(tpr), np.float32(eps)), shared_mem=ring,
        stream=torch_stream(torch, x2d.device.index))
    return y, mean, rstd


def _ring_bytes(vec, iters, threads, stages, sources):
    """Shared memory of the rows in flight (none where rows load element by element)."""
    return stages * sources * iters * threads * 16 if vec > 1 else 0


def _norm_grid(torch, x2d, rows, per_block, kernel, threads, ring, most, persistent=None,
               waves=1):
    """Blocks of a norm launch: persistent (as many as the multiprocessors hold at once,
    Note [Norm rows in flight]) when rows are loaded ahead (by default: when they go through
    a ring of `ring` bytes), else one per row group."""
    groups = -(-rows // per_block)
    if not (bool(ring) if persistent is None else persistent):
        return max(1, min(groups, most))
    index = x2d.device.index
    fit = _resident_blocks(torch, index, kernel, threads, ring)
    return max(1, min(groups, waves * fit * _multiprocessors(torch, index)))


_RESIDENT = {}


def _resident_blocks(torch, index, kernel, threads, dynamic):
    """Blocks of `kernel` a multiprocessor holds at once (CUDA's occupancy rules: threads,
    registers in 256-register warp units, shared memory with 1 KB reserved a block). More
    blocks than that would run in a second wave, at a fraction of the width."""
    # The kernel object, not its name: modules of other ring depths (NORM_STAGES) define
    # functions of the same names with other register counts.
    key = (index, kernel, threads, dynamic)
    fit = _RESIDENT.get(key)
    if fit is None:
        props = torch.cuda.get_device_properties(index)
        regs = getattr(props, "regs_per_multiprocessor", 0) or 65536
        most_threads = getattr(props, "max_threads_per_multi_processor", 0) or 2048
        warps = -(-threads // 32)
        per_warp = -(-kernel.num_regs * 32 // 256) * 256
        static = kernel.shared_size_bytes
        fit = min(most_threads // threads, regs // max(1, warps * per_warp),
                  _shared_per_multiprocessor(torch, index) // (dynamic + static + 1024), 32)
        fit = _RESIDENT[key] = max(1, fit)
    return fit


def norm_backward(torch, rms, dy2d, x2d, weight, bias, mean, rstd, want_weight, want_bias):
    """(dx, dweight or None, dbias or None), the parameters' gradients in their dtype
    (bias: only its dtype is read)."""
    rows, n = x2d.shape
    param_dtype = _param_dtype(x2d, weight, bias)
    suffix, module, vec, tpr, iters, per_block, weight_name = _norm_launch(
        x2d, param_dtype, weight, bias, dy2d)
    dx = torch.empty_like(x2d)
    threads = tpr * per_block
    ring = _ring_bytes(vec, iters, threads, NORM_STAGES[1], 2)
    blocks = NORM_BACKWARD_BLOCKS_PER_SM * _multiprocessors(torch, x2d.device.index)
    dynamic = max(ring, threads * vec * 4)  # the ring, then block_partial's stage
    kernel = module.get_function(f"{'rms' if rms else 'layer'}_norm_bwd_{suffix}")
    grid = _norm_grid(torch, x2d, rows, per_block, kernel, threads, ring and dynamic, blocks)
    pw = torch.empty((grid, n), device=x2d.device, dtype=torch.float32) if want_weight else None
    pb = torch.empty((grid, n), device=x2d.device, dtype=torch.float32) if want_bias else None
    dw = torch.empty(n, device=x2d.device, dtype=param_dtype) if want_weight else None
    db = torch.empty(n, device=x2d.device, dtype=param_dtype) if want_bias else None
    stream = torch_stream(torch, x2d.device.index)
    if rows:
        kernel(
            (grid,), (threads,), (dx.data_ptr(), _ptr(pw), _ptr(pb), dy2d.data_ptr(),
                                  x2d.data_ptr(), _ptr(weight), _ptr(None if rms else mean),
                                  rstd.data_ptr(), np.int64(rows), np.int32(n),
                                  np.int32(tpr)),
            shared_mem=dynamic, stream=stream)
    else:
        for p in (pw, pb):
            if p is not None:
                p.zero_()
    if want_weight or want_bias:
        _sum_partials(module, weight_name, dw, db, pw, pb, grid, n, stream)
    return dx, dw, db


def column_sum(torch, g2d, dtype):
    """The sum of g2d's rows ([rows, n] contiguous, 16 or 32 bits) in dtype (x's or
    float32), accumulated in float32 in a fixed order: a linear layer's bias gradient. None
    when the norms' row plan cannot hold a row (the caller sums with torch)."""
    rows, n = g2d.shape
    if norm_plan(g2d.dtype, n, g2d) is None or dtype_name(dtype) is None or rows == 0:
        return None
    suffix, module, vec, tpr, _, per_block, out_name = _norm_launch(g2d, dtype)
    grid = max(1, min(-(-rows // per_block),
                      NORM_BACKWARD_BLOCKS_PER_SM * _multiprocessors(torch, g2d.device.index)))
    partial = torch.empty((grid, n), device=g2d.device, dtype=torch.float32)
    out = torch.empty(n, device=g2d.device, dtype=dtype)
    stream = torch_stream(torch, g2d.device.index)
    threads = tpr * per_block
    module.get_function(f"column_partials_{suffix}")(
        (grid,), (threads,), (partial.data_ptr(), g2d.data_ptr(), np.int64(rows), np.int32(n),
                              np.int32(tpr)), shared_mem=threads * vec * 4, stream=stream)
    _sum_partials(module, out_name, None, out, None, partial, grid, n, stream)
    return out


# ---- attention outputs -------------------------------------------------------------------

# Note [Attention outputs' layout]: the output and the gradients take their input's layout
# (torch.empty_like orders the strides as the input's), as torch's SDPA does. q, k and v cut
# from one [B, S, 3, H, D] projection and transposed to [B, H, S, D] then give an output
# whose transpose back to [B, S, H * D] is a view, and gradients that the projection's
# backward gathers without transposing: contiguous [B, H, S, D] tensors cost a copy and a
# transposing cat per layer (36 us of a small GPT's 1.6 ms step on the H200).
def _like(torch, t, last=None):
    """An empty tensor of t's shape (last dimension `last`) in t's stride order; fake
    tensors (a custom op's fake kernel) get the same strides as real ones."""
    if last is None or last == t.shape[-1]:
        return torch.empty_like(t, memory_format=torch.preserve_format)
    order = sorted(range(t.dim()), key=lambda i: -t.stride(i))
    shape = list(t.shape[:-1]) + [last]
    base = torch.empty([shape[i] for i in order], device=t.device, dtype=t.dtype)
    return base.permute([order.index(i) for i in range(t.dim())])


def compile_sources(arch="sm_90"):
    """Compiles every kernel source for arch with NVRTC (no GPU needed): a test hook."""
    from ..._core import _cuda

    compiled = []
    flash = _source("common.cuh", "flash_v2.cu")
    compiled.append(_cuda._compile(flash, "flash_fwd_bf16_128_w8", arch=arch,
                                   options=["-std=c++17", "--use_fast_math"]))
    hopper = _source(*_FLASH_HOPPER_SOURCES)
    compiled.append(_cuda._compile(hopper, "flash_fwd_sm90_bf16_128", arch=arch,
                                   options=["-std=c++17", "--use_fast_math", "-arch=sm_90a"]))
    for name in ("f16", "bf16", "f32"):
        for weight_name in {name, "f32"}:
            for vec in ((1, 8) if name != "f32" else (1, 4)):
                code = _source(*_NORM_SOURCES) + (
                    f"\nNORM_ENTRIES({_C_TYPES[name]}, {name}, {_C_TYPES[weight_name]}, "
                    f"{weight_name}, {vec}, 4)\n")
                compiled.append(_cuda._compile(
                    code, f"layer_norm_bwd_{name}_{weight_name}_{vec}_4", arch=arch,
                    options=["-std=c++17", "--use_fast_math"]))
    return compiled


# ---- cudnn --------------------------------------------------------------------------------


def _layouts(tensors):
    out = []
    for t in tensors:
        out += list(t.shape) + list(t.stride())
    return out


_TORCH_TO_XRT = {}


def _xrt_dtype(torch, dtype):
    if not _TORCH_TO_XRT:
        from ... import _core
        _TORCH_TO_XRT.update({torch.float16: _core.float16, torch.bfloat16: _core.bfloat16})
    return _TORCH_TO_XRT[dtype]


def _cudnn_run(torch, backward, q, tensors, mask, is_causal, stats, write_stats, scale):
    from ..._core import _cuda

    if mask is not None:
        tensors = tensors + (mask,)
    index = q.device.index
    plan, workspace = _cuda.cudnn_attention_plan(
        backward, _xrt_dtype(torch, q.dtype), index, bool(is_causal), write_stats,
        mask is not None, _layouts(tensors))
    space = torch.empty((max(workspace, 1),), dtype=torch.uint8, device=q.device)
    _cuda.cudnn_attention_run(plan, [t.data_ptr() for t in tensors],
                              0 if stats is None else stats.data_ptr(), space.data_ptr(),
                              float(scale), torch._C._cuda_getCurrentRawStream(index))


def cudnn_forward(torch, q, k, v, mask, is_causal, scale, with_stats=True, like=None):
    """(out, stats) of cuDNN's fused attention for [B, H, S, D] inputs (16-byte rows, last
    stride 1); stats is fp32 [B, H, Sq, 1] (max + log of the row's sum), None without
    with_stats; out is laid out as `like` (default q)."""
    b, h, sq, _ = q.shape
    out = _like(torch, q if like is None else like, v.shape[-1])
    stats = (torch.empty((b, h, sq, 1), device=q.device, dtype=torch.float32)
             if with_stats else None)
    _cudnn_run(torch, False, q, (q, k, v, out), mask, is_causal, stats, with_stats, scale)
    return out, stats


def cudnn_backward(torch, grad, q, k, v, mask, out, stats, is_causal, scale, likes=None):
    """(dq, dk, dv) from the forward's out and stats, laid out as `likes` (default q, k and
    v: Note [Attention outputs' layout])."""
    dq, dk, dv = (_like(torch, t) for t in (likes or (q, k, v)))
    _cudnn_run(torch, True, q, (q, k, v, out, grad, dq, dk, dv), mask, is_causal, stats,
               False, scale)
    return dq, dk, dv
