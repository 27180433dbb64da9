"""examples/quickstart.py: the first thing to run after installing xpuruntime.

1. Framework-agnostic array code (it asks the array for its namespace) runs unchanged on
   NumPy and on xpuruntime.
2. The result goes to NumPy (and PyTorch, when installed) through DLPack without a copy.
3. A kernel policy pins the matmul kernel, and explain() tells which kernel ran and why.
"""

import numpy as np

import xpuruntime as xrt


def gram_row_totals(x):
    """Row sums of x @ x.T, written against the Array API only."""
    xp = x.__array_namespace__()
    gram = xp.matmul(x, x.T)
    return gram, xp.sum(gram, axis=1)


data = np.arange(12.0).reshape(3, 4)
_, expected = gram_row_totals(data)  # NumPy

x = xrt.asarray(data)  # a Tensor over NumPy's memory (DLPack, no copy)
assert x._data_ptr() == data.ctypes.data
gram, totals = gram_row_totals(x)
print("row totals on xpuruntime:", totals)
print("row totals on NumPy:     ", expected)
assert np.allclose(np.asarray(totals), expected)

# Zero-copy hand-off: NumPy sees the very same bytes.
view = np.from_dlpack(gram)
assert view.ctypes.data == gram._data_ptr()
print("NumPy view shares memory:", view.ctypes.data == gram._data_ptr())
try:
    import torch

    t = torch.from_dlpack(gram)
    print("PyTorch view shares memory:", t.data_ptr() == gram._data_ptr())
except ImportError:
    print("(PyTorch not installed: skipping the PyTorch hand-off)")

# Policy as code: pin matmul to the native kernel, and ask why each kernel ran.
with xrt.kernel_policy(matmul="native"), xrt.explain() as log:
    gram_row_totals(x)
print(log)
print(xrt.KernelPolicy(matmul="openblas").to_json())
