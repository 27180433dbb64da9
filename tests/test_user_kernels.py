"""tests/test_user_kernels.py: user kernels (CuPy's RawKernel, RawModule, ElementwiseKernel,
ReductionKernel) on the CPU: the parameter syntax, type inference, broadcasting, the
generated sources (compiled by NVRTC for sm_90, no GPU needed) and the error messages.
The launches are in test_cuda_user_kernels.py."""

import os

import numpy as np
import pytest

import xpuruntime as xrt
from recording_kernel import RecordingKernel
from xpuruntime.kernels import _params

core = xrt._core
NVRTC = xrt.cuda.status()["nvrtc"]


@pytest.fixture
def nvrtc():
    if not NVRTC["found"]:
        reason = f"NVRTC not found ({NVRTC['reason']})"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


def compiles(source, name, options):
    return core._cuda._compile(source, name, "sm_90", list(options))[:4] == b"\x7fELF"


def arange(shape, dtype=np.float32):
    return xrt.asarray(np.arange(int(np.prod(shape))).astype(dtype).reshape(shape))


# ---- the parameter syntax ----------------------------------------------------------------


def test_params_parse_types_placeholders_and_raw():
    ps = _params.parse_params("T x, raw float32 y, int64 z")
    assert [(p.name, p.dtype, p.placeholder, p.raw) for p in ps] == [
        ("x", None, "T", False), ("y", "float32", None, True), ("z", "int64", None, False)]
    assert _params.parse_params("  ") == ()


@pytest.mark.parametrize("text, message", [
    ("T", "syntax error"),
    ("float x", "unknown type 'float'"),
    ("const T x", "unknown keyword 'const'"),
    ("T i", "reserved"),
    ("T _x", "reserved"),
    ("T 1x", "not a valid parameter name"),
])
def test_params_bad_syntax_is_a_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        _params.parse_params(text)


def test_params_names_must_be_unique():
    with pytest.raises(ValueError, match="used twice"):
        xrt.ElementwiseKernel("T x, T y", "T x", "x = y", "k")


def test_placeholders_decided_by_outputs_then_inputs():
    ins = _params.parse_params("T x, U y")
    outs = _params.parse_params("T z")
    assert _params.decide_types(ins, outs, ["float32", "int8"], None) == (
        ("float32", "int8"), ("float32",), {"T": "float32", "U": "int8"})
    # a passed output decides T first; then the input must agree
    with pytest.raises(TypeError, match="already float64"):
        _params.decide_types(ins, outs, ["float32", "int8"], ["float64"])


def test_scalars_decide_no_type():
    ins, outs = _params.parse_params("T x, T y"), _params.parse_params("T z")
    assert _params.decide_types(ins, outs, [None, "int16"], None)[0] == ("int16", "int16")
    with pytest.raises(TypeError, match="cannot decide type T"):
        _params.decide_types(ins, outs, [None, None], None)


def test_concrete_types_take_no_implicit_casts():
    k = xrt.ElementwiseKernel("float32 x", "float32 y", "y = x", "copy_f32")
    with pytest.raises(TypeError, match="must be float32, got float64"):
        k._prepare((xrt.asarray([1.0, 2.0], dtype=xrt.float64),))


# ---- ElementwiseKernel: calls, broadcasting, outputs ------------------------------------


def test_elementwise_broadcasts_and_allocates_outputs():
    k = xrt.ElementwiseKernel("T x, T y", "T z", "z = x * y", "mul")
    plan, call, outs = k._prepare((arange((2, 1, 3)), arange((4, 1))))
    (z,) = outs
    assert z.shape == (2, 4, 3) and z.dtype == xrt.float32
    assert plan.size == 24


def test_elementwise_outputs_may_be_passed_and_must_match():
    k = xrt.ElementwiseKernel("T x", "T y", "y = x", "copy")
    x, y = arange((3, 4)), xrt.empty((3, 4), dtype=xrt.float32)
    plan, call, outs = k._prepare((x, y))
    assert outs[0] is y
    with pytest.raises(ValueError, match="broadcast shape is"):
        k._prepare((x, xrt.empty((4,), dtype=xrt.float32)))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        k._prepare((x, y, y))


