"""tests/test_cuda_jit.py: the NVRTC JIT (compile, caches, launch) and the CUDA copy/fill.

Compilation needs NVRTC but no GPU, so those tests run on every machine with the
nvidia-cuda-nvrtc wheel (CI installs it and fails, not skips, without it). Loading and
launching carry @pytest.mark.cuda.
"""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, numpy_dtype, tensor, to_numpy
from cuda_helpers import core as _core

NVRTC = xrt.cuda.status()["nvrtc"]


@pytest.fixture(scope="module", autouse=True)
def nvrtc():
    """Skips without NVRTC, except in CI, where the compile-all check must run."""
    if not NVRTC["found"]:
        reason = f"NVRTC not found ({NVRTC['reason']}); pip install nvidia-cuda-nvrtc"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


TINY = 'extern "C" __global__ void tiny(float* out) { out[threadIdx.x] = 2.0f; }'
FILL_INDEX = """
#include "xrt/common.cuh"
extern "C" __global__ void fill_index(xrt::int64_t* out, xrt::int64_t n, xrt::int64_t scale) {
  xrt::index_t i = blockIdx.x * (xrt::index_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * scale;
}
"""


def run_python(code, env_extra):
    """Runs code in a fresh interpreter; returns the JSON it prints last."""
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---- compilation (no GPU) ----------------------------------------------------------------

def test_compiles_a_cubin_for_sm90():
    cubin = _core._cuda._compile(TINY, "tiny", arch="sm_90")
    assert cubin[:4] == b"\x7fELF"
    (machine,) = struct.unpack_from("<H", cubin, 18)
    assert machine == 190  # EM_CUDA: device code (SASS), not PTX text


WGMMA_FENCE = ('extern "C" __global__ void fence_only() '
               '{ asm volatile("wgmma.fence.sync.aligned;"); }')


def test_a_source_may_name_its_own_architecture():
    # wgmma exists only for sm_90a: the device's plain sm_90 rejects it, the source's own
    # -arch option replaces that target, and the option is part of the cache key.
    with pytest.raises(xrt.CudaError, match="sm_90a|wgmma"):
        _core._cuda._compile(WGMMA_FENCE, "fence_only", arch="sm_90")
    for option in ("-arch=sm_90a", "--gpu-architecture=sm_90a"):
        cubin = _core._cuda._compile(WGMMA_FENCE, "fence_only", arch="sm_90", options=[option])
        assert cubin[:4] == b"\x7fELF"


def test_embedded_headers_are_included():
    source = ('#include "xrt/copy.cuh"\nextern "C" __global__ void k(xrt::float16* o, '
              "const xrt::complex128* i) { o[0] = xrt::cast_value<xrt::float16>(i[0]); }")
    assert _core._cuda._compile(source, "k")[:4] == b"\x7fELF"


def test_syntax_error_raises_cuda_error_with_the_log():
    with pytest.raises(xrt.CudaError) as info:
        _core._cuda._compile(TINY.replace("2.0f;", "2.0f"), "tiny")
    message = str(info.value)
    assert "'tiny'" in message and "sm_90" in message
    assert "error" in message and 'expected a ";"' in message


def test_unknown_header_and_unsupported_arch_are_errors():
    with pytest.raises(xrt.CudaError, match="xrt/missing.cuh"):
        _core._cuda._compile('#include "xrt/missing.cuh"\n' + TINY, "tiny")
    with pytest.raises(xrt.CudaError, match="cannot compile for sm_10"):
        _core._cuda._compile(TINY, "tiny", arch="sm_10")
    with pytest.raises(xrt.CudaError, match="not a GPU architecture"):
        _core._cuda._compile(TINY, "tiny", arch="compute_90")


def test_every_kernel_family_compiles_for_sm90():
    result = _core._cuda._compile_all(arch="sm_90")
    assert result["compiled"] > 200
    failures = [f"{family}: {name}\n{error}" for family, name, error in result["failures"]]
    assert not failures, "\n\n".join(failures[:5])


# ---- the caches, through compile (no GPU) -------------------------------------------------

CACHED_COMPILE = """
import json, sys
from xpuruntime import _core
source = sys.argv[1] if len(sys.argv) > 1 else {tiny!r}
cubin = _core._cuda._compile(source, "tiny", cached=True)
assert cubin[:4] == b"\\x7fELF"
print(json.dumps(_core._cuda.jit_cache_info()))
""".format(tiny=TINY)


def cache_files(folder):
    kernels = folder / "kernels"
    return sorted(kernels.iterdir()) if kernels.exists() else []


