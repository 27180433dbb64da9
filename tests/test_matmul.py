"""tests/test_matmul.py: matmul, tensordot and vecdot against NumPy on every device (on CUDA:
cuBLAS, cuBLASLt and the integer kernel): every dtype, 1-d/2-d/batched/broadcast shapes,
transposed and offset views, empty dimensions, kernel pins, TF32 only when the policy allows
it, and the errors. The tests that take the `device` fixture run on the CPU and on CUDA; the
CUDA-only ones are marked cuda, and those with neither mark check what needs no GPU
(registration, the policy's TF32 setting, the message when cuBLAS is missing). The CPU's
pinned kernels and hypothesis tests of tensordot and vecdot are in test_dispatch.py and
test_linalg_products.py."""

import json

import numpy as np
import pytest
import xpuruntime as xrt
from common import CUDA_DEVICE, INTEGER, numpy_dtype, tensor, to_numpy

CUDA = CUDA_DEVICE
FLOATING = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
NUMERIC = FLOATING + INTEGER
BLAS_KERNELS = ("cublas", "cublaslt")
# Unit roundoff of the stored result and of the accumulation.
ROUNDOFF = {"float16": (2.0**-11, 2.0**-24), "bfloat16": (2.0**-8, 2.0**-24),
            "float32": (2.0**-24, 2.0**-24), "complex64": (2.0**-24, 2.0**-24),
            "float64": (2.0**-53, 2.0**-53), "complex128": (2.0**-53, 2.0**-53)}
rng = np.random.default_rng(1234)


def random(name, shape):
    """Random values of dtype `name`: small integers (so that products stay exact), floats
    in [-2, 2) (exact in every float dtype's rounding to 8 bits)."""
    dtype = numpy_dtype(name)
    if name in INTEGER:
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dtype)
    values = rng.integers(-256, 256, shape) / 128
    if name.startswith("complex"):
        values = values + 1j * rng.integers(-256, 256, shape) / 128
    return values.astype(dtype)


def on(device, a):
    return tensor(a, device)


def on_cuda(a):
    return on(CUDA, a)


def ones(shape, dtype="float32"):
    return on_cuda(np.ones(shape, dtype=dtype))


def host(t, device=CUDA):
    """A result as a NumPy array, after checking that it is on `device`."""
    assert t.device == xrt.Device(device)
    return to_numpy(t)


def wide(a):
    """a in the widest dtype of its kind, for references."""
    if a.dtype.kind in "iu":
        return a.astype(np.int64 if a.dtype.kind == "i" else np.uint64)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def assert_product(got, a, b, name, product=np.matmul, conj=False, k=None, device=CUDA):
    """got (a tensor on `device`) is product(a, b): exactly for integers (wrapping in the
    dtype), within the rounding bound (output rounding + k accumulation roundings) for
    floats."""
    dtype = numpy_dtype(name)
    out = host(got, device)
    a_ref = np.conj(wide(a)) if conj else wide(a)
    expected = product(a_ref, wide(b))
    assert out.dtype == dtype and out.shape == np.shape(expected)
    if name in INTEGER:
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, np.asarray(expected).astype(dtype))
        return
    k = max(1, a.shape[-1] if k is None else k)
    magnitude = product(np.abs(wide(a)), np.abs(wide(b)))
    stored, accumulated = ROUNDOFF[name]
    bound = (stored + 2 * k * accumulated) * magnitude + 1e-300
    error = np.abs(out.astype(expected.dtype) - expected)
    assert np.all(error <= bound), f"max error {error.max()} over bound"


def cuda_copy_kernel_registered():
    return any(k["device"] == "cuda" for k in xrt.list_kernels("copy"))


def run_integer(fn):
    """Runs fn; skips when the integer kernel's compiler (the NVRTC JIT) is not built in."""
    try:
        return fn()
    except xrt.UnsupportedOperationError as e:
        if "kernel compiler" in str(e):
            pytest.skip(str(e))
        raise


SHAPES = [  # (a, b): 1-d, 2-d, batched, broadcast, batches that need an outer loop
    ((7,), (7,)),
    ((5, 7), (7,)),
    ((7,), (7, 3)),
    ((5, 7), (7, 3)),
    ((4, 5, 7), (4, 7, 3)),
    ((4, 5, 7), (7, 3)),
    ((5, 7), (2, 7, 3)),
    ((2, 1, 5, 7), (3, 7, 3)),
    ((2, 3, 5, 7), (1, 3, 7, 3)),
    ((1, 1, 70), (70, 33)),
]


# ---- needs no GPU --------------------------------------------------------------------------