def test_elementwise_shapes_that_do_not_broadcast():
    k = xrt.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add")
    with pytest.raises(ValueError, match="cannot be broadcast"):
        k._prepare((arange((3,)), arange((4,))))


def test_elementwise_raw_arguments_need_size():
    k = xrt.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[_ind.size() - 1 - i]", "rev")
    x, y = arange((5,)), xrt.empty((5,), dtype=xrt.float32)
    with pytest.raises(ValueError, match="size= is needed"):
        k._prepare((x, y))
    plan, call, outs = k._prepare((x, y), size=5)
    assert plan.size == 5
    with pytest.raises(TypeError, match="raw argument 'x' must be an array"):
        k._prepare((1.0, y), size=5)


def test_elementwise_host_arrays_are_refused():
    k = xrt.ElementwiseKernel("T x", "T y", "y = x", "copy")
    with pytest.raises(TypeError, match="NumPy arrays live on the host"):
        k._prepare((np.ones(3),))


def test_elementwise_plans_are_specialised_per_layout(nvrtc):
    k = xrt.ElementwiseKernel("T x, T y", "T z", "z = x - y", "sub")
    x = arange((4, 6))
    contiguous, _, _ = k._prepare((x, x))
    assert "_o0" not in contiguous.source  # flat index: x[i]
    strided, _, _ = k._prepare((x.mT, arange((6, 1))))
    assert "_o0" in strided.source and "_L.shape[1]" in strided.source
    again, _, _ = k._prepare((arange((4, 6)), arange((4, 6))))
    assert again is contiguous
    for plan in (contiguous, strided):
        assert compiles(plan.source, "sub", k.options)


def test_elementwise_merges_dimensions():
    k = xrt.ElementwiseKernel("T x", "T y", "y = x", "copy")
    plan, _, _ = k._prepare((arange((2, 3, 4))[:, :, ::2],))
    # (2, 3, 2) with strides (12, 4, 2), out (6, 2, 1): one dimension of 12, steps 2 and 1;
    # the outermost dimension needs no division, so one dimension reads no shape at all
    assert "_L.strides[0][0]" in plan.source and "_L.strides[0][1]" not in plan.source
    assert "_L.shape[" not in plan.source
    plan, _, _ = k._prepare((arange((2, 3, 4))[:, :2, :],))
    # (2, 2, 4) with strides (12, 4, 1): the inner two merge, the outer cannot
    assert "_L.strides[0][1]" in plan.source and "_L.strides[0][2]" not in plan.source
    assert "_L.shape[1]" in plan.source and "_L.shape[0]" not in plan.source


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32",
                                   "uint32", "int64", "uint64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128"])
def test_elementwise_every_dtype_compiles(nvrtc, dtype):
    k = xrt.ElementwiseKernel("T x, raw T r", "T y", "y = x; r[i] = x", "copy_any")
    x = xrt.zeros((3, 2), dtype=getattr(xrt, dtype))
    plan, _, _ = k._prepare((x, x))
    assert compiles(plan.source, "copy_any", k.options)


def test_elementwise_scalars_take_the_parameter_type(nvrtc):
    k = xrt.ElementwiseKernel("T x, float32 s, int64 k", "T y", "y = x * s + k", "axpn")
    plan, call, _ = k._prepare((arange((3,)), 2.5, 7))
    assert type(call[1]) is np.float32 and type(call[2]) is np.int64
    assert compiles(plan.source, "axpn", k.options)


def test_elementwise_preamble_loop_prep_and_typedefs(nvrtc):
    k = xrt.ElementwiseKernel(
        "T x", "T y", "y = twice(x) + (T)offset", "pre",
        preamble="__device__ float twice(float v) { return 2 * v; }",
        loop_prep="const int offset = 3", after_loop="")
    plan, _, _ = k._prepare((arange((4,)),))
    assert "typedef float T;" in plan.source
    assert compiles(plan.source, "pre", k.options)


def test_elementwise_compile_error_carries_the_log(nvrtc):
    k = xrt.ElementwiseKernel("T x", "T y", "y = no_such_function(x)", "broken")
    plan, _, _ = k._prepare((arange((3,)),))
    with pytest.raises(xrt.CudaError, match='identifier "no_such_function" is undefined'):
        core._cuda._compile(plan.source, "broken", "sm_90", k.options)


