"""tests/common.py: the dtype table, the devices and the comparison helpers shared by the
tests.

Imported as ``from common import ...`` (pytest puts this folder on sys.path,
the way nanobind's tests import their ``common.py``).

One test body serves every device, as CuPy's ``numpy_cupy_allclose`` runs one body on NumPy
and on CuPy: a test takes conftest's ``device`` fixture (each of DEVICES), makes its inputs
with ``tensor(a, device)`` and reads results back with ``to_numpy``, which copies a device
tensor to the host. The CUDA parameter carries ``@pytest.mark.cuda`` and skips without a GPU,
so a new test written this way is covered on CUDA without a second copy.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest

import xpuruntime as xrt

# name -> (itemsize, kind); the order is the spec's order.
DTYPES = {
    "bool": (1, "bool"),
    "int8": (1, "signed integer"),
    "int16": (2, "signed integer"),
    "int32": (4, "signed integer"),
    "int64": (8, "signed integer"),
    "uint8": (1, "unsigned integer"),
    "uint16": (2, "unsigned integer"),
    "uint32": (4, "unsigned integer"),
    "uint64": (8, "unsigned integer"),
    "float16": (2, "real floating"),
    "bfloat16": (2, "real floating"),
    "float32": (4, "real floating"),
    "float64": (8, "real floating"),
    "complex64": (8, "complex floating"),
    "complex128": (16, "complex floating"),
}
ALL = tuple(DTYPES)
NUMERIC = tuple(n for n in ALL if n != "bool")
SIGNED = tuple(n for n in ALL if DTYPES[n][1] == "signed integer")
UNSIGNED = tuple(n for n in ALL if DTYPES[n][1] == "unsigned integer")
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = tuple(n for n in ALL if DTYPES[n][1] == "real floating")
COMPLEX = tuple(n for n in ALL if DTYPES[n][1] == "complex floating")
FLOATING = REAL_FLOATING + COMPLEX
# Everything NumPy represents natively (bfloat16 needs ml_dtypes).
NUMPY_NATIVE = tuple(n for n in ALL if n != "bfloat16")

# The devices a test body runs on (conftest's `device` fixture): the CPU, and the first CUDA
# device, marked so that it skips without a GPU and `pytest -m cuda` selects it.
CUDA_DEVICE = "cuda:0"
DEVICES = ("cpu", pytest.param(CUDA_DEVICE, marks=pytest.mark.cuda, id="cuda"))


def numpy_dtype(name):
    """The NumPy equivalent of dtype `name`; skips the test when bfloat16
    has no NumPy counterpart (ml_dtypes missing)."""
    if name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def on_cpu(t):
    """A tensor on a device as its copy on the CPU (an explicit copy: NumPy may not read
    device memory); a CPU tensor, or anything else, as it is."""
    if isinstance(t, xrt.Tensor) and t.device.type != "cpu":
        return t.to_device("cpu")
    return t


def to_numpy(t):
    """A NumPy array with the tensor's dtype and values (bfloat16 included), copied to the
    host first when the tensor lives on a device."""
    if t.dtype == xrt.bfloat16:
        numpy_dtype("bfloat16")  # skip without ml_dtypes
    return np.asarray(on_cpu(t))


def tensor(a, device=None):
    """`xrt.asarray(a)` for a NumPy array of any of the 15 dtypes, on `device` if given
    (a CPU tensor shares `a`'s memory; one on another device is a copy).

    NumPy exports ml_dtypes' bfloat16 through neither the buffer protocol nor
    DLPack, so bfloat16 arrays travel as float32 (exact) and are cast back.
    """
    if a.dtype.name == "bfloat16":
        t = xrt.astype(xrt.asarray(a.astype(np.float32)), xrt.bfloat16)
    else:
        t = xrt.asarray(a)
    return t if device is None or device == "cpu" else t.to_device(device)


def arrays(name, shape, **element_kwargs):
    """A hypothesis strategy of NumPy arrays of dtype `name`."""
    np_dtype = numpy_dtype(name)
    if name != "bfloat16":
        elements = hnp.from_dtype(np_dtype, **element_kwargs)
        return hnp.arrays(np_dtype, shape, elements=elements)
    elements = hnp.from_dtype(np.dtype(np.float32), **element_kwargs)
    return hnp.arrays(np.float32, shape, elements=elements).map(
        lambda a: a.astype(np_dtype))


def assert_tensor_equal(t, expected):
    """`t` is a Tensor with exactly the dtype, shape and values of `expected`
    (NaNs compare equal)."""
    expected = np.asarray(expected)
    assert isinstance(t, xrt.Tensor)
    assert t.dtype == getattr(xrt, expected.dtype.name)
    assert t.shape == expected.shape
    actual = to_numpy(t)
    if expected.dtype.name == "bfloat16":  # ml_dtypes' NaN does not compare as NaN here
        assert actual.dtype == expected.dtype
        actual, expected = actual.astype(np.float32), expected.astype(np.float32)
    np.testing.assert_array_equal(actual, expected, strict=True)



def wide(a):
    """a in the widest NumPy type of its kind, for float references."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def run_in_child(code, timeout=120, limit_address_space=None, before_import=""):
    """Runs `code` (after `before_import`, then `import xpuruntime as xrt`) in a fresh
    interpreter and returns (returncode, stdout, stderr). A case that might crash or hang
    runs here, so that a crash fails one test instead of ending the test run.
    limit_address_space: bytes for RLIMIT_AS (thread stacks then fail to map, as under
    `ulimit -v`)."""
    import os
    import subprocess
    import sys
    import textwrap

    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_address_space, limit_address_space))

    program = before_import + "\nimport xpuruntime as xrt\n" + textwrap.dedent(code)
    try:
        r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           timeout=timeout, env=dict(os.environ, PYTHONFAULTHANDLER="1"),
                           preexec_fn=limit if limit_address_space else None)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child hung for {timeout} s running:\n{program}")
    return r.returncode, r.stdout, r.stderr


def raises_in_child(code, timeout=120):
    """The exception `code` raises in a fresh interpreter, as (type name, message); fails the
    test when the child crashes, hangs or raises nothing."""
    wrapped = ("try:\n" + "".join("    " + line + "\n" for line in code.strip().splitlines()) +
               "except BaseException as e:\n"
               "    print('RAISED', type(e).__name__, '|', e)\n"
               "else:\n    print('NO EXCEPTION')\n")
    rc, out, err = run_in_child(wrapped, timeout=timeout)
    assert rc == 0, f"the child died (return code {rc}):\n{err[-3000:]}"
    last = out.strip().splitlines()[-1]
    assert last.startswith("RAISED "), f"expected an exception from:\n{code}\ngot: {last}"
    name, message = last[len("RAISED "):].split(" | ", 1)
    return name, message
