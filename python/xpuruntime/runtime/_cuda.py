"""python/xpuruntime/runtime/_cuda.py: CUDA as a whole: whether it is usable here and why not,
its libraries (where they were found, their versions), the NVRTC kernel caches and the cuFFT plan caches. Shown by
``xrt.cuda``."""

from .. import _core


def status():
    """What the run-time probe found: driver, NVRTC, cuBLAS, devices."""
    return _core._cuda.status()


def is_available():
    return _core._cuda.status()["available"]


def why_unavailable():
    """A sentence saying why CUDA cannot be used ('' when it can)."""
    return _core._cuda.status()["reason"]


def device_count():
    return _core._cuda.status()["device_count"] if is_available() else 0


def cublas_version():
    """cuBLAS's version as major * 10000 + minor * 100 + patch (no GPU needed); CudaError
    saying how to install cuBLAS when it cannot be loaded."""
    return _core._cuda.cublas_version()


def jit_cache_info():
    """Counters of the NVRTC kernel caches: compiles, memory_hits, disk_hits, disk_writes,
    disk_rejects (unusable files, recompiled), and cache_dir ('' when the disk cache is off:
    XPURUNTIME_DISABLE_KERNEL_CACHE=1; XPURUNTIME_CACHE_DIR relocates it)."""
    return _core._cuda.jit_cache_info()


def clear_jit_cache():
    """Forgets the kernels compiled in this process (the disk cache stays)."""
    _core._cuda.jit_clear_memory_cache()


def nvrtc_version():
    """NVRTC's version as 'major.minor'; CudaError when NVRTC cannot be loaded."""
    return _core._cuda.nvrtc_version()


def cufft_version():
    """cuFFT's version (e.g. 12000; no GPU needed); CudaError saying how to install cuFFT
    (``pip install nvidia-cufft``) when it cannot be loaded."""
    return _core._cuda.cufft_version()


def library_status(name):
    """Where a CUDA library was found (found, path, found_via) or why not (reason): "driver",
    "nvrtc", "cublas", "cublaslt" (probed with the driver), "cufft", "cusolver", "nccl"
    (opened by this call when not yet loaded)."""
    st = _core._cuda.status()
    return st[name] if name in st and isinstance(st[name], dict) else \
        _core._cuda.library_status(name)


def nccl_version():
    """NCCL's version (e.g. 22803 for 2.28.3; no GPU needed); CudaError saying how to install
    NCCL (``pip install nvidia-nccl-cu13``, or the ``distributed`` extra) when it is missing."""
    return _core._cuda.nccl_version()


def cufft_plan_cache_info(device=None):
    """The cuFFT plan cache of a device (default: the current one): size, capacity, hits,
    misses, evictions. Plans are kept per device, least recently used out first."""
    return _core._cuda.cufft_plan_cache_info(device)


def set_cufft_plan_cache_capacity(capacity):
    """How many cuFFT plans each device keeps (default 64; 0 keeps none)."""
    _core._cuda.set_cufft_plan_cache_capacity(capacity)


def clear_cufft_plan_cache():
    """Destroys every cached cuFFT plan."""
    _core._cuda.cufft_plan_cache_clear()



__all__ = [
    "clear_cufft_plan_cache", "clear_jit_cache", "cublas_version", "cufft_plan_cache_info",
    "cufft_version", "device_count", "is_available", "jit_cache_info", "library_status",
    "nccl_version", "nvrtc_version",
    "set_cufft_plan_cache_capacity", "status", "why_unavailable",
]
