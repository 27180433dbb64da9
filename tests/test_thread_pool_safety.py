"""tests/test_thread_pool_safety.py: the thread pool when threads cannot be made (a pool with
the threads it got, never a hang), its cap, and set_num_threads while a GIL-free op is still
using the old pool (the pool is shared, so the op finishes on it). set_num_threads bounds
OpenBLAS's threads too."""

import os
import threading

import numpy as np
import pytest

import xpuruntime as xrt
from common import run_in_child


@pytest.fixture
def threads():
    before = xrt.num_threads()
    yield
    xrt.set_num_threads(before)


SANITIZED = any(name in os.environ.get("LD_PRELOAD", "") for name in ("libasan", "libtsan"))


@pytest.mark.skipif(SANITIZED, reason="a sanitizer's shadow memory needs more address space "
                                      "than the limit this test sets")
def test_refused_threads_leave_a_working_smaller_pool():
    # Under a small address space each new thread's 8 MiB stack fails to map part-way;
    # this once hung in pthread_cond_destroy.
    # The arrays exist before the pool grows: the threads it gets may use up the address
    # space, and what is tested is the pool, not later allocations.
    code = """
import numpy as np
a = np.arange(1_000_000, dtype=np.float64)
x = xrt.asarray(a)
xrt.set_num_threads(1000)
n = xrt.num_threads()
assert 1 <= n <= 1000, n
assert float(xrt.sum(x)) == float(np.sum(a))
xrt.set_num_threads(2)
assert xrt.num_threads() == 2
assert float(xrt.sum(x * 2.0)) == float(np.sum(a * 2.0))
print("threads", n)
"""
    rc, out, err = run_in_child(code, timeout=120, limit_address_space=4_000_000 * 1024)
    assert rc == 0, err[-3000:]
    assert out.strip().splitlines()[-1].startswith("threads")


def test_the_thread_count_is_capped(threads):
    cap = xrt.max_threads()
    assert cap >= 64
    with pytest.raises(ValueError, match=f"must lie in \\[1, {cap}\\]"):
        xrt.set_num_threads(cap + 1)
    with pytest.raises(ValueError):
        xrt.set_num_threads(0)


def test_the_environment_default_is_capped_too():
    rc, out, err = run_in_child("print(xrt.num_threads() <= xrt.max_threads())")
    assert rc == 0 and out.strip() == "True", err


def test_set_num_threads_while_gil_free_ops_run(threads):
    # sort and fft release the GIL and run on the pool; another thread keeps replacing the
    # pool under them. Each op must finish on the pool it started with, with right answers.
    rng = np.random.default_rng(3)
    a = rng.standard_normal(400_000)
    x = xrt.asarray(a)
    want_sort = np.sort(a)
    want_sum = float(np.sum(a))
    stop = threading.Event()
    errors = []

    def churn():
        counts = [1, 3, 2, 4]
        i = 0
        while not stop.is_set():
            xrt.set_num_threads(counts[i % 4])
            i += 1

    def work():
        try:
            for _ in range(15):
                np.testing.assert_array_equal(np.from_dlpack(xrt.sort(x)), want_sort)
                assert float(xrt.sum(x)) == pytest.approx(want_sum, rel=1e-12)
                xrt.fft.fft(x[:65536])
        except Exception as e:  # surfaced below
            errors.append(e)

    churner = threading.Thread(target=churn)
    workers = [threading.Thread(target=work) for _ in range(2)]
    churner.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
    stop.set()
    churner.join(timeout=60)
    assert not any(w.is_alive() for w in workers), "a worker hung"
    assert not errors, errors[0]


def test_set_num_threads_bounds_openblas():
    pytest.importorskip("threadpoolctl")
    rc, out, err = run_in_child("""
import scipy_openblas64, threadpoolctl
ours = scipy_openblas64.get_lib_dir()
def openblas_threads():
    return [i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["internal_api"] == "openblas" and i["filepath"].startswith(ours)]
xrt.set_num_threads(1)
one = openblas_threads()
xrt.set_num_threads(2)
print(one, openblas_threads())
""")
    assert rc == 0, err
    assert out.strip().splitlines()[-1] == "[1] [2]"


@pytest.mark.parametrize("order", ["xpuruntime first", "threadpoolctl first"])
def test_threadpoolctl_sees_and_limits_our_pool(order):
    pytest.importorskip("threadpoolctl")
    first = "import threadpoolctl" if order == "threadpoolctl first" else ""
    rc, out, err = run_in_child("""
import threadpoolctl
xrt.set_num_threads(3)
ours = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "xpuruntime"]
assert len(ours) == 1 and ours[0]["num_threads"] == 3, ours
with threadpoolctl.threadpool_limits(limits=1):
    inside = xrt.num_threads()
with threadpoolctl.threadpool_limits(limits=2, user_api="xpuruntime"):
    scoped = xrt.num_threads()
print(inside, scoped, xrt.num_threads())
""", before_import=first)
    assert rc == 0, err
    assert out.strip().splitlines()[-1] == "1 2 3"
