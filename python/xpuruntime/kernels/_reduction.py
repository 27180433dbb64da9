"""python/xpuruntime/kernels/_reduction.py: ReductionKernel, CuPy's reduction kernel class on
xpuruntime's JIT.

- The inputs broadcast together; ``axis`` (None: all) is reduced, ``keepdims`` keeps it as 1.
- Deterministic: the order in which an output's elements are folded depends on the shape
  only, never on timing (Note [Reduction kernel shapes]).
- Specialised per dtype and per merged ndim of the kept and reduced dimensions, like
  ElementwiseKernel; every operand may have any strides.
- A call laid out like an earlier one replays its recipe (the plan, how to convert each
  scalar, the output to allocate), as ElementwiseKernel's does.

Note [Reduction kernel shapes]: two shapes of kernel, chosen from the first array's strides.
- Rows (the reduced elements are adjacent in memory, or neither kind is): a block of 256
  threads per output; thread t folds the elements t, t + 256, ... in order, then the block
  folds its 256 partial values in a fixed tree. Neighbouring threads read neighbouring
  elements.
- Columns (the outputs are adjacent, the reduced elements are not, as for axis=0 of a
  C-contiguous matrix): a block of 32 x 32 threads per 32 neighbouring outputs; thread
  (x, y) folds the elements y, y + 32, ... of output x, then the 32 partial values of each
  output are folded in a fixed tree. A warp reads 32 neighbouring elements at each step,
  where a block per output would read 256 elements a row apart.
- The index arithmetic unravels a flat index over the merged dimensions; the outermost one
  needs no division (the index is below its size), so a one-dimensional walk is a multiply.
- Note: a huge reduction to few outputs still runs on few blocks (a full sum of 10**8
  elements on one SM); a deterministic two-pass split is future work.
"""

import numpy as np

from .. import _core
from .._core import Tensor, UnsupportedOperationError, _cuda
from ._layout import (
    PRELUDE,
    broadcast_shapes,
    broadcast_strides,
    dtype_name,
    keep_replay,
    merge_dims,
    pack_layout,
    replayable,
    scalar_convert,
    scalar_value,
    to_array_or_scalar,
)
from ._params import C_TYPES, check_unique, decide_types, parse_params
from ._raw import CallSignature, check_backend, nvrtc_options

_BLOCK = 256  # rows: threads per output
_COLS = 32  # columns: outputs per block, and threads per output


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"axis must be an int, a tuple of ints or None, got {axis!r}")
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(int(a), ndim)
        a = int(a) % ndim
        if a in out:
            raise ValueError(f"axis {a} is repeated in {axis!r}")
        out.append(a)
    return tuple(sorted(out))


class _Plan:
    __slots__ = (
        "block",
        "columns",
        "grid",
        "kernel",
        "layout_out",
        "layout_reduce",
        "nout",
        "nreduce",
        "source",
        "types",
    )