def test_disk_cache_is_found_by_a_new_process(tmp_path):
    env = {"XPURUNTIME_CACHE_DIR": str(tmp_path), "XPURUNTIME_DISABLE_KERNEL_CACHE": "0"}
    first = run_python(CACHED_COMPILE, env)
    assert (first["compiles"], first["disk_hits"], first["disk_writes"]) == (1, 0, 1)
    assert first["cache_dir"] == str(tmp_path / "kernels")
    files = cache_files(tmp_path)
    assert len(files) == 1 and files[0].suffix == ".cubin"
    second = run_python(CACHED_COMPILE, env)
    assert (second["compiles"], second["disk_hits"], second["disk_writes"]) == (0, 1, 0)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip a cubin byte", "empty"])
def test_damaged_cache_file_is_recompiled(tmp_path, damage):
    env = {"XPURUNTIME_CACHE_DIR": str(tmp_path), "XPURUNTIME_DISABLE_KERNEL_CACHE": "0"}
    run_python(CACHED_COMPILE, env)
    (path,) = cache_files(tmp_path)
    data = path.read_bytes()
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = os.urandom(len(data))
    elif damage == "flip a cubin byte":
        data = data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:]
    else:
        data = b""
    path.write_bytes(data)
    info = run_python(CACHED_COMPILE, env)
    assert (info["compiles"], info["disk_hits"], info["disk_rejects"]) == (1, 0, 1)
    assert path.read_bytes() != data  # rewritten whole
    again = run_python(CACHED_COMPILE, env)
    assert (again["compiles"], again["disk_hits"]) == (0, 1)


def test_processes_sharing_the_cache_never_see_half_a_file(tmp_path):
    env = dict(os.environ, XPURUNTIME_CACHE_DIR=str(tmp_path),
               XPURUNTIME_DISABLE_KERNEL_CACHE="0")
    source = TINY.replace("2.0f", "5.0f")
    code = CACHED_COMPILE.replace("sys.argv[1] if len(sys.argv) > 1 else ", "") \
        .replace(repr(TINY), repr(source))
    runs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             text=True) for _ in range(4)]
    infos = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in runs]
    assert all(p.returncode == 0 for p in runs)
    assert sum(i["disk_rejects"] for i in infos) == 0
    (path,) = cache_files(tmp_path)  # no temporary file left behind
    assert run_python(code, {"XPURUNTIME_CACHE_DIR": str(tmp_path),
                             "XPURUNTIME_DISABLE_KERNEL_CACHE": "0"})["disk_hits"] == 1


def test_cache_key_covers_the_source_and_options(tmp_path):
    env = {"XPURUNTIME_CACHE_DIR": str(tmp_path), "XPURUNTIME_DISABLE_KERNEL_CACHE": "0"}
    run_python(CACHED_COMPILE, env)
    other = TINY.replace("2.0f", "3.0f")
    code = CACHED_COMPILE.replace("sys.argv[1] if len(sys.argv) > 1 else ", "") \
        .replace(repr(TINY), repr(other))
    info = run_python(code, env)
    assert info["compiles"] == 1 and len(cache_files(tmp_path)) == 2


def test_disable_variable_turns_the_disk_cache_off(tmp_path):
    env = {"XPURUNTIME_CACHE_DIR": str(tmp_path), "XPURUNTIME_DISABLE_KERNEL_CACHE": "1"}
    for _ in range(2):
        info = run_python(CACHED_COMPILE, env)
        assert (info["compiles"], info["disk_hits"], info["disk_writes"]) == (1, 0, 0)
        assert info["cache_dir"] == ""
    assert cache_files(tmp_path) == []


def test_memory_cache_hits_and_can_be_cleared(tmp_path, monkeypatch):
    monkeypatch.setenv("XPURUNTIME_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XPURUNTIME_DISABLE_KERNEL_CACHE", "0")
    source = TINY.replace("2.0f", "4.0f")
    before = xrt.cuda.jit_cache_info()
    _core._cuda._compile(source, "tiny", cached=True)
    _core._cuda._compile(source, "tiny", cached=True)
    after = xrt.cuda.jit_cache_info()
    assert after["compiles"] - before["compiles"] == 1
    assert after["memory_hits"] - before["memory_hits"] == 1
    xrt.cuda.clear_jit_cache()
    _core._cuda._compile(source, "tiny", cached=True)
    cleared = xrt.cuda.jit_cache_info()
    assert cleared["compiles"] == after["compiles"]
    assert cleared["disk_hits"] - after["disk_hits"] == 1


# ---- launch (GPU) ------------------------------------------------------------------------

