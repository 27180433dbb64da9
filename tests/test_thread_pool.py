"""tests/test_thread_pool.py: the CPU thread pool under concurrent callers, more threads than
cores, and back-to-back small parallel jobs (Note [Never waiting for a late worker])."""

import threading

import numpy as np
import pytest

import xpuruntime as xrt


@pytest.fixture
def threads():
    before = xrt.num_threads()
    yield
    xrt.set_num_threads(before)


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_back_to_back_parallel_jobs(threads, count):
    xrt.set_num_threads(count)
    a = np.arange(200_003, dtype=np.float64)
    x = xrt.asarray(a)
    for i in range(300):  # each op is a few chunks: workers often wake after the job ended
        y = x * float(i)
        assert float(xrt.sum(y)) == pytest.approx(float(np.sum(a * float(i))), rel=1e-12)
    np.testing.assert_array_equal(np.from_dlpack(x + x), a + a)


def test_concurrent_python_threads_get_right_answers(threads):
    xrt.set_num_threads(3)
    rng = np.random.default_rng(5)
    data = [rng.standard_normal(150_000) for _ in range(4)]
    errors = []

    def worker(a):
        try:
            x = xrt.asarray(a)
            for _ in range(60):
                np.testing.assert_array_equal(np.from_dlpack(x * 2.0 + 1.0), a * 2.0 + 1.0)
                np.testing.assert_allclose(float(xrt.max(x)), a.max())
        except Exception as e:  # surfaced below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(a,)) for a in data]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    assert not errors, errors[0]


def test_changing_the_thread_count_between_jobs(threads):
    a = np.linspace(-1, 1, 300_001)
    x = xrt.asarray(a)
    want = np.exp(a)
    for count in [4, 1, 2, 5, 2]:
        xrt.set_num_threads(count)
        assert xrt.num_threads() == count
        np.testing.assert_array_equal(np.from_dlpack(xrt.exp(x)), np.from_dlpack(xrt.exp(x)))
        np.testing.assert_allclose(np.from_dlpack(xrt.exp(x)), want, rtol=1e-15)