class ReductionKernel(_cuda._RecordedKernel):
    """``ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name='reduce_kernel', reduce_type=None, reduce_dims=True, preamble='',
    options=())``, called as ``kernel(*inputs, out=None, axis=None, keepdims=False,
    stream=None)``."""

    __signature__ = CallSignature(
        lambda *args, out=None, axis=None, keepdims=False, stream=None: None)

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", reduce_type=None, reduce_dims=True, preamble="",
                 options=(), *, backend="nvrtc", jitify=False):
        super().__init__()
        check_backend(backend, jitify)
        self.in_params = parse_params(in_params, "in_params")
        self.out_params = parse_params(out_params, "out_params")
        check_unique(self.in_params, self.out_params)
        if len(self.out_params) != 1:
            raise ValueError("a ReductionKernel has exactly one output parameter")
        if any(p.raw for p in self.in_params + self.out_params):
            raise UnsupportedOperationError("raw parameters are not supported by "
                                            "ReductionKernel")
        for what, text in (("map_expr", map_expr), ("reduce_expr", reduce_expr),
                           ("post_map_expr", post_map_expr), ("name", name),
                           ("preamble", preamble)):
            if not isinstance(text, str):
                raise TypeError(f"{what} must be a str, got {type(text).__name__}")
        if identity is not None and not isinstance(identity, str):
            identity = str(identity)
        if reduce_type is not None and not isinstance(reduce_type, str):
            raise TypeError("reduce_type must be a C type name (a str) or None")
        if not name.isidentifier():
            raise ValueError(f"name must be a C identifier, got {name!r}")
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.name, self.preamble = identity, name, preamble
        out = self.out_params[0]
        # CuPy: the accumulator has the output's type unless reduce_type says otherwise.
        self.reduce_type = reduce_type or out.placeholder or C_TYPES[out.dtype]
        self.reduce_dims = reduce_dims
        self.options = nvrtc_options(options)
        self.nin = len(self.in_params)
        self._plans = {}
        self._recipes = {}

    def _prepare(self, args, out=None, axis=None, keepdims=False):
        if len(args) != self.nin:
            raise TypeError(f"{self.name} takes {self.nin} inputs, got {len(args)} (pass the "
                            f"output as out=)")
        values = [to_array_or_scalar(a) for a in args]
        if out is not None:
            out = to_array_or_scalar(out)
            if not isinstance(out, Tensor):
                raise TypeError("out must be an array")
        in_dtypes = [dtype_name(v) if isinstance(v, Tensor) else None for v in values]
        in_types, out_types, placeholders = decide_types(
            self.in_params, self.out_params, in_dtypes,
            None if out is None else [dtype_name(out)])
        arrays = [v for v in values if isinstance(v, Tensor)]
        if not arrays:
            raise ValueError(f"{self.name}: at least one input must be an array")
        device = arrays[0].device
        for v in arrays:
            if v.device != device:
                raise ValueError(f"{self.name}: arguments on {device} and {v.device}")
        shape = broadcast_shapes([v.shape for v in arrays])
        axes = _axes(axis, len(shape))
        kept = [k for k in range(len(shape)) if k not in axes]
        out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape)) if keepdims \
            else tuple(shape[k] for k in kept)
        if out is None:
            out = _core.empty(out_shape, dtype=getattr(_core, out_types[0]), device=device)
        else:
            if out.shape != out_shape:
                raise ValueError(f"out has shape {out.shape}, the result's is {out_shape}")
            if out.device != device:
                raise ValueError(f"out is on {out.device}, the inputs on {device}")
            if out._is_readonly():
                raise ValueError("out is read-only")
        values = [v if isinstance(v, Tensor) else scalar_value(v, t)
                  for v, t in zip(values, in_types)]
        key = (tuple((v.dtype, v.shape, v.strides) if isinstance(v, Tensor) else type(v)
                     for v in values), out.dtype, out.strides, axes, keepdims)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make_plan(values, in_types + out_types,
                                                      placeholders, shape, axes, out)
        call = values + [out, plan.layout_out, plan.layout_reduce, plan.nout, plan.nreduce]
        return plan, call, out

    def _make_plan(self, values, types, placeholders, shape, axes, out):
        kept = [k for k in range(len(shape)) if k not in axes]
        arrays = [v for v in values if isinstance(v, Tensor)]
        full = [broadcast_strides(v, shape) for v in arrays]
        # The output's strides over the kept dimensions (keepdims' 1s carry no steps).
        out_full = [s for k, s in zip(range(out.ndim), out.strides)]
        if out.ndim != len(kept):
            out_full = [out.strides[k] for k in kept]
        kept_shape = tuple(shape[k] for k in kept)
        red_shape = tuple(shape[k] for k in axes)
        kept_strides = [tuple(s[k] for k in kept) for s in full] + [tuple(out_full)]
        red_strides = [tuple(s[k] for k in axes) for s in full]
        if self.reduce_dims:
            kept_shape, kept_strides = merge_dims(kept_shape, kept_strides)
            red_shape, red_strides = merge_dims(red_shape, red_strides)
        plan = _Plan()
        plan.types = types
        plan.nout = int(np.prod(kept_shape, dtype=np.int64))
        plan.nreduce = int(np.prod(red_shape, dtype=np.int64))
        plan.layout_out = pack_layout(kept_shape, kept_strides)
        plan.layout_reduce = pack_layout(red_shape, red_strides)
        # Note [Reduction kernel shapes]: columns when the first array's outputs are
        # adjacent and its reduced elements are not.
        plan.columns = (bool(kept_shape) and bool(red_shape) and plan.nout > 1
                        and kept_strides[0][-1] == 1 and red_strides[0][-1] != 1)
        if plan.columns:
            plan.block = (_COLS, _COLS)
            plan.grid = min((plan.nout + _COLS - 1) // _COLS, 2**31 - 1)
        else:
            plan.block = _BLOCK
            plan.grid = min(plan.nout, 2**31 - 1)
        plan.source = self._source(values, types, placeholders, len(kept_shape),
                                   len(red_shape), len(arrays), plan.columns)
        plan.kernel = _cuda._UserKernel(plan.source, self.name, self.options, [])
        return plan

    def _source(self, values, types, placeholders, nd_out, nd_red, narrays, columns):
        signature, loads = [], []
        k = 0
        for p, v, t in zip(self.in_params, values, types):
            ctype = C_TYPES[t]
            if isinstance(v, Tensor):
                signature.append(f"const {ctype}* _p_{p.name}")
                loads.append(f"      const {ctype}& {p.name} = _p_{p.name}[_b{k} + _r{k}];")
                k += 1
            else:
                signature.append(f"const {ctype} {p.name}")
        out = self.out_params[0]
        signature += [f"{C_TYPES[types[-1]]}* _p_{out.name}",
                      f"const _xrt_layout<{nd_out}, {narrays + 1}> _Lo",
                      f"const _xrt_layout<{nd_red}, {narrays}> _Lr",
                      "const long long _n_out", "const long long _n_reduce"]
        typedefs = "".join(f"  typedef {C_TYPES[t]} {letter};\n"
                           for letter, t in sorted(placeholders.items()))

        def unravel(index, layout, nd, count, prefix):
            # The outermost dimension takes what is left: the index is below its size.
            decl = " ".join(f"long long {prefix}{q} = 0;" for q in range(count))
            steps = []
            for d in reversed(range(nd)):
                if d == 0:
                    step = "{ long long _c = _x;"
                else:
                    step = (f"{{ long long _c = _x % {layout}.shape[{d}]; "
                            f"_x /= {layout}.shape[{d}];")
                steps.append(step + "".join(f" {prefix}{q} += _c * {layout}.strides[{q}][{d}];"
                                            for q in range(count)) + " } ")
            return f"{decl} {{ long long _x = {index}; {''.join(steps)}}}"

        if self.identity is not None:
            fold = "_acc = REDUCE(_acc, _v);"
            init = f"_type_reduce _acc = (_type_reduce)({self.identity}); bool _has = true;"
            combine = ("if ({lane} < _s) {{ _sdata[{me}] = "
                       "REDUCE(_sdata[{me}], _sdata[{other}]); }}")
        else:
            fold = "if (_has) _acc = REDUCE(_acc, _v); else { _acc = _v; _has = true; }"
            init = "_type_reduce _acc{}; bool _has = false;"
            combine = ("if ({lane} < _s && _shas[{other}]) {{\n"
                       "        _sdata[{me}] = _shas[{me}] ? REDUCE(_sdata[{me}], "
                       "_sdata[{other}]) : _sdata[{other}];\n"
                       "        _shas[{me}] = true; }}")
        if columns:
            threads = _COLS * _COLS
            me = f"threadIdx.y * {_COLS} + threadIdx.x"
            combine = combine.format(lane="threadIdx.y", me=me,
                                     other=f"(threadIdx.y + _s) * {_COLS} + threadIdx.x")
            outer = (f"#pragma unroll 1\n  for (long long _g = blockIdx.x; _g * {_COLS} < _n_out; "
                     f"_g += gridDim.x) {{\n"
                     f"    const long long _j = _g * {_COLS} + threadIdx.x;\n"
                     f"    const bool _live = _j < _n_out;\n")
            first, step, halves = "threadIdx.y", _COLS, _COLS // 2
            live = "_live && "
            leader = "threadIdx.y == 0 && _live"
        else:
            threads = _BLOCK
            me = "threadIdx.x"
            combine = combine.format(lane="threadIdx.x", me=me, other="threadIdx.x + _s")
            outer = ("#pragma unroll 1\n"  # the grid covers the outputs: one pass
                     "  for (long long _j = blockIdx.x; _j < _n_out; _j += gridDim.x) {\n"
                     "    const bool _live = true;\n")
            first, step, halves = "threadIdx.x", _BLOCK, _BLOCK // 2
            live = ""
            leader = "threadIdx.x == 0"
        return (
            f"{PRELUDE}\n{self.preamble}\n"
            f"#define REDUCE(a, b) ({self.reduce_expr})\n"
            f"#define POST_MAP(a) ({self.post_map_expr})\n"
            f'extern "C" __global__ void __launch_bounds__({threads}) {self.name}('
            f'{", ".join(signature)}) {{\n{typedefs}'
            f"  typedef {self.reduce_type} _type_reduce;\n"
            f"  __shared__ _type_reduce _sdata[{threads}];\n"
            f"  __shared__ bool _shas[{threads}];\n"
            f"{outer}"
            f"    {unravel('(_live ? _j : 0)', '_Lo', nd_out, narrays + 1, '_b')}\n"
            f"    {init}\n"
            f"    for (long long _k = {first}; {live}_k < _n_reduce; _k += {step}) {{\n"
            f"      {unravel('_k', '_Lr', nd_red, narrays, '_r')}\n"
            + "\n".join(loads) + "\n"
            f"      _type_reduce _v = (_type_reduce)({self.map_expr});\n      {fold}\n    }}\n"
            f"    _sdata[{me}] = _acc; _shas[{me}] = _has;\n    __syncthreads();\n"
            f"    for (int _s = {halves}; _s > 0; _s >>= 1) {{\n      {combine}\n"
            f"      __syncthreads();\n    }}\n"
            f"    if ({leader}) {{\n      _type_reduce a = _sdata[{me}];\n"
            f"      {C_TYPES[types[-1]]}& {out.name} = _p_{out.name}[_b{narrays}];\n"
            f"      POST_MAP(a);\n    }}\n    __syncthreads();\n  }}\n}}\n")

    def _call(self, *args, out=None, axis=None, keepdims=False, stream=None):
        # Note [Replaying a user kernel call] (in the bindings), as ElementwiseKernel does;
        # the call is the C++ base's __call__ (Note [Calling a recorded kernel from C++]).
        key = self._replay_key(args, out, axis, keepdims)
        replay = self._recipes.get(key) if key is not None else None
        if stream is not None:
            from ._raw import as_stream

            stream = as_stream(stream)
        if replay is not None:
            if out is None:
                self._remember(replay, self.nin, 1)  # this call's key, if it has one
                return replay(args, stream)[0]
            replay((*args, out), stream)
            return out
        plan, call, out = self._prepare(args, out, axis, keepdims)
        if plan.nout:
            if self.identity is None and plan.nreduce == 0:
                raise ValueError(f"{self.name}: an empty reduction needs an identity")
            plan.kernel.launch(plan.grid, plan.block, call, 0, stream)
            if key is not None and replayable(args):
                replay = keep_replay(self._recipes, key,
                                     self._replay(plan, args, out if key[1] else None))
                if key[1]:  # the output allocated: the replay returns it
                    self._remember(replay, self.nin, 1)
        return out

    @staticmethod
    def _replay_key(args, out, axis, keepdims):
        """The layout of a call (arguments, output, axis, keepdims); None when the call
        cannot be replayed (an out that is not a Tensor, an axis that is not an int, a tuple
        or None)."""
        if not (axis is None or type(axis) is int or type(axis) is tuple):
            return None
        if out is None:
            return _cuda._layout_signature(args), True, axis, bool(keepdims)
        if type(out) is not Tensor:
            return None
        return _cuda._layout_signature((*args, out)), False, axis, bool(keepdims)

    def _replay(self, plan, args, out):
        """The C++ replay of a call laid out like args: per input None (passed as it is) or
        its scalar's conversion; the output to allocate (out: None when it was passed, and
        then it comes last in the arguments); the layouts and sizes."""
        converts = [None if type(a) is Tensor else scalar_convert(t)
                    for a, t in zip(args, plan.types)]
        outputs = []
        if out is None:
            converts.append(None)
        else:
            outputs = [(out.shape, out.dtype, out.device, False)]
        return _cuda._Replay(plan.kernel, plan.grid, plan.block, converts, outputs,
                             (plan.layout_out, plan.layout_reduce, plan.nout, plan.nreduce),
                             None)

    def __repr__(self):
        return f"<xpuruntime.ReductionKernel {self.name}>"


# Python's argument errors of the Python path name the call the user made.
ReductionKernel._call.__qualname__ = "ReductionKernel.__call__"
