"""tests/test_native_libraries.py: where the CUDA libraries come from (cuda-pathfinder, then
the system's search) and why one is missing; `import xpuruntime` without cuda-pathfinder.

No GPU is needed: the libraries are looked for, and reported, on every machine. Checks that
install their own finder run in a fresh interpreter (the loader asks once per library).
"""

import os
import subprocess
import sys
import textwrap

import pytest

import xpuruntime as xrt
from xpuruntime import _core, _loader

LIBRARIES = ("driver", "nvrtc", "cublas", "cublaslt", "cufft", "cusolver")


def run_fresh(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def library_statuses():
    status = xrt.cuda.status()
    return {lib: status[lib] if lib in status else _core._cuda.library_status(lib)
            for lib in LIBRARIES}


def test_each_library_says_where_it_came_from_or_why_not():
    for lib, s in library_statuses().items():
        assert set(s) == {"found", "path", "found_via", "reason"}, lib
        if s["found"]:
            assert s["path"] and s["found_via"], lib
        else:
            assert s["reason"] and not s["path"], lib


def test_nvrtc_from_cuda_pathfinder_matches_what_the_loader_opened():
    if _loader.cuda_pathfinder() is None:
        pytest.skip("cuda-pathfinder is not installed")
    try:
        path, how = _loader.find_cuda_library("nvrtc")
    except LookupError:
        pytest.skip("no NVRTC here")
    nvrtc = xrt.cuda.status()["nvrtc"]
    assert nvrtc["found"]
    assert os.path.isabs(path) and os.path.basename(path).startswith("libnvrtc")
    assert os.path.realpath(nvrtc["path"]) == os.path.realpath(path)
    assert nvrtc["found_via"] in (how, "already loaded")


def test_a_missing_library_is_a_LookupError_with_the_reason():
    if _loader.cuda_pathfinder() is None:
        pytest.skip("cuda-pathfinder is not installed")
    if xrt.cuda.status()["driver"]["found"]:
        pytest.skip("this machine has a CUDA driver")
    with pytest.raises(LookupError, match="driver"):
        _loader.find_cuda_library("cuda")


def test_the_finder_is_asked_first_and_its_reason_is_reported():
    out = run_fresh("""
        import xpuruntime as xrt
        from xpuruntime import _core
        asked = []

        def finder(name):
            asked.append(name)
            if name == "cufft":
                raise LookupError("no cuFFT in the test's finder")
            if name == "cusolver":
                return "/nonexistent/libcusolver.so.12", "test finder"
            return None  # no opinion: the system's search decides

        _core._cuda.set_library_finder(finder)
        cufft = _core._cuda.library_status("cufft")
        cusolver = _core._cuda.library_status("cusolver")
        assert "cufft" in asked and "cusolver" in asked, asked
        if not cufft["found"]:
            assert cufft["reason"] == "no cuFFT in the test's finder", cufft
        else:
            assert cufft["found_via"] == "system search", cufft
        if not cusolver["found"]:
            assert "/nonexistent/libcusolver.so.12" in cusolver["reason"], cusolver
        asked.clear()
        _core._cuda.library_status("cufft")
        assert asked == [], "asked again"
        print("ok")
    """)
    assert out.strip() == "ok"


def test_import_and_info_work_without_cuda_pathfinder():
    out = run_fresh("""
        import sys
        sys.modules["cuda.pathfinder"] = None  # as if it were not installed
        import xpuruntime as xrt
        from xpuruntime.__main__ import info
        assert float(xrt.sum(xrt.ones((3,)))) == 3.0
        text = info()
        assert "cuda-pathfinder is not installed" in text, text
        for lib in ("driver", "nvrtc", "cublas", "cufft", "cusolver"):
            assert f"  {lib} " in text, lib
        s = xrt.cuda.status()["driver"]
        assert s["found"] == (s["found_via"] == "system search"), s
        print("ok")
    """)
    assert out.strip() == "ok"


def test_info_names_the_finder():
    result = subprocess.run([sys.executable, "-m", "xpuruntime", "info"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "finder" in result.stdout
    for lib in LIBRARIES:
        assert f"  {lib} " in result.stdout, lib
