"""tests/test_consumers.py: real Array API consumers run on xpuruntime arrays and agree with
their own NumPy results: array-api-compat, array-api-extra, SciPy (SCIPY_ARRAY_API=1) and
scikit-learn (array_api_dispatch, and its own estimator checks). Each part skips when its
library is not installed."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xpuruntime as xrt

rng = np.random.default_rng(7)
A = rng.standard_normal((6, 4))


def host(t):
    return np.from_dlpack(t)


def test_array_api_compat_finds_the_namespace():
    compat = pytest.importorskip("array_api_compat")
    x = xrt.asarray(A)
    assert compat.array_namespace(x) is xrt
    assert compat.array_namespace(x, xrt.asarray(1.0)) is xrt
    assert compat.is_array_api_obj(x)
    assert str(compat.device(x)) == "cpu"
    assert compat.size(x) == 24
    np.testing.assert_array_equal(host(compat.to_device(x, "cpu")), A)


def test_array_api_extra_functions():
    xpx = pytest.importorskip("array_api_extra")
    x = xrt.asarray(A)
    np.testing.assert_allclose(host(xpx.cov(x.T)), np.cov(A.T), rtol=1e-12)
    np.testing.assert_allclose(host(xpx.kron(x[:2, :2], x[:2, :2])),
                               np.kron(A[:2, :2], A[:2, :2]))
    np.testing.assert_array_equal(
        host(xpx.setdiff1d(xrt.asarray([1, 2, 3, 4]), xrt.asarray([2, 4]))), [1, 3])
    np.testing.assert_allclose(host(xpx.sinc(x)), np.sinc(A), rtol=1e-12)
    np.testing.assert_array_equal(host(xpx.pad(x, 2)), np.pad(A, 2))
    assert int(xpx.nunique(xrt.asarray([1, 1, 2, 3]))) == 3
    expected = A.copy()
    expected[1:3, 0] = 7
    np.testing.assert_array_equal(host(xpx.at(x)[1:3, 0].set(7.0)), expected)
    np.testing.assert_array_equal(host(x), A)  # at() copies
    np.testing.assert_array_equal(host(xpx.one_hot(xrt.asarray([0, 2, 1]), 3)),
                                  np.eye(3)[[0, 2, 1]])
    assert bool(xrt.all(xpx.isclose(x, x + 1e-12)))


# SciPy reads SCIPY_ARRAY_API when it is first imported, so its part runs in a child process.
SCIPY_SCRIPT = textwrap.dedent("""
    import numpy as np, xpuruntime as xrt
    from scipy import special, stats, fft, ndimage, cluster
    rng = np.random.default_rng(7)
    A = rng.standard_normal((6, 4))
    x = xrt.asarray(A)
    cases = {
        "logsumexp": (special.logsumexp(x, axis=1), special.logsumexp(A, axis=1)),
        "softmax": (special.softmax(x, axis=0), special.softmax(A, axis=0)),
        "erf": (special.erf(x), special.erf(A)),
        "zscore": (stats.zscore(x), stats.zscore(A)),
        "skew": (stats.skew(x), stats.skew(A)),
        "moment": (stats.moment(x, order=3), stats.moment(A, order=3)),
        "pearsonr": (stats.pearsonr(x[:, 0], x[:, 1]).statistic,
                     stats.pearsonr(A[:, 0], A[:, 1]).statistic),
        "fft": (fft.fft(x), fft.fft(A)),
        "rfft2": (fft.rfft2(x), fft.rfft2(A)),
        "dct": (fft.dct(x), fft.dct(A)),
        "gaussian_filter": (ndimage.gaussian_filter(x, 1.0), ndimage.gaussian_filter(A, 1.0)),
        "whiten": (cluster.vq.whiten(x), cluster.vq.whiten(A)),
    }
    # The elementwise iterative methods: xp.full(n, 0-d array) and dtype=bool inside
    # (Notes [Array fill values] and [Python types as dtypes]).
    from scipy import differentiate, integrate
    from scipy.optimize import elementwise
    c = np.linspace(0.5, 2.0, 4)
    for name, run in {
        "derivative": lambda m: differentiate.derivative(lambda t: t**3, m(c)).df,
        "jacobian": lambda m: differentiate.jacobian(lambda t: t**2, m(c)).df,
        "find_root": lambda m: elementwise.find_root(
            lambda t, k: t**3 - k, (m(np.zeros(4)), m(np.full(4, 3.0))), args=(m(c),)).x,
        "find_minimum": lambda m: elementwise.find_minimum(
            lambda t, k: (t - k)**2, (m(np.zeros(4)), m(np.ones(4)), m(np.full(4, 3.0))),
            args=(m(c),)).x,
        "cubature": lambda m: integrate.cubature(
            lambda t: t[:, 0]**2 + t[:, 1], m(np.zeros(2)), m(np.ones(2))).estimate,
    }.items():
        cases[name] = (run(xrt.asarray), run(np.asarray))
    for name, (got, want) in cases.items():
        assert isinstance(got, xrt.Tensor), (name, type(got))
        np.testing.assert_allclose(np.from_dlpack(got), want, rtol=1e-10, atol=1e-12,
                                   err_msg=name)
    print("ok", len(cases))
