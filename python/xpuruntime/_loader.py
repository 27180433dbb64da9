"""python/xpuruntime/_loader.py: finds the native libraries: OpenBLAS before _core is imported,
the CUDA libraries when the C++ side first needs them.

Note [Private BLAS]: OpenBLAS comes from the scipy-openblas64 package. It is loaded here by
absolute path so that the extension's dependency on it resolves however xpuruntime was
installed (wheel, editable, build tree): the dynamic linker matches the extension's
DT_NEEDED entry with the library already loaded under that name. It is loaded RTLD_LOCAL, so
its symbols stay out of the process's global namespace: scipy-openblas64 exports a few LAPACK
helpers without its symbol prefix (``droundup_lwork_``, ...), which, made global, would
replace the 32-bit-integer ones that SciPy's own OpenBLAS calls, and SciPy's LAPACK would then
ask for absurd work arrays ("Too large work array required").

The CUDA libraries (driver, NVRTC, cuBLAS(Lt), cuFFT, cuSOLVER, NCCL, cuDNN) are opened by the C++ side on
demand (``cpp/src/cuda/loader.cpp``); it asks ``find_cuda_library`` where each one is, which
asks cuda-pathfinder (it knows the CUDA 12/13 wheel layouts, conda and CUDA_HOME). Without
cuda-pathfinder, NCCL and cuDNN are still found in their wheels (``nvidia-nccl-cu13``, the
``distributed`` extra; ``nvidia-cudnn-cu13``), and the C++ side falls back to the system's own
search.
"""

import ctypes
import importlib.util
import os

_openblas = None  # the handle: keeps the library loaded for the life of the process


def preload_openblas():
    # Note: importing scipy_openblas64 would load the library RTLD_GLOBAL (its __init__ does,
    # for get_openblas_config()), undoing Note [Private BLAS]: find its folder without
    # running it.
    global _openblas
    spec = importlib.util.find_spec("scipy_openblas64")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("xpuruntime needs the scipy-openblas64 package "
                          "(pip install scipy-openblas64)")
    lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    names = sorted(n for n in os.listdir(lib_dir)
                   if n.startswith("libscipy_openblas") and ".so" in n)
    if not names:
        raise ImportError(f"scipy-openblas64 has no OpenBLAS library in {lib_dir}")
    _openblas = ctypes.CDLL(os.path.join(lib_dir, names[0]), mode=os.RTLD_NOW | os.RTLD_LOCAL)


def find_cuda_library(name):
    """(path, how it was found) of the NVIDIA library name ("cuda", "nvrtc", "cublas",
    "cublasLt", "cufft", "cusolver", "nccl", "cudnn"), found and loaded by cuda-pathfinder.

    LookupError with the reason when it cannot be found, None when cuda-pathfinder is not
    installed; either way the C++ loader then tries the system's search.
    """
    pathfinder = cuda_pathfinder()
    if pathfinder is None:
        return _wheel_library(name)
    try:
        loaded = pathfinder.load_nvidia_dynamic_lib(name)
    except Exception as e:  # not found, or its probe failed: a reason either way
        # A wheel with one fixed place is still found where this cuda-pathfinder does not
        # know the library (older releases lack cuDNN).
        found = _wheel_library(name)
        if found is not None:
            return found
        raise LookupError(_first_sentence(e)) from None
    if loaded.abs_path is None:  # loaded by someone else, from a path the OS does not tell
        raise LookupError(f"{name} is loaded, but cuda-pathfinder cannot tell from where")
    if loaded.was_already_loaded_from_elsewhere:
        return loaded.abs_path, "already loaded"
    return loaded.abs_path, getattr(loaded, "found_via", None) or "cuda-pathfinder"


# Wheels whose library has one fixed place: (package, path inside it).
_WHEEL_LIBRARIES = {"nccl": ("nvidia.nccl", os.path.join("lib", "libnccl.so.2")),
                    "cudnn": ("nvidia.cudnn", os.path.join("lib", "libcudnn.so.9"))}


def _wheel_library(name):
    # Without cuda-pathfinder: the library of an installed NVIDIA wheel, else None (the
    # system's search decides).
    if name not in _WHEEL_LIBRARIES:
        return None
    package, relative = _WHEEL_LIBRARIES[name]
    try:
        spec = importlib.util.find_spec(package)
    except ImportError:  # no `nvidia` namespace at all
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, relative)
        if os.path.exists(path):
            return path, "site-packages"
    return None


def cuda_pathfinder():
    """The cuda.pathfinder module, None when it is not installed."""
    try:
        from cuda import pathfinder
    except ImportError:
        return None
    return pathfinder


def _first_sentence(error):
    # cuda-pathfinder's message: a first line, often with a repeated clause ("No such file: X,
    # No such file: X"), then the folders it looked in.
    lines = str(error).strip().splitlines() or [type(error).__name__]
    head, sep, rest = lines[0].partition(": ")
    if not sep:
        return head
    return f"{head}: " + ", ".join(dict.fromkeys(part.strip() for part in rest.split(", ")))