def test_cuda_kernels_are_registered_for_matmul_and_vecdot():
    names = {(k["op"], k["name"]) for k in xrt.list_kernels() if k["device"] == "cuda"}
    assert {("matmul", "cublas"), ("matmul", "cublaslt"), ("matmul", "native"),
            ("vecdot", "cublas"), ("vecdot", "native")} <= names


def test_allow_tf32_is_off_by_default_and_validated():
    assert xrt.KernelPolicy().allow_tf32 is False
    assert xrt.get_kernel_policy().allow_tf32 is False
    policy = xrt.KernelPolicy(allow_tf32=True)
    assert policy.allow_tf32 is True
    version = policy.version
    policy.allow_tf32 = False
    assert policy.version != version  # the dispatcher sees the change
    with pytest.raises(TypeError, match="allow_tf32"):
        xrt.KernelPolicy(allow_tf32=1)


def test_allow_tf32_round_trips_through_json():
    policy = xrt.KernelPolicy(matmul="cublaslt", allow_tf32=True)
    data = json.loads(policy.to_json())
    assert data["allow_tf32"] is True
    again = xrt.KernelPolicy.from_json(policy.to_json())
    assert again == policy and again.allow_tf32
    assert xrt.KernelPolicy.from_dict({"preferences": {}}).allow_tf32 is False
    assert xrt.KernelPolicy(allow_tf32=True) != xrt.KernelPolicy()
    assert "allow_tf32=True" in repr(policy)


def test_a_cuda_pin_does_not_break_cpu_matmuls():
    # An unscoped pin applies where its kernel exists (Note [Pins and devices]).
    a = xrt.ones((2, 2))
    with xrt.kernel_policy(matmul="cublaslt"), xrt.explain() as log:
        assert (a @ a).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert "does not apply on cpu" in log.records[-1].reason


def test_pinning_a_cuda_kernel_for_the_cpu_names_the_cpu_kernels():
    a = xrt.ones((2, 2))
    with xrt.kernel_policy(xrt.KernelPolicy(cpu={"matmul": "cublaslt"})), pytest.raises(
            xrt.UnsupportedOperationError, match="cublaslt.*openblas"):
        a @ a


def test_cublas_version_or_a_clear_error():
    try:
        version = xrt.cuda.cublas_version()
    except xrt.CudaError as e:
        assert "cuBLAS is not available" in str(e)
        assert "pip install nvidia-cublas" in str(e)
    else:
        assert version >= 120000  # CUDA 12 or newer: the _64 entry points exist


def test_a_stack_times_one_matrix_folds_into_rows_and_views_that_cannot_fold_still_work():
    # Note [Folding a batch into rows]: one product where A's batch and rows walk its memory
    # with one stride; a permuted batch, strided rows or a broadcast A take the batch loop.
    b = random("float64", (6, 3))
    base = random("float64", (4, 5, 6))
    cases = {
        "contiguous": base,
        "one row per matrix": random("float64", (4, 1, 6)),
        "rows of a transposed stack": np.transpose(random("float64", (1, 4, 6)), (1, 0, 2)),
        "permuted batch": np.transpose(base, (1, 0, 2)),
        "strided rows": base[:, ::2, :],
        "broadcast A": np.broadcast_to(random("float64", (1, 5, 6)), (4, 5, 6)),
    }
    for name, a in cases.items():
        x = xrt.asarray(a)
        if name == "rows of a transposed stack":
            x = xrt.permute_dims(xrt.asarray(np.transpose(a, (1, 0, 2)).copy()), (1, 0, 2))
        elif name == "permuted batch":
            x = xrt.permute_dims(xrt.asarray(base), (1, 0, 2))
        elif name == "strided rows":
            x = xrt.asarray(base)[:, ::2, :]
        elif name == "broadcast A":
            x = xrt.broadcast_to(xrt.asarray(a[:1].copy()), (4, 5, 6))
        got = np.asarray(x @ xrt.asarray(b))
        np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12, err_msg=name)
        got = np.asarray(xrt.matmul(x, xrt.broadcast_to(xrt.asarray(b), (a.shape[0], 6, 3))))
        np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12, err_msg=name)


# ---- every device, and CUDA alone -----------------------------------------------------------

@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize(("shape_a", "shape_b"), SHAPES)
def test_matmul_matches_numpy(device, name, shape_a, shape_b):
    a, b = random(name, shape_a), random(name, shape_b)
    got = run_integer(lambda: on(device, a) @ on(device, b))
    assert_product(got, a, b, name, device=device)


