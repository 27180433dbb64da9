"""python/xpuruntime/kernels/_elementwise.py: ElementwiseKernel, CuPy's elementwise kernel
class on xpuruntime's JIT.

A call:
- converts the arguments (Tensors, device arrays through DLPack, scalars), decides the
  placeholder types (``_params.decide_types``), broadcasts the non-raw arrays NumPy-style and
  allocates the outputs that were not passed;
- finds the plan of this signature (dtypes, shapes, strides, scalar types): the generated
  source, specialised per dtype, merged ndim and contiguity, its compiled kernel and the
  packed layout; a later call with the same signature only packs pointers and launches.

Beyond CuPy: every operand may have any strides (CuPy's raw arrays ignore them; here raw
arrays index through their strides, and non-raw ones through the broadcast layout).
"""

from .. import _core
from .._core import Tensor, _cuda
from ._layout import (
    PRELUDE,
    broadcast_shapes,
    broadcast_strides,
    carray_type,
    dtype_name,
    is_c_contiguous,
    keep_replay,
    merge_dims,
    pack_carray,
    pack_layout,
    replayable,
    scalar_convert,
    scalar_value,
    to_array_or_scalar,
)
from ._params import C_TYPES, check_unique, decide_types, parse_params
from ._raw import CallSignature, check_backend, nvrtc_options

_DEFAULT_BLOCK = 128  # CuPy's


class _Plan:
    """A compiled specialisation: its source, kernel, and how to build the arguments."""

    __slots__ = ("source", "kernel", "layout", "size", "index_type", "types")


def _signature(values):
    key = []
    for v in values:
        if isinstance(v, Tensor):
            key.append((v.dtype, v.shape, v.strides))
        else:
            key.append(type(v))
    return tuple(key)


