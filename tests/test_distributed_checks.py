"""tests/test_distributed_checks.py: what the collectives refuse before anything is queued,
NCCL's absence explained, and the process group's errors before init (all on the CPU)."""

import os
import subprocess
import sys
import textwrap

import pytest

import xpuruntime as xrt
import xpuruntime.distributed as dist
from xpuruntime import _core

ReduceOp = dist.ReduceOp
check = _core._cuda._check_collective


def t(shape, dtype=xrt.float32):
    return xrt.zeros(shape, dtype=dtype)


REDUCIBLE = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
             "float32", "float64"]


@pytest.mark.parametrize("name", REDUCIBLE)
@pytest.mark.parametrize("op", [ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MIN, ReduceOp.MAX])
def test_every_nccl_dtype_reduces_with_every_op(name, op):
    x = t((4,), getattr(xrt, name))
    # Dtype and shape pass: only the device (CPU here) is refused.
    with pytest.raises(ValueError, match="is on cpu"):
        check("all_reduce", x, x, op, 2, 0, 0)


@pytest.mark.parametrize("name", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_avg_of_integers_is_refused(name):
    x = t((4,), getattr(xrt, name))
    with pytest.raises(TypeError, match=f"cannot reduce {name} with AVG"):
        check("all_reduce", x, x, ReduceOp.AVG, 2, 0, 0)


@pytest.mark.parametrize("name, op", [
    ("int16", ReduceOp.SUM), ("uint16", ReduceOp.MAX), ("bool", ReduceOp.SUM),
    ("complex64", ReduceOp.PROD), ("complex128", ReduceOp.MAX),
])
def test_dtypes_nccl_cannot_reduce_are_type_errors(name, op):
    x = t((4,), getattr(xrt, name))
    for kind in ("all_reduce", "reduce"):
        with pytest.raises(TypeError, match=f"cannot reduce {name}"):
            check(kind, x, x, op, 2, 0, 0)


@pytest.mark.parametrize("name, op", [
    ("complex64", ReduceOp.SUM), ("complex128", ReduceOp.AVG), ("bool", ReduceOp.MAX),
    ("bool", ReduceOp.MIN), ("float16", ReduceOp.AVG),
])
def test_complex_sums_and_boolean_any_all_are_accepted(name, op):
    x = t((4,), getattr(xrt, name))
    with pytest.raises(ValueError, match="is on cpu"):
        check("all_reduce", x, x, op, 2, 0, 0)


@pytest.mark.parametrize("kind", ["broadcast", "all_gather", "all_to_all", "send", "recv"])
@pytest.mark.parametrize("name", ["bool", "int16", "uint16", "complex128"])
def test_data_movement_takes_every_dtype(kind, name):
    x = t((4,), getattr(xrt, name))
    out = t((8,), x.dtype) if kind == "all_gather" else x
    with pytest.raises(ValueError, match="is on cpu"):
        check(kind, x, out, ReduceOp.SUM, 2, 0, 0)


def test_input_and_output_dtypes_must_match():
    with pytest.raises(TypeError, match="input is float32, the output float64"):
        check("all_reduce", t((4,)), t((4,), xrt.float64), ReduceOp.SUM, 2, 0, 0)


@pytest.mark.parametrize("kind, inp, out", [
    ("all_reduce", (4,), (5,)),
    ("broadcast", (2, 3), (3, 2)),
    ("reduce", (4,), (4, 1)),
    ("all_gather", (4,), (4,)),
    ("all_gather", (2, 3), (4, 4)),
    ("all_gather", (2, 3), (3, 2, 3)),
    ("reduce_scatter", (4,), (4,)),
    ("reduce_scatter", (6,), (2,)),
    ("all_to_all", (4,), (2, 2)),
    ("all_to_all", (3,), (3,)),
    ("all_to_all", (), ()),
])
def test_shapes_that_do_not_fit_are_value_errors(kind, inp, out):
    with pytest.raises(ValueError, match="shape|axis"):
        check(kind, t(inp), t(out), ReduceOp.SUM, 2, 0, 0)


@pytest.mark.parametrize("kind, inp, out", [
    ("all_gather", (2, 3), (4, 3)), ("all_gather", (2, 3), (2, 2, 3)), ("all_gather", (), (2,)),
    ("reduce_scatter", (4, 3), (2, 3)), ("reduce_scatter", (2, 2, 3), (2, 3)),
    ("all_to_all", (4, 3), (4, 3)),
])
def test_gathered_layouts_are_accepted(kind, inp, out):
    with pytest.raises(ValueError, match="is on cpu"):
        check(kind, t(inp), t(out), ReduceOp.SUM, 2, 0, 0)


@pytest.mark.parametrize("kind", ["broadcast", "reduce", "send", "recv"])
@pytest.mark.parametrize("peer", [-1, 2])
def test_root_or_peer_outside_the_ranks_is_a_value_error(kind, peer):
    with pytest.raises(ValueError, match=f"{peer} is not a rank of a communicator of 2"):
        check(kind, t((4,)), t((4,)), ReduceOp.SUM, 2, 0, peer)


def test_unknown_collective_is_a_value_error():
    with pytest.raises(ValueError, match="unknown collective"):
        check("scatter", t((4,)), t((4,)), ReduceOp.SUM, 2, 0, 0)


def test_non_tensors_are_type_errors():
    with pytest.raises(TypeError, match="DLPack tensor"):
        dist._communicator.as_tensor([1, 2], "tensor")


def test_process_group_calls_before_init_raise():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(t((1,)))):
        with pytest.raises(dist.DistributedError, match="not initialized"):
            call()
    assert issubclass(dist.DistributedError, xrt.XpuRuntimeError)


def test_init_process_group_needs_rank_and_world_size(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    with pytest.raises(ValueError, match="RANK is not set"):
        dist.init_process_group()
    with pytest.raises(ValueError, match=r"rank 2 is not in \[0, world_size=2\)"):
        dist.init_process_group(rank=2, world_size=2)


@pytest.mark.parametrize("timeout", ["10", True, [1]])
def test_timeout_must_be_seconds_or_a_timedelta(timeout):
    with pytest.raises(TypeError, match="timeout"):
        dist.init_process_group(rank=0, world_size=1, timeout=timeout)


def test_missing_nccl_says_how_to_install_it():
    # A fresh process: the loader remembers what it found. The finder hides the wheels, an
    # empty library path hides the system's NCCL (none on a CPU machine anyway).
    code = textwrap.dedent("""
        import xpuruntime as xrt
        def hide(name):
            raise LookupError(f"{name} hidden by the test")
        xrt._core._cuda.set_library_finder(hide)
        st = xrt.cuda.library_status("nccl")
        if st["found"]:
            print("FOUND", st["path"])
        else:
            try:
                xrt.cuda.nccl_version()
            except xrt.CudaError as e:
                print(e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, LD_LIBRARY_PATH=""))
    assert out.returncode == 0, out.stderr
    if out.stdout.startswith("FOUND"):
        pytest.skip(f"the system has NCCL: {out.stdout.strip()}")
    assert "NCCL is not available: nccl hidden by the test" in out.stdout
    assert "pip install nvidia-nccl-cu13" in out.stdout
    assert "xpuruntime[distributed]" in out.stdout


def test_info_reports_nccl():
    from xpuruntime.__main__ import info

    assert any(line.split()[:1] == ["nccl"] for line in info().splitlines())
