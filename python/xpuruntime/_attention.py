"""python/xpuruntime/_attention.py: ``xrt.nn.scaled_dot_product_attention`` and the kernels of op
``attention``.

- ``cudnn``: cuDNN's fused flash attention through its graph API (CUDA, float16 and bfloat16,
  head dims that are multiples of 8 up to 256; Note [cuDNN attention graphs] in
  ``cpp/src/cuda/attention_cudnn.cpp``). Needs cuDNN 9 (``pip install xpuruntime[cudnn]``).
- ``rows``: the CPU's one-kernel form for float32 and float64 (Note [CPU attention] in
  ``cpp/src/core/norm_ops.cpp``): query rows in register tiles against densely laid out keys
  and values, the softmax in between in cache. About 6x the composed form for 4 heads of
  64 x 64 on a 2-core machine.
- ``math``: the composed form, matmul, softmax (one row kernel), matmul: any device and real
  floating dtype; what runs where the others cannot.
- The PyTorch adapter adds ``flash_v2`` and ``torch`` and their runners (``add_runner``).

A ``KernelPolicy`` pins one (``KernelPolicy(attention="math")``), ``BestPerformance`` times
them, and ``explain()`` records each choice. ``cudnn`` ranks first where it applies: on an H200
it runs bfloat16 attention at about twice the speed of ``flash_v2`` (docs/pytorch.md).
"""

import math

from . import _core

_PRIORITY_CUDNN = 20  # above the adapter's flash_v2 (10): measured twice as fast
_PRIORITY_ROWS = 10  # above math (0) on the CPU
_runners = {}  # kernel name -> fn(q, k, v, mask, is_causal, scale) on 4-D Tensors
_cudnn_state = []  # [bool]: whether cuDNN loads, asked once
# (dtype, head dims, masked) that cuDNN built no plan for: the kernel declines them from then
# on, and the call that found out ran the math kernel (Note [cuDNN plan failures] in
# cudnn_graph.cpp: only a lasting failure, or a passing one seen _CUDNN_TRIES times in a row).
_cudnn_refused = set()
_cudnn_failures = {}  # signature -> failures that may pass since its last plan was built
_CUDNN_TRIES = 3


def add_runner(name, fn):
    """Lets ``scaled_dot_product_attention`` run kernel `name` registered elsewhere (the
    PyTorch adapter's): fn(q, k, v, mask, is_causal, scale) on [B, H, S, D] Tensors, the mask
    additive in q's dtype or None."""
    _runners[name] = fn


def cudnn_available():
    """Whether cuDNN 9 can be loaded (asked once per process)."""
    if not _cudnn_state:
        try:
            _core._cuda.cudnn_version()
            _cudnn_state.append(True)
        except _core.XpuRuntimeError:  # not installed, too old, no driver: see library_status
            _cudnn_state.append(False)
    return _cudnn_state[0]


def scaled_dot_product_attention(query, key, value, attn_mask=None, is_causal=False,
                                 scale=None):
    """softmax(query @ keyᵀ · scale + mask) @ value, as ``torch.nn.functional.
    scaled_dot_product_attention`` (without dropout): query (..., Sq, D), key (..., Skv, D),
    value (..., Skv, Dv) with the same leading sizes, one real floating dtype, one device.

    attn_mask: a bool Tensor (True: the key takes part) or a floating one added to the scores,
    broadcastable to (..., Sq, Skv). is_causal: query i sees keys 0..i (top-left aligned; not
    with attn_mask). scale: 1/sqrt(D) when None. Returns (..., Sq, Dv). A row whose keys are
    all masked gives NaN on the ``math`` kernel, as in PyTorch.

    Runs the kernel the policy picks for op ``attention``: ``cudnn`` on CUDA for float16 and
    bfloat16, else ``math`` (see the module's docstring)."""
    q, k, v = query, key, value
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, _core.Tensor):
            raise TypeError(f"scaled_dot_product_attention: {name} must be an xpuruntime "
                            f"Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(f"scaled_dot_product_attention: {name} needs at least 2 "
                             f"dimensions (..., S, D), got shape {t.shape}")
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in _FLOATING:
        raise TypeError(f"scaled_dot_product_attention: query, key and value must share one "
                        f"real floating dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"scaled_dot_product_attention: query, key and value are on "
                         f"{q.device}, {k.device}, {v.device}; they must share one device")
    lead = q.shape[:-2]
    if k.shape[:-2] != lead or v.shape[:-2] != lead or q.ndim != k.ndim or q.ndim != v.ndim:
        raise ValueError(f"scaled_dot_product_attention: query {q.shape}, key {k.shape} and "
                         f"value {v.shape} must have the same leading sizes")
    if k.shape[-1] != q.shape[-1] or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: key {k.shape} must be (..., Skv, "
                         f"{q.shape[-1]}) and value {v.shape} (..., {k.shape[-2]}, Dv)")
    if attn_mask is not None and is_causal:
        raise ValueError("scaled_dot_product_attention: give attn_mask or is_causal, not both")
    if scale is None:
        scale = _default_scale(q)
    elif isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"scaled_dot_product_attention: scale must be a real number, got "
                        f"{type(scale).__name__}")
    mask = None if attn_mask is None else additive_mask(attn_mask, q, k)
    return attend(q, k, v, mask, bool(is_causal), float(scale))


