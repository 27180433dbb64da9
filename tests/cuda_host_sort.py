"""tests/cuda_host_sort.py: the onesweep radix sort of cpp/kernels/xrt/radix_sort.cuh, run
on the host by the CUDA emulator of tests/cuda_emulator (fibers for threads, several
blocks at once), so that its ranking, look-back, skipped passes and fix-up are checked
against the CPU backend on machines without a GPU; also its pre-encoded (key, payload)
pairs (radix_sort_pairs, for unique and isin)."""

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent
KERNELS = TESTS.parent / "cpp" / "kernels"
EMULATOR = TESTS / "cuda_emulator"


def compiler():
    return shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++") or shutil.which("clang++")


class EmulatedRadixSort:
    """radix_sort_main.cpp built for blocks of `threads` threads and `items` keys per thread;
    `__call__(a, arg, descending, chunk)` sorts the rows of a 2-D array."""

    def __init__(self, threads=64, items=3, build_dir=None):
        sources = [EMULATOR / "emulator.h", EMULATOR / "xrt" / "common.cuh",
                   EMULATOR / "radix_sort_main.cpp", KERNELS / "xrt" / "sort_keys.cuh",
                   KERNELS / "xrt" / "radix_sort.cuh"]
        text = "".join(p.read_text() for p in sources) + f"{threads}/{items}"
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        build = Path(build_dir or tempfile.gettempdir()) / f"xrt_emulated_sort_{key}"
        self.exe = build / "radix_sort_main"
        self.threads = threads
        if not self.exe.exists():
            build.mkdir(parents=True, exist_ok=True)
            # The emulator's xrt/common.cuh comes first: cpp/kernels' holds PTX.
            # Test processes may build the same binary at once: each into its own file.
            tmp = f"{self.exe}.{os.getpid()}.tmp"
            cmd = [compiler(), "-std=c++17", "-O1", "-pthread", "-U_FORTIFY_SOURCE",
                   "-D_FORTIFY_SOURCE=0", "-I", str(EMULATOR), "-I",
                   str(KERNELS), f"-DEMU_THREADS={threads}", f"-DEMU_IPT={items}", "-o",
                   tmp, str(EMULATOR / "radix_sort_main.cpp")]
            subprocess.run(cmd, check=True, capture_output=True, text=True)
            os.replace(tmp, self.exe)

    def __call__(self, a, arg=False, descending=False, chunk=None):
        rows, n = a.shape
        step = self.threads * 8  # chunks are whole steps of the upsweep (kUnroll = 8)
        chunk = chunk or step
        name = "bfloat16" if a.dtype.name == "bfloat16" else str(a.dtype)
        result = subprocess.run(
            [str(self.exe), name, str(int(arg)), str(int(descending)), str(rows), str(n),
             str(chunk)], input=np.ascontiguousarray(a).tobytes(), capture_output=True,
            timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"emulated sort failed ({result.returncode}): "
                               f"{result.stderr.decode()[-2000:]}")
        return np.frombuffer(result.stdout, np.int64 if arg else a.dtype).reshape(a.shape)

    def encoded(self, a, positions, chunk=None):
        """radix_sort_encoded of a 2-D int32 or float64 array: the sorted keys (uint32 or
        uint64) and the positions they came from (None)."""
        rows, n = a.shape
        chunk = chunk or self.threads * 8
        result = subprocess.run(
            [str(self.exe), "encoded", str(a.dtype), str(int(positions)), str(rows), str(n),
             str(chunk)], input=np.ascontiguousarray(a).tobytes(), capture_output=True,
            timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"emulated encoded sort failed ({result.returncode}): "
                               f"{result.stderr.decode()[-2000:]}")
        out = np.frombuffer(result.stdout, np.uint8)
        key_type = np.uint64 if a.itemsize == 8 else np.uint32
        keys = out[:a.nbytes].view(key_type).reshape(a.shape)
        return keys, out[a.nbytes:].view(np.uint32).reshape(a.shape) if positions else None

    def pairs(self, keys, payload, bits, chunk=None):
        """radix_sort_pairs of 2-D uint32 or uint64 keys with a uint32 payload (or None):
        the sorted keys and payload (None)."""
        rows, n = keys.shape
        chunk = chunk or self.threads * 8
        wide = keys.dtype == np.uint64
        data = np.ascontiguousarray(keys).tobytes()
        if payload is not None:
            data += np.ascontiguousarray(payload, np.uint32).tobytes()
        result = subprocess.run(
            [str(self.exe), "pairs", str(int(wide)), str(int(payload is not None)), str(bits),
             str(rows), str(n), str(chunk)], input=data, capture_output=True, timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"emulated pairs sort failed ({result.returncode}): "
                               f"{result.stderr.decode()[-2000:]}")
        out = np.frombuffer(result.stdout, np.uint8)
        sorted_keys = out[:keys.nbytes].view(keys.dtype).reshape(keys.shape)
        if payload is None:
            return sorted_keys, None
        return sorted_keys, out[keys.nbytes:].view(np.uint32).reshape(keys.shape)
