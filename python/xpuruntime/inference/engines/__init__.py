"""python/xpuruntime/inference/engines/__init__.py: the built-in engines, one module each.

Each module registers its engine on import and imports the engine's own package (onnxruntime,
openvino, tensorrt) only when a session asks for it, so ``load_all`` is cheap everywhere.
"""

import importlib

BUILTIN = ("onnxruntime", "openvino", "tensorrt", "qnn", "native")


def load_all():
    for name in BUILTIN:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