def attend(q, k, v, mask, is_causal, scale):
    """scaled_dot_product_attention after its checks: operands it would accept, mask None or
    additive in q's dtype (the native engine's attention node, whose operands the plan has
    typed and placed, calls it directly)."""
    lead = q.shape[:-2]
    q4, k4, v4 = (_as_4d(t) for t in (q, k, v))
    m4 = None if mask is None else _as_4d(_core.broadcast_to(mask, lead + mask.shape[-2:]))
    inputs = [q4, k4, v4] + ([m4] if m4 is not None else [])
    args = (q4, k4, v4, m4, is_causal, scale)
    out = _core._run_selected("attention", inputs, [q4], lambda kernel: _run(kernel, args))
    return out if len(lead) == 2 else _core.reshape(out, lead + out.shape[-2:])


def _default_scale(q):
    return 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0


def _run(kernel, args):
    if kernel == "cudnn":
        return _cudnn(*args)
    if kernel == "rows":
        return _rows(*args)
    if kernel == "math":
        return _math(*args)
    if kernel in _runners:
        return _runners[kernel](*args)
    raise _core.UnsupportedOperationError(
        f"scaled_dot_product_attention: kernel {kernel!r} of op 'attention' has no runner")


_FLOATING = (_core.float16, _core.bfloat16, _core.float32, _core.float64)


def additive_mask(mask, q, k):
    if not isinstance(mask, _core.Tensor):
        raise TypeError(f"scaled_dot_product_attention: attn_mask must be a Tensor or None, "
                        f"got {type(mask).__name__}")
    if mask.device != q.device:
        raise ValueError(f"scaled_dot_product_attention: attn_mask is on {mask.device}, the "
                         f"query on {q.device}")
    want = q.shape[:-2] + (q.shape[-2], k.shape[-2])
    try:
        _core.broadcast_to(mask, want)
    except ValueError:
        raise ValueError(f"scaled_dot_product_attention: attn_mask of shape {mask.shape} does "
                         f"not broadcast to {want}") from None
    if mask.dtype == _core.bool:
        return _core.where(mask, _constant(0.0, q.dtype, q.device),
                           _constant(-math.inf, q.dtype, q.device))
    if mask.dtype not in _FLOATING:
        raise TypeError(f"scaled_dot_product_attention: attn_mask must be bool or floating, "
                        f"got {mask.dtype}")
    return mask if mask.dtype == q.dtype else _core.astype(mask, q.dtype)


def _as_4d(t):
    """[B, H, S, D]: leading sizes folded into one (or padded with ones)."""
    if t.ndim == 4:
        return t
    lead = math.prod(t.shape[:-2])
    return _core.reshape(t, (1, lead) + t.shape[-2:] if t.ndim <= 3 else
                         (lead, 1) + t.shape[-2:])


# Note [Attention constants]: the 0-d fill values and causal masks are made once per dtype,
# shape and device and kept. Besides saving the fills, this keeps a call free of new
# host-to-device values, which a CUDA graph capture (the native engine's) cannot take: the
# first (eager) run makes them.
_constants = {}