def test_elementwise_bad_construction():
    with pytest.raises(ValueError, match="needs out_params"):
        xrt.ElementwiseKernel("T x", "", "x", "k")
    with pytest.raises(ValueError, match="C identifier"):
        xrt.ElementwiseKernel("T x", "T y", "y = x", "not a name")
    with pytest.raises(xrt.UnsupportedOperationError, match="jitify"):
        xrt.ElementwiseKernel("T x", "T y", "y = x", "k", jitify=True)


# ---- ReductionKernel ---------------------------------------------------------------------


def norm():
    return xrt.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


@pytest.mark.parametrize("axis, keepdims, shape", [
    (None, False, ()), (None, True, (1, 1, 1)), (1, False, (2, 4)), (-1, True, (2, 3, 1)),
    ((0, 2), False, (3,)),
])
def test_reduction_output_shapes(axis, keepdims, shape):
    plan, _, out = norm()._prepare((arange((2, 3, 4)),), None, axis, keepdims)
    assert out.shape == shape and out.dtype == xrt.float32


def test_reduction_bad_axes():
    x = arange((2, 3))
    with pytest.raises(IndexError):
        norm()._prepare((x,), None, 2, False)
    with pytest.raises(ValueError, match="repeated"):
        norm()._prepare((x,), None, (0, -2), False)
    with pytest.raises(TypeError, match="axis must be"):
        norm()._prepare((x,), None, 1.0, False)


def test_reduction_out_must_match():
    with pytest.raises(ValueError, match="the result's is"):
        norm()._prepare((arange((2, 3)),), xrt.empty((3,), dtype=xrt.float32), 1, False)


@pytest.mark.parametrize("identity", ["0", None])
def test_reduction_sources_compile(nvrtc, identity):
    k = xrt.ReductionKernel("T x, T w", "float64 y", "x * w", "a + b", "y = a", identity,
                            "wsum", reduce_type="double")
    plan, _, _ = k._prepare((arange((4, 5, 6))[:, ::2].mT, arange((6, 1))), None, (0, 1),
                            False)
    assert compiles(plan.source, "wsum", k.options)


@pytest.mark.parametrize("identity", ["0", None])
@pytest.mark.parametrize("axis, columns", [(0, True), (1, False), (None, False)])
def test_reduction_kernel_shapes_compile(nvrtc, identity, axis, columns):
    # Note [Reduction kernel shapes]: axis 0 of a C-contiguous matrix walks columns.
    k = xrt.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", identity, "sq")
    plan, _, _ = k._prepare((arange((70, 33)),), None, axis, False)
    assert plan.columns is columns
    assert plan.block == ((32, 32) if columns else 256)
    assert compiles(plan.source, "sq", k.options)


def test_reduction_kernel_replay_keys():
    k = norm()
    x = arange((4, 6))
    assert k._replay_key((x,), None, 1, False) == k._replay_key((x,), None, 1, False)
    assert k._replay_key((x,), None, 1, False) != k._replay_key((x,), None, 0, False)
    assert k._replay_key((x,), None, [1], False) is None  # lists go the long way
    assert k._replay_key((x.mT,), None, 1, False) != k._replay_key((x,), None, 1, False)
    assert k._replay_key((x,), None, 1, False) != k._replay_key((2.0,), None, 1, False)
    ro = xrt.broadcast_to(arange((4,)), (3, 4))  # a read-only view: a key of its own
    assert k._replay_key((ro,), None, 1, False) != \
        k._replay_key((xrt.asarray(ro, copy=True),), None, 1, False)


# ---- RawKernel and RawModule -------------------------------------------------------------


def test_raw_kernel_unsupported_backends_say_so():
    with pytest.raises(xrt.UnsupportedOperationError, match="jitify=True is not supported"):
        xrt.RawKernel("", "k", jitify=True)
    with pytest.raises(xrt.UnsupportedOperationError, match="nvcc"):
        xrt.RawKernel("", "k", backend="nvcc")
    with pytest.raises(TypeError, match="code must be"):
        xrt.RawKernel(b"code", "k")