@pytest.mark.cuda
def test_launched_kernel_writes_into_a_tensor():
    n = 1000
    out = xrt.empty((n,), dtype=xrt.int64, device="cuda")
    _core._cuda._launch(FILL_INDEX, "fill_index", grid=[(n + 255) // 256], block=[256],
                       args=[out, n, 3])
    np.testing.assert_array_equal(np.asarray(out.to_device("cpu")), np.arange(n) * 3)


@pytest.mark.cuda
def test_host_costs_measure_every_piece():
    """The benchmark's C++ rows: launches (cuLaunchKernelEx when the driver has it, as every
    launch takes it), the allocator and whole adds, each a positive time."""
    costs = _core._cuda._host_costs(200)
    assert set(costs) >= {"launch_ns", "launch_args96_ns", "launch_extra_ns", "launch_ex_ns",
                          "launch_add96_ns",
                          "launch_loop_ns", "allocate_free_ns", "empty_ns", "add_inplace_ns",
                          "add_ns"}
    for name, ns in costs.items():
        assert ns > 0 or (name == "launch_ex_ns" and ns == -1), (name, ns)
    with pytest.raises(ValueError, match="positive"):
        _core._cuda._host_costs(0)


@pytest.mark.cuda
def test_host_costs_time_a_python_burst_beside_the_launches():
    """A Python burst of adds is timed per op in the launches' rounds; every burst runs in
    full, an exception from it comes through, and bad arguments are clear errors."""
    a = xrt.ones(16, device="cuda")
    calls = []

    def burst():
        calls.append(1)
        for _ in range(10):
            a + a

    costs = _core._cuda._host_costs(200, burst, 10)
    assert costs["burst_op_ns"] > 0
    assert len(calls) >= 6  # a warm-up, then one per round (at least five)
    assert "burst_op_ns" not in _core._cuda._host_costs(200)

    def fails():
        raise KeyError("from the burst")

    with pytest.raises(KeyError, match="from the burst"):
        _core._cuda._host_costs(200, fails, 10)
    with pytest.raises(TypeError, match="callable"):
        _core._cuda._host_costs(200, 3, 10)
    with pytest.raises(ValueError, match="burst_ops"):
        _core._cuda._host_costs(200, burst, 0)


@pytest.mark.cuda
def test_kernel_not_in_source_is_a_cuda_error():
    out = xrt.empty((4,), dtype=xrt.int64, device="cuda")
    with pytest.raises(xrt.CudaError, match="extern"):
        _core._cuda._launch(FILL_INDEX, "no_such_kernel", grid=[1], block=[4], args=[out, 4, 1])


LAUNCH = """
import json, time
import numpy as np
import xpuruntime as xrt
from xpuruntime import _core
source = {source!r}
out = xrt.empty((256,), dtype=xrt.int64, device="cuda")
start = time.perf_counter()
_core._cuda._launch(source, "fill_index", grid=[1], block=[256], args=[out, 256, 7])
xrt_out = np.asarray(out.to_device("cpu"))
seconds = time.perf_counter() - start
assert (xrt_out == np.arange(256) * 7).all()
info = _core._cuda.jit_cache_info()
info["seconds"] = seconds
print(json.dumps(info))
"""


@pytest.mark.cuda
def test_kernel_cache_hit_after_restart(tmp_path):
    env = {"XPURUNTIME_CACHE_DIR": str(tmp_path), "XPURUNTIME_DISABLE_KERNEL_CACHE": "0"}
    source = FILL_INDEX + "// restart test\n"
    first = run_python(LAUNCH.format(source=source), env)
    second = run_python(LAUNCH.format(source=source), env)
    assert (first["compiles"], first["disk_writes"]) == (1, 1)
    assert (second["compiles"], second["disk_hits"]) == (0, 1)
    print(f"first call (compile) {first['seconds'] * 1e3:.1f} ms, "
          f"after restart (disk) {second['seconds'] * 1e3:.1f} ms")


@pytest.mark.cuda
def test_kernel_cache_disabled_compiles_every_process(tmp_path):
    env = {"XPURUNTIME_CACHE_DIR": str(tmp_path), "XPURUNTIME_DISABLE_KERNEL_CACHE": "1"}
    source = FILL_INDEX + "// disabled test\n"
    for _ in range(2):
        info = run_python(LAUNCH.format(source=source), env)
        assert (info["compiles"], info["disk_hits"]) == (1, 0)
    assert cache_files(tmp_path) == []


# ---- copy and fill on CUDA -------------------------------------------------------------

def sample(name, shape, seed=0):
    """Values of dtype `name` with the hard cases: NaN, infinities, out-of-range, negative."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if name == "bool":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    dtype = numpy_dtype(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        values[: min(n, 3)] = [info.min, info.max, 0][: min(n, 3)]
        return values.reshape(shape)
    special = [np.nan, np.inf, -np.inf, -0.0, 1e30, -1e30, 3e9, -3e9, 300.5, -129.7, 65504.0,
               1e-40, 2.0**63, 2.0**64, -2.0**63]
    real = rng.normal(0, 1e3, n)
    real[: min(n, len(special))] = special[: min(n, len(special))]
    if dtype.kind == "c":
        imag = rng.normal(0, 1e3, n)
        imag[1::7] = np.nan
        with np.errstate(all="ignore"):
            return (real + 1j * imag).astype(dtype).reshape(shape)
    with np.errstate(all="ignore"):
        return real.astype(dtype).reshape(shape)


def host(t):
    return to_numpy(t.to_device("cpu"))


def same_bits(a, b):
    """Equal values, NaN equal to NaN (payloads aside), signed zeros distinguished."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        a64 = a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)
        b64 = b.astype(np.complex128) if b.dtype.kind == "c" else b.astype(np.float64)
        parts = [np.real, np.imag] if a.dtype.kind == "c" else [lambda x: x]
        for part in parts:
            x, y = part(a64), part(b64)
            both_nan = np.isnan(x) & np.isnan(y)
            ok = both_nan | ((x == y) & (np.signbit(x) == np.signbit(y)))
            assert ok.all(), (x[~ok][:5], y[~ok][:5])
    else:
        np.testing.assert_array_equal(a, b)


VIEWS = {
    "contiguous": lambda t: t,
    "reversed": lambda t: t[::-1, ::-2],
    "transposed": lambda t: t.T,
    "broadcast": lambda t: xrt.broadcast_to(t[:1], t.shape),
    "sliced 3-d": lambda t: xrt.reshape(t, (3, 5, 8))[1:, ::-3, 1::2],
}


@pytest.mark.cuda
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("src", ALL)
def test_astype_on_cuda_matches_cpu_for_every_pair(src, view):
    values = sample(src, (15, 8), seed=ALL.index(src))
    cpu = VIEWS[view](tensor(values))
    gpu = VIEWS[view](tensor(values).to_device("cuda"))
    for dst in ALL:
        if dst == "bfloat16" or src == "bfloat16":
            numpy_dtype("bfloat16")
        expected = to_numpy(xrt.astype(cpu, getattr(xrt, dst)))
        got = xrt.astype(gpu, getattr(xrt, dst))
        assert got.device == xrt.Device("cuda:0")
        same_bits(host(got), expected)


@pytest.mark.cuda
@pytest.mark.parametrize("shape", [(), (0,), (1,), (1, 1, 7), (1000003,)])
def test_copy_of_any_size(shape):
    values = sample("float32", shape)
    gpu = tensor(values).to_device("cuda")
    same_bits(host(xrt.astype(gpu, xrt.float64)), values.astype(np.float64))
    same_bits(host(xrt.astype(gpu, xrt.float32, copy=True)), values)


@pytest.mark.cuda
@pytest.mark.parametrize("start", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("pair", [("float32", "float16"), ("float16", "float32"),
                                  ("complex128", "complex64"), ("int8", "float64"),
                                  ("bool", "uint8"), ("uint8", "bool")])
def test_contiguous_views_at_any_offset(pair, start):
    # Vector accesses need aligned pointers: a view starting mid-vector takes the scalar loop.
    src, dst = pair
    values = sample(src, (1031,), seed=start)
    cpu, gpu = tensor(values)[start:], tensor(values).to_device("cuda")[start:]
    expected = to_numpy(xrt.astype(cpu, getattr(xrt, dst)))
    same_bits(host(xrt.astype(gpu, getattr(xrt, dst))), expected)


@pytest.mark.cuda
def test_copy_with_64_bit_offsets():
    # 3 GiB, so byte offsets of the strided view pass 2^31: the 64-bit index path.
    values = np.zeros((3, 2**30), dtype=np.uint8)
    values[:, :: 2**29] = [[1, 2], [3, 4], [5, 6]]
    gpu = tensor(values).to_device("cuda")
    got = xrt.astype(gpu[::-1, :: 2**29], xrt.int16)
    np.testing.assert_array_equal(host(got), [[5, 6], [3, 4], [1, 2]])


def fill_values(name):
    """Values that fit each dtype: zero (a memset), and others of each element size."""
    if name == "bool":
        return [False, True]
    values = [0, 1, 7]
    if not name.startswith("uint"):
        values.append(-3)
    if name.startswith(("float", "complex", "bfloat")):
        values += [2.5, -0.0, float("nan"), float("inf")]
    if name.startswith("complex"):
        values.append(1.5 - 2j)
    return values


@pytest.mark.cuda
@pytest.mark.parametrize("name, value", [(n, v) for n in ALL for v in fill_values(n)])
def test_full_on_cuda_matches_cpu(name, value):
    dtype = getattr(xrt, name)
    expected = to_numpy(xrt.full((5, 33), value, dtype=dtype))
    same_bits(host(xrt.full((5, 33), value, dtype=dtype, device="cuda")), expected)
