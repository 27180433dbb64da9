"""python/xpuruntime/__main__.py: ``python -m xpuruntime info``, what this installation is
and what it found."""

import os
import platform
import sys


def info():
    import xpuruntime as xrt
    from xpuruntime import _core

    build = _core.build_info()
    lines = [
        f"xpuruntime version {xrt.__version__}",
        f"  python      {platform.python_version()} ({sys.executable})",
        f"  location    {os.path.dirname(xrt.__file__)}",
        f"  build       {build['build_type']}, {build['compiler']}, C++{build['cxx_standard']}",
        f"  cuda build  {build['cuda_at_build']}",
        f"  blas        {_core.blas_config()}",
        f"  cpu threads {_core.num_threads()}",
        "devices",
        "  cpu",
    ]
    st = xrt.cuda.status()
    if st["available"]:
        for i in range(st["device_count"]):
            lines += _cuda_device_lines(xrt, i)
    lines.append(f"  default     {xrt.get_default_device()}")
    lines.append("cuda")
    lines.append(f"  available   {st['available']}" + ("" if st["available"] else
                                                      f" ({st['reason']})"))
    if st["driver_version"]:
        v = st["driver_version"]
        lines.append(f"  driver api  {v // 1000}.{v % 1000 // 10}")
    lines.append(f"  finder      {_finder()}")
    for lib in ("driver", "nvrtc", "cublas", "cublaslt", "cufft", "cusolver", "nccl"):
        s = st[lib] if lib in st else _core._cuda.library_status(lib)
        where = f"{s['path']} ({s['found_via']})" if s["found"] else f"not found ({s['reason']})"
        lines.append(f"  {lib:<11} {where}")
    return "\n".join(lines)


def _finder():
    from xpuruntime import _loader

    pathfinder = _loader.cuda_pathfinder()
    if pathfinder is None:
        return "the system's search (cuda-pathfinder is not installed)"
    return f"cuda-pathfinder {pathfinder.__version__}, then the system's search"


def _cuda_device_lines(xrt, index):
    try:
        p = xrt.cuda.get_device_properties(index)
        free = p.free_memory
    except xrt.XpuRuntimeError as e:  # a device the driver lists but cannot open
        return [f"  cuda:{index}  unusable: {e}"]
    features = [name for name in ("fp16", "bf16", "int8", "tf32", "fp8")
                if getattr(p, f"supports_{name}")]
    gib = 1 << 30
    return [
        f"  cuda:{index}      {p.name}",
        f"    capability  sm_{p.major}{p.minor}, {p.multi_processor_count} SMs, "
        f"{', '.join(features) or 'no reduced-precision math'}",
        f"    memory      {p.total_memory / gib:.1f} GiB ({free / gib:.1f} GiB free), "
        f"L2 {p.l2_cache_size >> 20} MiB",
        f"    ids         {p.uuid}, pci {p.pci_bus_id}",
    ]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in ([], ["info"]):
        print(info())
        return 0
    print("usage: python -m xpuruntime info", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
