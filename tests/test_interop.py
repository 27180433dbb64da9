"""tests/test_interop.py: DLPack exchange with PyTorch, JAX and CuPy (each
skipped when the library is not installed)."""

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, COMPLEX, assert_tensor_equal


def as_float64(t):
    """The tensor's values as NumPy float64/complex128 (bfloat16 included)."""
    wide = xrt.complex128 if t.dtype.name in COMPLEX else xrt.float64
    return np.asarray(xrt.astype(t, wide))


# ----------------------------------------------------------------- PyTorch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def torch_tensor(torch, name, values):
    """`values` as a torch tensor of dtype `name`, or a skip if this torch
    cannot build or export that dtype (uint16/32/64 are recent)."""
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"torch has no {name}")
    try:
        tt = torch.tensor(values).to(dtype)
        tt.__dlpack__()
    except (RuntimeError, TypeError, BufferError) as error:
        pytest.skip(f"torch cannot export {name}: {error}")
    return tt


@pytest.mark.parametrize("name", ALL)
def test_import_from_torch_shares_memory(torch, name):
    tt = torch_tensor(torch, name, [[1, 2, 3], [4, 5, 6]])
    t = xrt.from_dlpack(tt)
    assert t.dtype == getattr(xrt, name)
    assert t.shape == (2, 3)
    wide = torch.complex128 if name in COMPLEX else torch.float64
    np.testing.assert_array_equal(as_float64(t), tt.to(wide).numpy())
    tt.zero_()
    np.testing.assert_array_equal(as_float64(t), np.zeros((2, 3)))


@pytest.mark.parametrize("name", ALL)
def test_export_to_torch_keeps_the_dtype(torch, name):
    t = xrt.asarray([[0, 1, 1]], dtype=getattr(xrt, name))
    tt = torch.from_dlpack(t)
    assert tt.dtype == getattr(torch, name)
    assert tuple(tt.shape) == (1, 3)


def test_torch_writes_are_seen_by_the_tensor(torch):
    t = xrt.arange(6, dtype=xrt.float32)
    tt = torch.from_dlpack(t)
    tt[0] = 42
    tt[5] += 1
    np.testing.assert_array_equal(np.asarray(t),
                                  np.array([42, 1, 2, 3, 4, 6], np.float32))


@pytest.mark.parametrize("view", [lambda b: b.t(), lambda b: b[:, ::2],
                                  lambda b: b[1:, 1:].t(),
                                  lambda b: b.t()[::2]],
                         ids=["t", "every other column", "offset", "both"])
def test_non_contiguous_torch_tensors(torch, view):
    base = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    tt = view(base)
    t = xrt.from_dlpack(tt)
    assert_tensor_equal(t, tt.numpy())
    base += 100  # in place: the import is a view of base
    assert_tensor_equal(t, tt.numpy())


def test_torch_round_trip_is_zero_copy(torch):
    tt = torch.arange(10, dtype=torch.int32)[::3]
    again = torch.from_dlpack(xrt.from_dlpack(tt))
    assert again.data_ptr() == tt.data_ptr()
    assert again.stride() == tt.stride()
    assert torch.equal(again, tt)


def test_torch_bfloat16_values(torch):
    tt = torch.tensor([1.5, -2.0, 3.25, 256.0], dtype=torch.bfloat16)
    t = xrt.from_dlpack(tt)
    assert t.dtype == xrt.bfloat16
    np.testing.assert_array_equal(as_float64(t), [1.5, -2.0, 3.25, 256.0])


@pytest.mark.cuda
def test_torch_cuda_tensors_round_trip(torch):
    tt = torch.arange(6, dtype=torch.float32, device="cuda")
    t = xrt.from_dlpack(tt)
    assert t.device == xrt.Device("cuda:0")
    np.testing.assert_array_equal(np.asarray(t.to_device("cpu")),
                                  np.arange(6, dtype=np.float32))
    again = torch.from_dlpack(t)
    assert again.device.type == "cuda"
    assert again.data_ptr() == tt.data_ptr()


# --------------------------------------------------------------------- JAX

JAX_DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16",
              "bfloat16", "float32", "complex64"]  # without jax_enable_x64


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


def jax_cpu_array(jax, values, name):
    # On a machine with a GPU, JAX would put arrays there by default.
    values = np.asarray(values).astype(np.dtype(getattr(jax.numpy, name)))
    return jax.device_put(values, jax.devices("cpu")[0])


@pytest.mark.parametrize("name", JAX_DTYPES)
def test_import_from_jax(jax, name):
    j = jax_cpu_array(jax, [[0, 1, 2], [3, 4, 5]], name)
    t = xrt.from_dlpack(j)
    assert t.dtype == getattr(xrt, name)
    np.testing.assert_array_equal(as_float64(t),
                                  np.asarray(j).astype(np.complex128).real)


@pytest.mark.parametrize("name", JAX_DTYPES)
def test_export_to_jax(jax, name):
    t = xrt.asarray([[0, 1, 1], [1, 0, 1]], dtype=getattr(xrt, name))
    j = jax.numpy.from_dlpack(t)
    assert j.dtype.name == name
    np.testing.assert_array_equal(np.asarray(j).astype(np.complex128).real,
                                  [[0, 1, 1], [1, 0, 1]])


# -------------------------------------------------------------------- CuPy


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["int8", "uint16", "float16", "float32",
                                  "complex128"])
def test_cupy_round_trip_shares_device_memory(cp, name):
    c = cp.arange(6).astype(name)
    t = xrt.from_dlpack(c)
    assert t.device == xrt.Device("cuda:0")
    assert t.dtype == getattr(xrt, name)
    back = cp.from_dlpack(t)
    assert back.data.ptr == c.data.ptr
    c += 1  # seen through t
    np.testing.assert_array_equal(np.asarray(t.to_device("cpu")),
                                  np.arange(1, 7).astype(name))


@pytest.mark.cuda
def test_cupy_strided_import(cp):
    c = cp.arange(24, dtype=cp.float32).reshape(4, 6)[::2, ::-1].T
    t = xrt.from_dlpack(c)
    assert_tensor_equal(t.to_device("cpu"), cp.asnumpy(c))