def test_raw_kernel_keeps_cupys_fma_default():
    assert "--fmad=true" in xrt.RawKernel("", "k")._kernel_options()
    assert "--fmad=true" not in xrt.RawKernel("", "k", options=("--fmad=false",)) \
        ._kernel_options()


def test_raw_module_lowers_template_names(nvrtc):
    m = xrt.RawModule(code="template <class T> __global__ void fx3(T* x) { x[0] *= 3; }",
                      name_expressions=["fx3<float>", "fx3<double>"])
    assert m.get_function("fx3<float>").name == "_Z3fx3IfEvPT_"
    assert m.get_function("fx3<double>").name == "_Z3fx3IdEvPT_"
    assert m.get_function("fx3<float>") is m.get_function("fx3<float>")


def test_raw_module_compile_error_is_a_cuda_error_with_the_log(nvrtc):
    m = xrt.RawModule(code="template <class T> __global__ void f(T* x) { oops; }",
                      name_expressions=["f<int>"])
    with pytest.raises(xrt.CudaError, match='identifier "oops" is undefined'):
        m.get_function("f<int>")


def test_raw_module_path_is_unsupported():
    with pytest.raises(xrt.UnsupportedOperationError, match="path"):
        xrt.RawModule(path="kernel.cubin")


@pytest.mark.skipif(xrt.cuda.is_available(), reason="checks the error without a GPU")
def test_raw_kernel_launch_without_cuda_is_an_error():
    k = xrt.RawKernel('extern "C" __global__ void k() {}', "k")
    with pytest.raises(xrt.XpuRuntimeError):
        k((1,), (1,), ())


@pytest.mark.skipif(xrt.cuda.is_available(), reason="checks the error without a GPU")
def test_raw_module_globals_without_cuda_are_an_error():
    m = xrt.RawModule(code="__device__ int x;")
    with pytest.raises(xrt.XpuRuntimeError):
        m.get_global("x")


def test_raw_kernel_call_converts_its_stream_before_launching():
    """The call is the compiled class's C++ __call__; a stream that is not ours goes through
    as_stream first, so a bad one is a TypeError whether or not CUDA is there."""
    k = xrt.RawKernel('extern "C" __global__ void k() {}', "k")
    assert isinstance(k, xrt.RawKernel) and k.name == "k"
    for bad in (object(), 5, "stream"):
        with pytest.raises(TypeError, match="stream must be"):
            k((1,), (1,), (), stream=bad)
        with pytest.raises(TypeError, match="stream must be"):
            k((1,), (1,), (), 0, bad)


