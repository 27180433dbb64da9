"""python/xpuruntime/linalg.py: the Array API linalg extension (``xpuruntime.linalg``).

Every function is C++ (``cpp/src/core/linalg_ops.cpp`` and
``linalg_composite_ops.cpp``, LAPACK from scipy-openblas64); this module gathers them
with the main namespace's ``matmul``, ``matrix_transpose``, ``tensordot`` and ``vecdot``,
which the extension shares. A matrix the algorithm cannot handle (singular in ``inv`` and
``solve``, not positive definite in ``cholesky``, no convergence) raises ``LinAlgError``,
a ``ValueError``.
"""

from . import matmul, matrix_transpose, tensordot, vecdot
from ._array_api import _signatures
from ._core._linalg import (
    LinAlgError,
    cholesky,
    cross,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    matrix_norm,
    matrix_power,
    matrix_rank,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    trace,
    vector_norm,
)

__all__ = [
    "LinAlgError",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]

LinAlgError.__module__ = __name__  # shown as xpuruntime.linalg.LinAlgError
_signatures.install_namespace(globals(), _signatures.LINALG, __name__)