class ElementwiseKernel(_cuda._RecordedKernel):
    """``ElementwiseKernel(in_params, out_params, operation, name='kernel', reduce_dims=True,
    preamble='', no_return=False, return_tuple=False, options=(), loop_prep='',
    after_loop='')``, called as ``kernel(*inputs, [*outputs], size=None, block_size=None,
    stream=None)``."""

    __signature__ = CallSignature(lambda *args, size=None, block_size=None, stream=None: None)

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, *, options=(),
                 loop_prep="", after_loop="", backend="nvrtc", jitify=False):
        super().__init__()
        check_backend(backend, jitify)
        self.in_params = parse_params(in_params, "in_params")
        self.out_params = parse_params(out_params, "out_params")
        check_unique(self.in_params, self.out_params)
        if not self.out_params and not no_return:
            raise ValueError("an ElementwiseKernel needs out_params (or no_return=True)")
        for p in self.out_params:
            if p.raw:
                continue
        for what, text in (("operation", operation), ("name", name), ("preamble", preamble),
                           ("loop_prep", loop_prep), ("after_loop", after_loop)):
            if not isinstance(text, str):
                raise TypeError(f"{what} must be a str, got {type(text).__name__}")
        if not name.isidentifier():
            raise ValueError(f"name must be a C identifier, got {name!r}")
        self.operation, self.name, self.preamble = operation, name, preamble
        self.loop_prep, self.after_loop = loop_prep, after_loop
        self.reduce_dims, self.no_return, self.return_tuple = reduce_dims, no_return, return_tuple
        self.options = nvrtc_options(options)
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self._plans = {}
        self._recipes = {}

    # ---- preparing a call ----------------------------------------------------------------

    def _prepare(self, args, size=None):
        """(plan, launch arguments, outputs) of a call: everything but the launch."""
        if len(args) == self.nin:
            outs_given = False
        elif len(args) == self.nargs:
            outs_given = True
        else:
            raise TypeError(f"{self.name} takes {self.nin} inputs (and optionally {self.nout} "
                            f"outputs), got {len(args)} arguments")
        values = [to_array_or_scalar(a) for a in args]
        params = self.in_params + self.out_params[: len(values) - self.nin]
        in_dtypes = [dtype_name(v) if isinstance(v, Tensor) else None
                     for v in values[: self.nin]]
        out_dtypes = ([dtype_name(v) if isinstance(v, Tensor) else None
                       for v in values[self.nin:]] if outs_given else None)
        in_types, out_types, placeholders = decide_types(self.in_params, self.out_params,
                                                         in_dtypes, out_dtypes)
        for p, v in zip(params, values):
            if p.raw and not isinstance(v, Tensor):
                raise TypeError(f"raw argument '{p.name}' must be an array")
        indexed = [v for p, v in zip(params, values) if not p.raw and isinstance(v, Tensor)]
        device = next((v.device for v in values if isinstance(v, Tensor)), None)
        for v in values:
            if isinstance(v, Tensor) and v.device != device:
                raise ValueError(f"{self.name}: arguments on {device} and {v.device}")
        in_shapes = [v.shape for p, v in zip(self.in_params, values)
                     if not p.raw and isinstance(v, Tensor)]
        if in_shapes or (outs_given and indexed):
            if size is not None:
                raise ValueError("size must be None when non-raw arrays are passed (their "
                                 "broadcast shape is the size)")
            shape = broadcast_shapes(in_shapes + ([] if not outs_given else [
                v.shape for p, v in zip(self.out_params, values[self.nin:]) if not p.raw]))
        else:
            if size is None:
                raise ValueError(f"{self.name}: size= is needed when every argument is raw "
                                 f"or a scalar")
            shape = (int(size),)
        if outs_given:
            for p, v in zip(self.out_params, values[self.nin:]):
                if not p.raw and v.shape != shape:
                    raise ValueError(f"output '{p.name}' has shape {v.shape}, the broadcast "
                                     f"shape is {shape}")
                if v._is_readonly():
                    raise ValueError(f"output '{p.name}' is read-only")
            outs = values[self.nin:]
        else:
            if device is None:
                raise ValueError(f"{self.name}: cannot allocate outputs without an array "
                                 f"argument to say the device")
            outs = [_core.empty(shape, dtype=getattr(_core, t), device=device)
                    for t in out_types]
            values = values + outs
        types = in_types + out_types
        values = [v if isinstance(v, Tensor) else scalar_value(v, t)
                  for v, t in zip(values, types)]
        key = (_signature(values), shape if not (in_shapes or outs_given) else None)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make_plan(values, types, placeholders, shape)
        call = []
        for p, v in zip(self.in_params + self.out_params, values):
            call.append(pack_carray(v) if p.raw else v)
        call.append(plan.layout)
        call.append(plan.size)
        return plan, call, outs

    def _make_plan(self, values, types, placeholders, shape):
        params = self.in_params + self.out_params
        indexed = [(p, v) for p, v in zip(params, values) if not p.raw and isinstance(v, Tensor)]
        full = [broadcast_strides(v, shape) for _, v in indexed]
        if self.reduce_dims:
            merged_shape, strides = merge_dims(shape, full)
        else:
            merged_shape, strides = shape, full
        contiguous = all(is_c_contiguous(merged_shape, s) for s in strides)
        size = 1
        for n in shape:
            size *= n
        small = size < 2**31 and all(
            sum(abs(s) * (n - 1) for s, n in zip(st, merged_shape)) < 2**31 for st in strides)
        plan = _Plan()
        plan.size = size
        plan.index_type = "int" if small else "long long"
        plan.layout = pack_layout((), []) if contiguous else pack_layout(merged_shape, strides)
        plan.source = self._source(values, types, placeholders, len(merged_shape),
                                   len(indexed), contiguous, plan.index_type)
        plan.kernel = _cuda._UserKernel(plan.source, self.name, self.options, [])
        plan.types = tuple(types)
        return plan

    def _source(self, values, types, placeholders, ndim, noperands, contiguous, index_type):
        params, body, signature = self.in_params + self.out_params, [], []
        k = 0
        nd = 0 if contiguous else ndim
        for j, (p, v, t) in enumerate(zip(params, values, types)):
            ctype = C_TYPES[t]
            is_output = j >= self.nin
            if p.raw:
                signature.append(f"{carray_type(ctype, v)} {p.name}")
            elif not isinstance(v, Tensor):
                signature.append(f"const {ctype} {p.name}")
            else:
                const = "" if is_output else "const "
                signature.append(f"{const}{ctype}* _p_{p.name}")
                index = "i" if contiguous else f"_o{k}"
                body.append(f"    {const}{ctype}& {p.name} = _p_{p.name}[{index}];")
                k += 1
        signature.append(f"const _xrt_layout<{nd}, {0 if contiguous else noperands}> _L")
        signature.append("const long long _n")
        typedefs = "".join(f"  typedef {C_TYPES[t]} {letter};\n"
                           for letter, t in sorted(placeholders.items()))
        unravel = ""
        if not contiguous and noperands:
            I = index_type
            offsets = " ".join(f"{I} _o{q} = 0;" for q in range(noperands))
            # The outermost dimension takes what is left (i is below the size).
            steps = "".join(
                (f"      {{ {I} _c = _r;" if d == 0 else
                 f"      {{ {I} _c = _r % ({I})_L.shape[{d}]; _r /= ({I})_L.shape[{d}];")
                + "".join(f" _o{q} += _c * ({I})_L.strides[{q}][{d}];"
                          for q in range(noperands)) + " }\n"
                for d in reversed(range(ndim)))
            unravel = f"    {offsets}\n    {{ {I} _r = ({I})i;\n{steps}    }}\n"
        return (
            f"{PRELUDE}\n{self.preamble}\n"
            f'extern "C" __global__ void {self.name}({", ".join(signature)}) {{\n'
            f"{typedefs}  const CIndexer _ind{{_n}};\n  {self.loop_prep};\n"
            # The grid covers the array: the loop runs once, and unrolled it only makes the
            # kernel bigger (Note [Grid-stride loops stay rolled] in elementwise.cuh).
            f"#pragma unroll 1\n"
            f"  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n;\n"
            f"       i += (long long)blockDim.x * gridDim.x) {{\n"
            f"{unravel}" + "\n".join(body) + "\n"
            f"    {self.operation};\n  }}\n  {self.after_loop};\n}}\n")

    # ---- calling -------------------------------------------------------------------------

    def _call(self, *args, size=None, block_size=None, stream=None):
        # The call itself is the C++ base's __call__: it replays a call laid out like a
        # recorded one (Note [Calling a recorded kernel from C++]) and comes here otherwise.
        # Note [Replaying a user kernel call]: a call whose arguments have the layout of an
        # earlier one (dtypes, shapes, strides, devices, read-only flags, scalar types)
        # replays it from C++ (_cuda._Replay): no type inference, broadcasting or plan
        # lookup, only scalar conversion, output allocation, packing and the launch.
        key = (_cuda._layout_signature(args), size, block_size)
        replay = self._recipes.get(key)
        if stream is not None:
            from ._raw import as_stream

            stream = as_stream(stream)
        if replay is not None:
            self._remember(replay, self.nin, self._result)  # this call's key, if it has one
            outs = replay(args, stream) or args[self.nin:]
        else:
            plan, call, outs = self._prepare(args, size)
            grid, block = self._grid(plan, block_size)
            if plan.size:
                plan.kernel.launch(grid, block, call, 0, stream)
                if replayable(args):
                    replay = keep_replay(self._recipes, key,
                                         self._replay(plan, args, outs, (grid, block)))
                    self._remember(replay, self.nin, self._result)
        if self.no_return:
            return None
        if len(outs) == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)

    @property
    def _result(self):
        """What a call returns, for its C++ replay: 0 None, 1 the output, 2 the tuple."""
        if self.no_return:
            return 0
        return 1 if self.nout == 1 and not self.return_tuple else 2

    @staticmethod
    def _grid(plan, block_size):
        block = block_size or _DEFAULT_BLOCK
        return min((plan.size + block - 1) // block, 2**31 - 1), block

    def _replay(self, plan, args, outs, launch):
        """The C++ replay of a call laid out like args: per argument None (passed as it is)
        or its conversion (a scalar to its parameter's type, a raw array to its CArray);
        the outputs to allocate when none were passed; then the layout and the size."""
        params = self.in_params + self.out_params
        converts = []
        for p, a, t in zip(params, args, plan.types):
            if type(a) is Tensor:
                converts.append(pack_carray if p.raw else None)
            else:
                converts.append(scalar_convert(t))
        outputs = []
        if len(args) == self.nin:
            outputs = [(o.shape, o.dtype, o.device, p.raw)
                       for o, p in zip(outs, self.out_params)]
        return _cuda._Replay(plan.kernel, launch[0], launch[1], converts, outputs,
                             (plan.layout, plan.size), pack_carray)

    def __repr__(self):
        return f"<xpuruntime.ElementwiseKernel {self.name}>"


# Python's argument errors of the Python path name the call the user made.
ElementwiseKernel._call.__qualname__ = "ElementwiseKernel.__call__"