@pytest.mark.cuda
@pytest.mark.parametrize("kernel", BLAS_KERNELS)
@pytest.mark.parametrize("name", FLOATING)
@pytest.mark.parametrize(("shape_a", "shape_b"), SHAPES[2:])
def test_each_blas_kernel_pinned(kernel, name, shape_a, shape_b):
    a, b = random(name, shape_a), random(name, shape_b)
    with xrt.kernel_policy(matmul=kernel), xrt.explain() as log:
        got = on_cuda(a) @ on_cuda(b)
    assert_product(got, a, b, name)
    (record,) = [r for r in log.records if r.op == "matmul"]
    assert record.kernel == kernel and record.kind == "pinned"
    assert record.device == CUDA


@pytest.mark.cuda
@pytest.mark.parametrize("kernel", BLAS_KERNELS)
@pytest.mark.parametrize("name", ("float32", "complex128", "bfloat16"))
def test_transposed_and_offset_views_need_no_copy(kernel, name):
    """Views with a unit row or column stride (transposes, slices of larger matrices, an
    offset first element) go to the library as they are."""
    base_a, base_b = random(name, (3, 40, 66)), random(name, (3, 34, 41))
    cuda_a, cuda_b = on_cuda(base_a), on_cuda(base_b)
    # The same views of NumPy arrays and of tensors: k = 33 everywhere.
    for a_view in (lambda t: t[:, 1:, 1:34], lambda t: t[:, 1:34, 1:].mT):
        for b_view in (lambda t: t[:, 1:34, 2:], lambda t: t[:, 2:, 1:34].mT):
            with xrt.kernel_policy(matmul=kernel), xrt.explain() as log:
                got = a_view(cuda_a) @ b_view(cuda_b)
            assert log.kernels() == [kernel]  # and no copy ran
            assert_product(got, a_view(base_a), b_view(base_b), name)


@pytest.mark.cuda
@pytest.mark.parametrize("kernel", BLAS_KERNELS)
def test_views_blas_cannot_address_are_copied_first(kernel):
    if not cuda_copy_kernel_registered():
        pytest.skip("needs the CUDA copy kernel")
    a, b = random("float32", (9, 12)), random("float32", (12, 5))
    with xrt.kernel_policy(matmul=kernel):
        got = on_cuda(a)[:, ::2] @ on_cuda(b)[::-2]
    assert_product(got, a[:, ::2], b[::-2], "float32")


@pytest.mark.parametrize("name", ("float32", "complex64", "float16", "int32"))
@pytest.mark.parametrize(("shape_a", "shape_b"), [
    ((0, 4), (4, 3)), ((3, 4), (4, 0)), ((3, 0), (0, 5)), ((2, 0, 3, 0), (0, 4)),
    ((0,), (0,)), ((2, 3, 0), (2, 0, 4))])
def test_empty_dimensions(device, name, shape_a, shape_b):
    a, b = random(name, shape_a), random(name, shape_b)
    got = on(device, a) @ on(device, b)  # k = 0 must write zeros over fresh memory
    expected = np.matmul(wide(a), wide(b))
    out = host(got, device)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, np.zeros_like(out))


@pytest.mark.cuda
def test_default_choice_is_explained():
    a = on_cuda(random("float32", (8, 8)))
    with xrt.explain() as log:
        a @ a
    (record,) = log.records
    assert record.kernel == record.candidates[0] and record.kind == "first_supported"
    # the host fallback stays as the last resort
    assert set(record.candidates) == {"cublas", "cublaslt", "host_fallback"}
    assert record.candidates[-1] == "host_fallback"
    assert "by priority" in record.reason


@pytest.mark.cuda
@pytest.mark.parametrize("kernel", BLAS_KERNELS)
def test_tf32_is_off_by_default(kernel):
    """1 + 2^-12 is a float32 but not a TF32 (10-bit mantissa): with TF32 the product with
    the identity would come back as 1."""
    a = np.full((512, 512), 1 + 2.0**-12, dtype=np.float32)
    eye = np.eye(512, dtype=np.float32)
    with xrt.kernel_policy(matmul=kernel):
        got = host(on_cuda(a) @ on_cuda(eye))
    np.testing.assert_array_equal(got, a)


@pytest.mark.cuda
@pytest.mark.parametrize("kernel", BLAS_KERNELS)
@pytest.mark.parametrize("name", ("float32", "complex64"))
def test_tf32_when_the_policy_allows_it(kernel, name):
    a = np.full((1024, 1024), 1 + 2.0**-12, dtype=np.float32).astype(name)
    eye = np.eye(1024).astype(name)
    with xrt.kernel_policy(xrt.KernelPolicy(matmul=kernel, allow_tf32=True)):
        got = host(on_cuda(a) @ on_cuda(eye))
    # Each value is a rounded to TF32 (1) or, where a kernel kept float32, a itself;
    # the tensor-core kernels the library picks at this size round.
    assert np.all((got == 1) | (got == a))
    assert np.any(got == 1)


