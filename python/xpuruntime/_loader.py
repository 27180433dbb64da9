"""python/xpuruntime/_loader.py: finds the native libraries before _core is imported.

OpenBLAS comes from the scipy-openblas64 package; loading it here (RTLD_GLOBAL) makes the
extension's dependency resolvable however xpuruntime was installed (wheel, editable, build
tree). CUDA libraries are only *located* here: the C++ side dlopens them on demand.
"""

import ctypes
import os
import sys


def preload_openblas():
    import scipy_openblas64

    lib_dir = scipy_openblas64.get_lib_dir()
    ctypes.CDLL(os.path.join(lib_dir, scipy_openblas64.get_library(fullname=True)),
                mode=ctypes.RTLD_GLOBAL)


def cuda_search_paths():
    """Folders that may hold libcuda/NVRTC/cuBLAS: CUDA_HOME and the nvidia-* wheels."""
    paths = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            paths += [os.path.join(root, "lib64"), os.path.join(root, "lib")]
    for entry in sys.path:
        nvidia = os.path.join(entry, "nvidia")
        if not os.path.isdir(nvidia):
            continue
        for sub in sorted(os.listdir(nvidia)):
            lib = os.path.join(nvidia, sub, "lib")
            if os.path.isdir(lib):
                paths.append(lib)
    paths.append("/usr/local/cuda/lib64")
    return [p for p in paths if os.path.isdir(p)]
