"""tests/test_blas_isolation.py: xpuruntime's OpenBLAS stays private to it (Note [Private BLAS]
in python/xpuruntime/_loader.py): SciPy's LAPACK and scikit-learn work after `import
xpuruntime`, and the process's global symbols do not include ours.

Each check runs in a fresh interpreter, so that xpuruntime is really imported first.
"""

import subprocess
import sys
import textwrap

import pytest


def run_fresh(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_our_blas_symbols_are_not_global():
    out = run_fresh("""
        import ctypes, sys
        import xpuruntime as xrt
        assert float(xrt.linalg.det(xrt.eye(3, dtype=xrt.float64))) == 1.0  # our LAPACK runs
        process = ctypes.CDLL(None)  # what any library's unresolved symbol can bind to
        for symbol in ("scipy_dgemm_64_", "droundup_lwork_", "scipy_dgesdd_64_"):
            assert not hasattr(process, symbol), symbol
        # Importing scipy_openblas64 would make them global: xpuruntime must not.
        assert "scipy_openblas64" not in sys.modules
        print("private")
    """)
    assert out.strip() == "private"


def test_scipy_lapack_after_importing_xpuruntime():
    pytest.importorskip("scipy")
    out = run_fresh("""
        import xpuruntime as xrt
        import numpy as np
        import scipy.linalg as sl

        rng = np.random.default_rng(0)
        a = rng.random((40, 6))
        u, s, vt = sl.svd(a)  # raised "Too large work array required" before the fix
        np.testing.assert_allclose((u[:, :6] * s) @ vt, a, atol=1e-12)
        b = rng.random(40)
        x, residues, rank, _ = sl.lstsq(a, b)
        assert rank == 6
        np.testing.assert_allclose(a.T @ (a @ x - b), 0, atol=1e-10)
        np.testing.assert_allclose(sl.svdvals(a), np.linalg.svd(a, compute_uv=False))
        # and ours still agrees
        ours = np.asarray(xrt.linalg.svdvals(xrt.asarray(a)))
        np.testing.assert_allclose(ours, s, rtol=1e-12)
        print("scipy ok")
    """)
    assert out.strip() == "scipy ok"


def test_scikit_learn_pca_and_lda_after_importing_xpuruntime():
    pytest.importorskip("sklearn")
    out = run_fresh("""
        import xpuruntime  # noqa: F401
        import numpy as np
        from sklearn.decomposition import PCA
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        rng = np.random.default_rng(1)
        X = rng.normal(size=(200, 8))
        X[:, 0] *= 10  # one dominant direction
        y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
        for solver in ("full", "randomized", "arpack"):
            pca = PCA(n_components=3, svd_solver=solver, random_state=0).fit(X)
            assert pca.components_.shape == (3, 8)
            assert abs(pca.components_[0, 0]) > 0.99, solver
        for solver in ("svd", "lsqr", "eigen"):
            lda = LinearDiscriminantAnalysis(solver=solver).fit(X, y)
            assert lda.score(X, y) > 0.8, solver
        print("sklearn ok")
    """)
    assert out.strip() == "sklearn ok"
