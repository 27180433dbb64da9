"""tests/cuda_host_math.py: the CUDA elementwise device math (cpp/kernels/xrt), compiled as
host C++ and called through ctypes, so that its special cases and accuracy can be checked
against the CPU backend on machines without a GPU."""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parents[1] / "cpp" / "kernels"

# Storage type of each dtype in the device code.
CXX_TYPES = {
    "bool": "bool", "int8": "xrt::ew::i8", "int16": "xrt::ew::i16", "int32": "xrt::ew::i32",
    "int64": "xrt::ew::i64", "uint8": "xrt::ew::u8", "uint16": "xrt::ew::u16",
    "uint32": "xrt::ew::u32", "uint64": "xrt::ew::u64", "float16": "xrt::ew::Float16",
    "bfloat16": "xrt::ew::BFloat16", "float32": "float", "float64": "double",
    "complex64": "xrt::ew::Complex<float>", "complex128": "xrt::ew::Complex<double>",
}


def compiler():
    return shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++") or shutil.which("clang++")


def _source(cases):
    lines = ['#include "xrt/elementwise_ops.cuh"']
    for name, arity, dtype in cases:
        t = CXX_TYPES[dtype]
        sym = f"xrt_host_{name}_{dtype}"
        if arity == 1:
            lines.append(
                f'extern "C" void {sym}(const void* a, const void*, void* o, long n) {{\n'
                f"  auto x = static_cast<const {t}*>(a);\n"
                f"  using R = decltype(xrt::ew::unary_value<xrt::ew::op::{name}>(x[0]));\n"
                f"  for (long i = 0; i < n; ++i) static_cast<R*>(o)[i] = "
                f"xrt::ew::unary_value<xrt::ew::op::{name}>(x[i]);\n}}")
        else:
            lines.append(
                f'extern "C" void {sym}(const void* a, const void* b, void* o, long n) {{\n'
                f"  auto x = static_cast<const {t}*>(a); auto y = static_cast<const {t}*>(b);\n"
                f"  using R = decltype(xrt::ew::binary_value<xrt::ew::op::{name}>(x[0], y[0]));\n"
                f"  for (long i = 0; i < n; ++i) static_cast<R*>(o)[i] = "
                f"xrt::ew::binary_value<xrt::ew::op::{name}>(x[i], y[i]);\n}}")
    return "\n".join(lines) + "\n"


class HostMath:
    """The device functions of `cases` ((name, arity, dtype) triples) built into a shared
    library; `call(name, dtype, a[, b])` applies one to NumPy arrays."""

    def __init__(self, cases, build_dir=None):
        src = _source(cases)
        headers = "".join(p.read_text() for p in sorted((KERNELS / "xrt").glob("*.cuh")))
        key = hashlib.sha256((src + headers).encode()).hexdigest()[:16]
        build = Path(build_dir or tempfile.gettempdir()) / f"xrt_host_math_{key}"
        lib = build / "libhostmath.so"
        if not lib.exists():
            build.mkdir(parents=True, exist_ok=True)
            (build / "host_math.cpp").write_text(src)
            # -ffp-contract=off: like the CPU build and the NVRTC options (--fmad=false).
            cmd = [compiler(), "-std=c++17", "-O1", "-ffp-contract=off", "-fno-math-errno",
                   "-fwrapv", "-shared", "-fPIC", "-I", str(KERNELS), "-o", str(lib) + ".tmp",
                   str(build / "host_math.cpp")]
            subprocess.run(cmd, check=True, capture_output=True, text=True)
            os.replace(str(lib) + ".tmp", lib)
        self._lib = ctypes.CDLL(str(lib))

    def call(self, name, dtype, out_dtype, *operands):
        fn = getattr(self._lib, f"xrt_host_{name}_{dtype}")
        a = np.ascontiguousarray(operands[0])
        b = np.ascontiguousarray(operands[1]) if len(operands) > 1 else a
        out = np.empty(a.shape, dtype=out_dtype)
        fn(ctypes.c_void_p(a.ctypes.data), ctypes.c_void_p(b.ctypes.data),
           ctypes.c_void_p(out.ctypes.data), ctypes.c_long(a.size))
        return out
