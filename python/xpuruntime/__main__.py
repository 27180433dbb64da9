"""python/xpuruntime/__main__.py: ``python -m xpuruntime info`` (what this installation is
and what it found), ``run`` and ``bench`` (inference from the command line, ``inference/_cli.py``),
``profile`` (a script under the profiler, ``profiler/_cli.py``).
"""

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
    lines += _engine_lines(xrt)
    return "\n".join(lines)


def _engine_lines(xrt):
    lines = ["inference engines (engine: usable on cpu / cuda:0 / npu)"]
    targets = [xrt.inference.parse_target(d) for d in ("cpu", "cuda:0", "npu")]
    status = [xrt.EngineRegistry.status(t) for t in targets]
    for name in xrt.EngineRegistry.names():
        cls = xrt.EngineRegistry.get(name)
        cells = []
        for target, st in zip(targets, status):
            if target.kind not in cls.kinds:
                continue
            reason = st[name]
            cells.append(f"{target}: " + ("yes" if reason is None else f"no ({reason})"))
        untested = "" if cls.tested_here else "  [untested on this project's machines]"
        lines.append(f"  {name:<11} " + "; ".join(cells) + untested)
        version = _engine_version(name)
        if version:
            lines.append(f"  {'':<11} version {version}")
        if name == "native":
            from xpuruntime.inference.engines.native import supported_ops
            for domain, ops in supported_ops().items():
                lines.append(f"  {'':<11} ops ({domain or 'ai.onnx'}, {len(ops)}): "
                             + ", ".join(sorted(ops)))
    return lines


def _engine_version(name):
    import importlib

    module = {"onnxruntime": "onnxruntime", "openvino": "openvino", "tensorrt": "tensorrt",
              "qnn": None, "native": None}.get(name)
    if module is None:
        return None
    try:
        return importlib.import_module(module).__version__
    except Exception:
        return None


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
    if argv[0] in ("run", "bench", "profile"):
        try:
            if argv[0] == "profile":
                from xpuruntime.profiler import _cli as _profile_cli

                return _profile_cli.main(argv[1:])
            from xpuruntime.inference import _cli

            return (_cli.run_main if argv[0] == "run" else _cli.bench_main)(argv[1:])
        except (ValueError, TypeError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except Exception as e:  # the XpuRuntimeError family: a sentence, not a traceback
            if type(e).__module__.startswith("xpuruntime"):
                print(f"error: {e}", file=sys.stderr)
                return 1
            raise
    print("usage: python -m xpuruntime info | run MODEL [options] | bench MODEL [options] | "
          "profile SCRIPT [-o trace.json] [args]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