""")


def test_scipy_with_array_api_dispatch():
    pytest.importorskip("scipy")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    r = subprocess.run([sys.executable, "-c", SCIPY_SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok 17"


# scikit-learn's array API support needs SciPy's, so it runs in a child process too.
SKLEARN_SCRIPT = textwrap.dedent("""
    import numpy as np, sklearn, xpuruntime as xrt
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge
    from sklearn.metrics import accuracy_score, pairwise_distances, r2_score, roc_auc_score
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 5))
    y_class = (X[:, 0] > 0).astype(np.int64)
    y_reg = X @ np.arange(5.0)
    estimators = {
        "PCA": (lambda: PCA(n_components=3, svd_solver="full"), None),
        "LinearDiscriminantAnalysis": (LinearDiscriminantAnalysis, y_class),
        "StandardScaler": (StandardScaler, None),
        "MinMaxScaler": (MinMaxScaler, None),
        "Ridge": (lambda: Ridge(alpha=1.0, solver="svd"), y_reg),
    }
    for name, (make, target) in estimators.items():
        args = (X,) if target is None else (X, target)
        reference = make().fit(*args)
        want = (reference.predict if hasattr(reference, "predict") else reference.transform)(X)
        with sklearn.config_context(array_api_dispatch=True):
            model = make().fit(*(xrt.asarray(a) for a in args))
            got = (model.predict if hasattr(model, "predict") else model.transform)(
                xrt.asarray(X))
        assert isinstance(got, xrt.Tensor), (name, type(got))
        got = np.from_dlpack(got)
        if name == "PCA":  # components are defined up to sign
            got, want = np.abs(got), np.abs(want)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10, err_msg=name)
    labels = rng.integers(0, 3, 20)
    y = rng.standard_normal(20)
    with sklearn.config_context(array_api_dispatch=True):
        d = pairwise_distances(xrt.asarray(X[:8]))
        r2 = r2_score(xrt.asarray(y), xrt.asarray(y * 0.9))
        acc = accuracy_score(xrt.asarray(labels), xrt.asarray(labels[::-1].copy()))
        # roc_curve calls xp.diff(fps, 2), xp.logical_or on floats and xp.where(condition)
        auc = roc_auc_score(xrt.asarray(y_class), xrt.asarray(X[:, 0] + X[:, 1]))
    np.testing.assert_allclose(np.from_dlpack(d), pairwise_distances(X[:8]), atol=1e-12)
    assert abs(float(r2) - r2_score(y, y * 0.9)) < 1e-12
    assert float(acc) == accuracy_score(labels, labels[::-1])
    assert abs(float(auc) - roc_auc_score(y_class, X[:, 0] + X[:, 1])) < 1e-12
    print("ok", len(estimators) + 4)
""")


def test_scikit_learn_with_array_api_dispatch():
    pytest.importorskip("sklearn")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    r = subprocess.run([sys.executable, "-c", SKLEARN_SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok 9"


# scikit-learn's own array API check (sklearn.utils.estimator_checks.check_array_api_input)
# over every estimator that declares array API support: fitted attributes and method outputs
# in our namespace, on our device, equal to the NumPy fit's (check_values), with sample
# weights where fit takes them. Two exceptions: LabelEncoder's fit takes y alone (the check
# passes X and y), so it is checked directly; PCA's values are not compared, since the
# check's data has rank 8 of 10 and its last two components span a null space any basis of
# which is right (PyTorch's differ from NumPy's there too).
SKLEARN_CHECKS_SCRIPT = textwrap.dedent("""
    import warnings
    warnings.filterwarnings("ignore")
    import sys
    import numpy as np, sklearn, xpuruntime as xrt
    try:
        from sklearn.utils.estimator_checks import check_array_api_input
        from sklearn.utils._test_common.instance_generator import _tested_estimators
    except ImportError as e:
        print("skip", e)
        raise SystemExit(0)
    from sklearn.preprocessing import LabelEncoder
    xrt.set_default_device(sys.argv[1])  # the checks make their arrays on the default device
    checked, failed = [], []
    for est in _tested_estimators():
        name = type(est).__name__
        if not est.__sklearn_tags__().array_api_support or name == "LabelEncoder":
            continue
        try:
            check_array_api_input(name, est, "xpuruntime", dtype_name="float64",
                                  check_values=name != "PCA", check_sample_weight=True)
            checked.append(name)
        except Exception as e:
            failed.append(f"{name}: {type(e).__name__}: {str(e)[:400]}")
    labels = np.array([3, 1, 3, 7, 1, 0])
    with sklearn.config_context(array_api_dispatch=True):
        enc = LabelEncoder().fit(xrt.asarray(labels))
        codes = enc.transform(xrt.asarray(labels))
        back = enc.inverse_transform(codes)
    want = LabelEncoder().fit(labels)
    assert isinstance(codes, xrt.Tensor), type(codes)
    cpu = xrt.Device("cpu")
    np.testing.assert_array_equal(np.from_dlpack(enc.classes_.to_device(cpu)), want.classes_)
    np.testing.assert_array_equal(np.from_dlpack(codes.to_device(cpu)), want.transform(labels))
    np.testing.assert_array_equal(np.from_dlpack(back.to_device(cpu)), labels)
    checked.append("LabelEncoder")
    for f in failed:
        print("FAILED", f)
    print("checked", len(checked), " ".join(sorted(set(checked))))
""")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda:0", marks=pytest.mark.cuda)])
def test_scikit_learn_estimator_checks(device):
    pytest.importorskip("sklearn")
    if device != "cpu" and not xrt.cuda.is_available():
        pytest.skip("CUDA unavailable")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    r = subprocess.run([sys.executable, "-c", SKLEARN_CHECKS_SCRIPT, device], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    if r.stdout.startswith("skip"):
        pytest.skip("this scikit-learn has no check_array_api_input: " + r.stdout)
    assert "FAILED" not in r.stdout, r.stdout
    count = int(r.stdout.split("checked ")[1].split()[0])
    assert count >= 15, r.stdout  # 21 checks (19 estimators) in scikit-learn 1.9
