"""python/xpuruntime/inference/__init__.py: inference sessions over ONNX engines
(``xrt.inference``; the names are also at the top level of ``xpuruntime``).

- ``_session.py``: ``InferenceSession`` (inputs checked and brought to the device without
  copies, explain);
- ``_engine.py``: the engine contract, ``EngineRegistry`` and its ``auto`` rule;
- ``_model.py``: the model read once from a path, bytes or an ``onnx.ModelProto``;
- ``_precision.py``: float16/bfloat16 rewriting of a model for engines that need it;
- ``_types.py``: ONNX element types and xpuruntime dtypes;
- ``engines/``: one module per engine (onnxruntime, openvino, tensorrt, qnn, native);
- ``_cli.py``: ``python -m xpuruntime run`` and ``bench``.
"""

from ..policies import ExecutionPolicy  # noqa: F401
from ._engine import (  # noqa: F401
    Engine,
    EngineRegistry,
    Target,
    TensorInfo,
    parse_target,
    register_engine,
)
from ._model import Model  # noqa: F401
from ._session import InferenceSession  # noqa: F401

__all__ = [
    "Engine",
    "EngineRegistry",
    "ExecutionPolicy",
    "InferenceSession",
    "Model",
    "Target",
    "TensorInfo",
    "parse_target",
    "register_engine",
]