@pytest.mark.parametrize("name", NUMERIC)
def test_tensordot_matches_numpy(device, name):
    a, b = random(name, (3, 4, 5)), random(name, (4, 5, 6))
    got = run_integer(lambda: xrt.tensordot(on(device, a), on(device, b), axes=2))
    assert_product(got, a, b, name, product=lambda x, y: np.tensordot(x, y, axes=2), k=20,
                   device=device)
    got = run_integer(lambda: xrt.linalg.tensordot(on(device, a), on(device, b[0]), axes=1))
    assert_product(got, a, b[0], name, product=lambda x, y: np.tensordot(x, y, axes=1),
                   device=device)


def test_tensordot_with_permuted_axes(device):
    if device != "cpu" and not cuda_copy_kernel_registered():
        pytest.skip("needs the CUDA copy kernel")
    a, b = random("float64", (3, 4, 5)), random("float64", (5, 3, 2))
    got = xrt.tensordot(on(device, a), on(device, b), axes=([0, 2], [1, 0]))
    assert_product(got, a, b, "float64",
                   product=lambda x, y: np.tensordot(x, y, axes=([0, 2], [1, 0])), k=15,
                   device=device)


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize(("shape_a", "shape_b", "axis"), [
    ((7,), (7,), -1), ((4, 7), (4, 7), -1), ((3, 1, 7), (5, 7), -1), ((7, 4), (7, 4), -2)])
def test_vecdot_matches_numpy(device, name, shape_a, shape_b, axis):
    a, b = random(name, shape_a), random(name, shape_b)
    got = run_integer(lambda: xrt.vecdot(on(device, a), on(device, b), axis=axis))

    def reference(x, y):
        return np.sum(x * y, axis=axis)
    conj, k = name.startswith("complex"), a.shape[axis]
    assert_product(got, a, b, name, product=reference, conj=conj, k=k, device=device)
    got = run_integer(lambda: xrt.linalg.vecdot(on(device, a), on(device, b), axis=axis))
    assert_product(got, a, b, name, product=reference, conj=conj, k=k, device=device)


def test_linalg_matmul_is_matmul(device):
    a, b = random("complex64", (2, 3, 4)), random("complex64", (4, 5))
    assert_product(xrt.linalg.matmul(on(device, a), on(device, b)), a, b, "complex64",
                   device=device)


def test_integer_products_wrap(device):
    a = np.full((2, 300), 100, dtype=np.int8)
    b = np.full((300, 2), 3, dtype=np.int8)
    got = run_integer(lambda: on(device, a) @ on(device, b))
    assert_product(got, a, b, "int8", device=device)


@pytest.mark.cuda
def test_large_float16_products_accumulate_in_float32():
    """4096 ones summed in float16 would stop at 2048 (its integers end there)."""
    a = np.ones((4, 4096), dtype=np.float16)
    b = np.ones((4096, 4), dtype=np.float16)
    for kernel in BLAS_KERNELS:
        with xrt.kernel_policy(matmul=kernel):
            got = host(on_cuda(a) @ on_cuda(b))
        np.testing.assert_array_equal(got, np.full((4, 4), 4096, dtype=np.float16))


@pytest.mark.cuda
@pytest.mark.parametrize("make", [
    lambda: xrt.ones((2, 2)) @ ones((2, 2)),
    lambda: ones((2, 2)) @ xrt.ones((2, 2)),
    lambda: ones((2, 3)) @ ones((2, 3)),
    lambda: ones(()) @ ones((2,)),
    lambda: ones((2, 3, 4)) @ ones((3, 4, 5)),
    lambda: xrt.vecdot(ones((3,)), ones((4,))),
    lambda: xrt.vecdot(ones((3,)), xrt.ones((3,))),
    lambda: xrt.tensordot(ones((3,)), xrt.ones((3,)), axes=1),
])
def test_errors_as_on_cpu(make):
    with pytest.raises(ValueError):
        make()


def test_boolean_matmul_is_a_type_error(device):
    t = on(device, np.ones((2, 2), dtype="bool"))
    with pytest.raises(TypeError):
        t @ t


@pytest.mark.cuda
def test_pinning_a_blas_kernel_for_integers_is_refused():
    t = ones((2, 2), dtype="int64")
    with xrt.kernel_policy(matmul="cublas"), pytest.raises(
            xrt.UnsupportedOperationError, match="native"):
        t @ t


@pytest.mark.cuda
def test_best_performance_times_both_libraries():
    a = on_cuda(random("float16", (256, 256)))
    best = xrt.KernelPolicy(auto_strategy="BestPerformance")
    with xrt.kernel_policy(best), xrt.explain() as log:
        got = a @ a
    (record,) = log.records
    assert record.kind == "best_performance"
    assert "cublas" in record.reason and "cublaslt" in record.reason
    assert host(got).shape == (256, 256)