def _kept(key, make):
    c = _constants.get(key)
    if c is None:
        if len(_constants) >= 256:  # many shapes (dynamic ones): start over
            _constants.clear()
        c = _constants[key] = make()
    return c


def _constant(value, dtype, device):
    return _kept((value, dtype, str(device)),
                 lambda: _core.full((), value, dtype=dtype, device=device))


def causal_keep(sq, skv, device):
    """The bool (sq, skv) lower triangle (True: key j <= query i), kept per shape."""
    return _kept(("causal", sq, skv, str(device)), lambda: _core.tril(
        _core.ones((sq, skv), dtype=_core.bool, device=device)))


def masked_fill_value(dtype, device):
    """A kept 0-d -inf of dtype on device (Note [Attention constants])."""
    return _constant(-math.inf, dtype, device)


def _math(q, k, v, mask, is_causal, scale):
    scores = _core.matmul(q, _core.matrix_transpose(k)) * scale
    if mask is not None:
        scores = scores + mask
    if is_causal:
        sq, skv = scores.shape[-2:]
        scores = _core.where(causal_keep(sq, skv, q.device), scores,
                             _constant(-math.inf, scores.dtype, q.device))
    return _core.matmul(_core._softmax(scores, -1, False), v)


def inference_stats(is_causal):
    """Whether a forward that needs no gradient still writes the softmax statistics.

    Note [cuDNN inference statistics]: cuDNN's heuristics pick a different engine for the
    graph with the statistics written than for the one that keeps them virtual, and neither
    is faster everywhere. Measured on an H200 (cuDNN 9.19, 4x16x4096x128, TFLOP/s written /
    virtual): bfloat16 591 / 667 and float16 585 / 603 without a mask, causal 581 / 555 and
    568 / 543. So causal calls write them (a float per query row), others do not."""
    return is_causal


def _cudnn_ready(t):
    """t with a last stride of 1, 16-byte rows and start, copying only when it lacks them."""
    ok = (t.strides[-1] == 1 and t._data_ptr() % 16 == 0
          and all(s % 8 == 0 for s, n in zip(t.strides[:-1], t.shape[:-1]) if n > 1))
    return t if ok else _core.asarray(t, copy=True)


def _layout(t):
    return list(t.shape) + list(t.strides)


# (dtype, device, causal, each operand's shape and strides) -> (plan id, workspace bytes,
# statistics shape or None). The output takes the query's layout (_core._attention_output,
# as PyTorch's fused attention: merging heads split from [B, S, H, D] is a view):
# a call whose operands are aligned and laid out as a previous call's runs that plan with no
# layouts rebuilt (about half of the call's host time).
_cudnn_plans = {}


def _cudnn(q, k, v, mask, is_causal, scale):
    operands = (q, k, v) if mask is None else (q, k, v, mask)
    key = (q.dtype, q.device.index, is_causal) + tuple((t.shape, t.strides) for t in operands)
    entry = _cudnn_plans.get(key)
    if entry is None or any(t._data_ptr() % 16 for t in operands):
        return _cudnn_planned(q, k, v, mask, is_causal, scale, key)
    plan, workspace, stats_shape = entry
    device = q.device
    out = _core._attention_output(q, v.shape[-1])
    stats = None if stats_shape is None else \
        _core.empty(stats_shape, dtype=_core.float32, device=device)
    space = _core.empty((workspace,), dtype=_core.uint8, device=device)
    pointers = [t._data_ptr() for t in operands]
    pointers.insert(3, out._data_ptr())
    _core._cuda.cudnn_attention_run(plan, pointers, 0 if stats is None else stats._data_ptr(),
                                    space._data_ptr(), scale,
                                    _core.current_stream(device).ptr)
    return out