def test_raw_kernel_call_reads_its_arguments():
    """Note [RawKernel's call slot]: the type's call slot reads (grid, block, args,
    shared_mem=0, stream=None) by position or name, with Python's errors for the rest;
    each well-formed call below gets as far as its (bad) stream."""
    k = xrt.RawKernel('extern "C" __global__ void k() {}', "k")
    for call in (lambda: k(grid=(1,), block=(1,), args=(), stream=5),
                 lambda: k((1,), block=(1,), args=(), shared_mem=0, stream=5),
                 lambda: k((1,), (1,), (), 0, stream=5)):
        with pytest.raises(TypeError, match="stream must be"):
            call()
    with pytest.raises(TypeError, match=r"RawKernel.__call__\(\) missing required argument 'args'"):
        k((1,), (1,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sharedmem'"):
        k((1,), (1,), (), sharedmem=0)
    with pytest.raises(TypeError, match="multiple values for argument 'block'"):
        k((1,), (1,), (), block=(1,))
    with pytest.raises(TypeError, match="takes from 3 to 5 positional arguments but 6 were"):
        k((1,), (1,), (), 0, None, None)
    with pytest.raises(TypeError, match="shared_mem must be an int"):
        k((1,), (1,), (), shared_mem=1.5)
    with pytest.raises(ValueError, match="shared_mem must be >= 0"):
        k((1,), (1,), (), shared_mem=-1)

    class Forgot(xrt.RawKernel):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="super"):
        Forgot()((1,), (1,), ())


# ---- user kernels in the registry --------------------------------------------------------


def test_user_kernels_register_for_cuda_and_are_listed():
    k = xrt.ElementwiseKernel("T x1, T x2", "T y", "y = x1 + x2 + 1", "add_plus_one")
    xrt.register_kernel("add", "add_plus_one", k, device="cuda")
    try:
        (entry,) = [e for e in xrt.list_kernels("add") if e["name"] == "add_plus_one"]
        assert entry["device"] == "cuda" and not entry["builtin"]
        assert "ElementwiseKernel add_plus_one" in entry["description"]
    finally:
        xrt.unregister_kernel("add", "add_plus_one", device="cuda")


# ---- __cuda_array_interface__ ------------------------------------------------------------


class Interface:
    """An object that speaks only the CUDA Array Interface (as Numba's arrays do)."""

    def __init__(self, **cai):
        self.__cuda_array_interface__ = {"version": 3, "data": (0, False), **cai}


def test_cpu_tensors_have_no_cuda_array_interface():
    assert not hasattr(xrt.ones(3), "__cuda_array_interface__")


@pytest.mark.parametrize("cai, error, message", [
    ({"shape": (2,), "typestr": "<f4", "mask": object()}, ValueError, "masked"),
    ({"shape": (2,), "typestr": "<f4", "version": 4}, ValueError, "unsupported"),
    ({"shape": (2,), "typestr": "<f4", "strides": (6,)}, ValueError, "whole elements"),
    ({"shape": (2,), "typestr": ">f4"}, TypeError, "no xpuruntime dtype"),
])
def test_cuda_array_interface_import_checks_the_dict(cai, error, message):
    from xpuruntime.adapters._cuda_array_interface import from_cuda_array_interface

    with pytest.raises(error, match=message):
        from_cuda_array_interface(Interface(**cai))


def test_import_xpuruntime_imports_no_framework():
    import subprocess
    import sys

    code = ("import sys, xpuruntime, xpuruntime.adapters; "
            "print(sorted(m for m in ('cupy', 'jax', 'torch', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "complex64", "float64"])
def test_reduction_every_accumulator_type_compiles(nvrtc, dtype):
    k = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum_any")
    plan, _, _ = k._prepare((xrt.zeros((3, 4), dtype=getattr(xrt, dtype)),), None, 1, False)
    assert compiles(plan.source, "rsum_any", k.options)


def test_only_tensors_and_scalars_are_recorded_for_replay():
    # Note [Replaying a user kernel call]: the layout signature pins down how these convert;
    # anything else (a list, a DLPack array of another library) takes the long path each time.
    from xpuruntime.kernels._layout import replayable

    x = xrt.ones((2, 3))
    assert replayable((x, 2.0, 3, True, 1j, np.float32(2), np.int8(1)))
    assert not replayable((x, [1.0]))
    assert not replayable((np.ones(3),))


def test_recorded_kernels_replay_calls_keyed_by_layout_and_keywords():
    # Note [Calling a recorded kernel from C++]: the C++ __call__ goes to _call until that
    # records a replay for the call in progress; then a call with the same key replays
    # (here the replay's launch refuses CPU tensors, which shows it ran).
    k = RecordingKernel()
    x = xrt.ones((2, 3))
    assert k(x) == "slow" and k._recorded == 1
    with pytest.raises(ValueError, match="CUDA device"):
        k(x)  # replayed
    assert k.slow == 1
    assert k(x, axis=1) == "slow" and k._recorded == 2  # keywords are part of the key
    assert k(x, axis=(0, 1), keepdims=True, stream=None) == "slow" and k._recorded == 3
    with pytest.raises(ValueError, match="CUDA device"):
        k(x, axis=(0, 1), keepdims=True, stream=None)
    for kwargs in ({"scale": 2.5}, {"axis": [1]}, {"axis": 2**70}, {"out": x}):
        assert k(x, **kwargs) == "slow"  # no key: never recorded
    assert k._recorded == 3
    assert k(xrt.ones((3, 2))) == "slow" and k._recorded == 4  # another layout
    k._remember(k.replay, 1, 1)  # no call in progress: nothing recorded
    assert k._recorded == 4
    with pytest.raises(ValueError, match="result"):
        k._remember(k.replay, 1, 7)
    ew = xrt.ElementwiseKernel("T x", "T y", "y = x", "ew_recorded_cpu")
    assert isinstance(ew, xrt._core._cuda._RecordedKernel) and ew._recorded == 0
    with pytest.raises(ValueError, match="CUDA device"):
        ew(x)
    # Argument errors name the call, not the Python path behind it.
    with pytest.raises(TypeError, match=r"ElementwiseKernel.__call__\(\) got an unexpected"):
        ew(x, sizes=3)
    red = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rk_recorded_cpu")
    with pytest.raises(TypeError, match=r"ReductionKernel.__call__\(\) got an unexpected"):
        red(x, axes=0)


def test_replay_tables_are_bounded():
    # Note [Bounded replay tables]: the layout holds the shapes, so a kernel called over new
    # shapes forever would grow its tables forever; both start over when full.
    from xpuruntime.kernels._layout import MAX_REPLAYS, keep_replay

    assert MAX_REPLAYS == xrt._core._cuda.max_replays == 1024

    k = RecordingKernel()
    for n in range(1, MAX_REPLAYS + 1):
        k(xrt.empty((n,)))
    assert k._recorded == MAX_REPLAYS
    with pytest.raises(ValueError, match="CUDA device"):
        k(xrt.empty((1,)))  # still recorded: replayed
    k(xrt.empty((MAX_REPLAYS + 1,)))  # a new layout in a full table: it starts over
    assert k._recorded == 1
    assert k(xrt.empty((1,))) == "slow" and k._recorded == 2  # recorded again
    recipes = {}
    for n in range(MAX_REPLAYS):
        keep_replay(recipes, n, str(n))
    assert keep_replay(recipes, 0, "again") == "again" and len(recipes) == MAX_REPLAYS
    keep_replay(recipes, "new", "r")
    assert recipes == {"new": "r"}


def test_a_recorded_kernel_subclass_must_initialise_its_base():
    class Forgot(xrt._core._cuda._RecordedKernel):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="super"):
        Forgot()(xrt.ones(2))


def test_recorded_kernels_record_each_threads_call_under_its_own_key():
    # Thread A's call is in its Python path when thread B's call enters its own: each must
    # record under its own key (the pending key is per thread), or A's replay would serve
    # B's layout.
    import threading

    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()

    class Recording(xrt._core._cuda._RecordedKernel):
        def __init__(self):
            super().__init__()
            kernel = xrt._core._cuda._UserKernel('extern "C" __global__ void k() {}', "k")
            self.replays = {n: xrt._core._cuda._Replay(kernel, 1, 1, [None] * n, [], [], None)
                            for n in (1, 2)}

        def _call(self, *args):
            if len(args) == 1:  # thread A
                a_inside.set()
                assert b_inside.wait(10)
                self._remember(self.replays[1], 1, 1)
                a_done.set()
            else:  # thread B
                b_inside.set()
                assert a_done.wait(10)
                self._remember(self.replays[2], 2, 1)
            return "slow"

    k = Recording()
    x = xrt.ones((2, 3))
    results = []
    a = threading.Thread(target=lambda: results.append(k(x)))
    a.start()
    assert a_inside.wait(10)
    results.append(k(x, x))
    a.join(10)
    assert results == ["slow", "slow"] and k._recorded == 2
    for args in ((x,), (x, x)):  # each replays its own recipe: the launch refuses the CPU
        with pytest.raises(ValueError, match="CUDA device"):
            k(*args)


def test_kernel_calls_have_signatures():
    """The calls are C++; inspect.signature(kernel) still gives their parameters, and the
    classes' signatures stay their constructors'."""
    import inspect

    ew = xrt.ElementwiseKernel("T x", "T y", "y = x", "ew_signature")
    red = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rk_signature")
    raw = xrt.RawKernel('extern "C" __global__ void k() {}', "k")
    assert str(inspect.signature(ew)) == "(*args, size=None, block_size=None, stream=None)"
    assert str(inspect.signature(red)) == \
        "(*args, out=None, axis=None, keepdims=False, stream=None)"
    assert str(inspect.signature(raw)) == "(grid, block, args, shared_mem=0, stream=None)"
    for cls in (xrt.ElementwiseKernel, xrt.ReductionKernel, xrt.RawKernel):
        assert next(iter(inspect.signature(cls).parameters)) in ("in_params", "code")