def _cudnn_planned(q, k, v, mask, is_causal, scale, key):
    """_cudnn's first call for a layout (and any call with operands to copy first): builds
    or finds the plan, runs it, and keeps it under `key` when nothing was copied."""
    given = (q, k, v, mask)
    q, k, v = (_cudnn_ready(t) for t in (q, k, v))
    if mask is not None:
        mask = _cudnn_ready(mask)
    b, h, sq, _ = q.shape
    device = q.device
    out = _core._attention_output(q, v.shape[-1])
    tensors = [q, k, v, out] + ([mask] if mask is not None else [])
    layouts = []
    for t in tensors:
        layouts += _layout(t)
    stats = _core.empty((b, h, sq, 1), dtype=_core.float32, device=device) if \
        inference_stats(is_causal) else None
    try:
        plan, workspace = _core._cuda.cudnn_attention_plan(
            False, q.dtype, device.index, is_causal, stats is not None, mask is not None,
            layouts)
    except _core.UnsupportedOperationError:
        _cudnn_refused.add(_signature(q, v, mask))
        return _math(q, k, v, mask, is_causal, scale)
    except _core.CudaError:  # it may pass (memory pressure): this call only, up to a point
        signature = _signature(q, v, mask)
        _cudnn_failures[signature] = _cudnn_failures.get(signature, 0) + 1
        if _cudnn_failures[signature] >= _CUDNN_TRIES:
            _cudnn_refused.add(signature)
        return _math(q, k, v, mask, is_causal, scale)
    if _cudnn_failures:  # a plan was built: earlier failures passed
        _cudnn_failures.pop(_signature(q, v, mask), None)
    space = _core.empty((max(workspace, 1),), dtype=_core.uint8, device=device)
    _core._cuda.cudnn_attention_run(plan, [t._data_ptr() for t in tensors],
                                    0 if stats is None else stats._data_ptr(),
                                    space._data_ptr(), scale,
                                    _core.current_stream(device).ptr)
    if all(a is b for a, b in zip(given, (q, k, v, mask)) if a is not None):
        if len(_cudnn_plans) >= 256:  # many shapes (dynamic ones): start over
            _cudnn_plans.clear()
        _cudnn_plans[key] = (plan, max(workspace, 1),
                             None if stats is None else tuple(stats.shape))
    return out


def _signature(q, v, mask):
    return (q.dtype, q.shape[-1], v.shape[-1], mask is not None)


def _cudnn_supports(q, k, v, mask=None):
    d, dv = q.shape[-1], v.shape[-1]
    return (q.device.type == "cuda" and q.dtype in (_core.float16, _core.bfloat16)
            and q.shape[1] == k.shape[1] and 0 < d <= 256 and 0 < dv <= 256
            and d % 8 == 0 and dv % 8 == 0 and min(q.shape[0], q.shape[1], q.shape[2],
                                                   k.shape[2]) > 0
            and (mask is None or k.shape[2] % 8 == 0) and cudnn_available()
            and _signature(q, v, mask) not in _cudnn_refused)


def _registry_cudnn(q, k, v, *rest):
    return _cudnn(q, k, v, None, False, _default_scale(q))


def _rows(q, k, v, mask, is_causal, scale):
    if mask is not None:  # its own last two axes may broadcast too
        mask = _core.broadcast_to(mask, q.shape[:-1] + (k.shape[-2],))
    return _core._attention_rows(q, k, v, mask, is_causal, scale,
                                 _core._attention_output(q, v.shape[-1]))


def _rows_supports(q, k, v, mask=None):
    return (q.device.type == "cpu" and q.dtype in (_core.float32, _core.float64)
            and q.shape[1] == k.shape[1])


def _registry_rows(q, k, v, *rest):
    return _rows(q, k, v, None, False, _default_scale(q))


def _registry_math(q, k, v, *rest):
    return _math(q, k, v, None, False, _default_scale(q))


def register_kernels():
    """The kernels of op ``attention`` (once per process, at import)."""
    present = {(r["op"], r["name"], r["device"]) for r in _core.list_kernels("attention")}
    if ("attention", "cudnn", "cuda") not in present:
        _core.register_kernel("attention", "cudnn", _registry_cudnn, device="cuda",
                              supports=_cudnn_supports, priority=_PRIORITY_CUDNN)
    if ("attention", "rows", "cpu") not in present:
        _core.register_kernel("attention", "rows", _registry_rows, device="cpu",
                              supports=_rows_supports, priority=_PRIORITY_ROWS)
    for device in ("cpu", "cuda"):
        if ("attention", "math", device) not in present:
            _core.register_kernel("attention", "math", _registry_math, device=device)

