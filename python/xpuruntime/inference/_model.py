"""python/xpuruntime/inference/_model.py: the model a session runs, from a path, bytes or an
``onnx.ModelProto``, read and checked once and shared by every engine.

A model given as a path stays a path for engines that load files (ONNX Runtime, OpenVINO and
TensorRT resolve external weight files next to it); its bytes and its parsed form are made
only when asked for. A malformed or truncated model fails here, with the reason, before any
engine sees it.
"""

import hashlib
import os

from .. import _core


class Model:
    """An ONNX model: ``path`` (or None), ``bytes``, ``proto`` (parsed on first use), ``sha256``,
    ``name``."""

    def __init__(self, source):
        self._bytes = None
        self._proto = None
        self.path = None
        if isinstance(source, os.PathLike):
            source = os.fspath(source)
        if isinstance(source, str):
            if not os.path.isfile(source):
                raise FileNotFoundError(f"no ONNX model at {source!r}")
            self.path = source
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self._bytes = bytes(source)
            if not self._bytes:
                raise ValueError("the model is empty (0 bytes)")
        elif type(source).__name__ == "ModelProto":
            self._proto = source
            self._bytes = source.SerializeToString()
        else:
            raise TypeError(f"model must be a path, bytes or an onnx.ModelProto, not "
                            f"{type(source).__name__}")
        self._check()

    @property
    def bytes(self):
        if self._bytes is None:
            with open(self.path, "rb") as f:
                self._bytes = f.read()
        return self._bytes

    @property
    def proto(self):
        """The parsed model (external weights loaded when the model came as a path)."""
        if self._proto is None:
            onnx = import_onnx("reading the model's graph")
            if self.path is not None:
                self._proto = onnx.load(self.path)
            else:
                self._proto = onnx.load_from_string(self.bytes)
        return self._proto

    @property
    def sha256(self):
        return hashlib.sha256(self.bytes).hexdigest()

    @property
    def name(self):
        if self.path is not None:
            return os.path.basename(self.path)
        return self.proto.graph.name or "model"

    @property
    def opset(self):
        """The default-domain opset the model imports."""
        for entry in self.proto.opset_import:
            if entry.domain in ("", "ai.onnx"):
                return entry.version
        return 0

    def io(self):
        """``(inputs, outputs)`` as TensorInfo from the graph (initializers that old models
        also list as inputs are not inputs)."""
        from ._engine import TensorInfo
        from ._types import DTYPE_OF_ONNX

        graph = self.proto.graph
        weights = {init.name for init in graph.initializer}

        def info(value):
            tensor = value.type.tensor_type
            dims = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                         for d in tensor.shape.dim)
            return TensorInfo(value.name, DTYPE_OF_ONNX.get(tensor.elem_type), dims,
                              tensor.elem_type)

        return (tuple(info(v) for v in graph.input if v.name not in weights),
                tuple(info(v) for v in graph.output))

    def _check(self):
        # Parse once so a malformed or truncated file fails with a reason here instead of a
        # protobuf error deep inside an engine. Without the onnx package, engines check.
        try:
            import onnx
        except ImportError:
            return
        try:
            proto = self.proto
        except Exception as e:
            raise ValueError(f"{self._label()} is not a valid ONNX model: "
                             f"{type(e).__name__}: {e}") from None
        if not proto.graph.node and not proto.graph.output:
            raise ValueError(f"{self._label()} is not a valid ONNX model: its graph is empty "
                             "(a truncated file or not an ONNX model)")
        try:
            onnx.checker.check_model(proto)
        except ValueError:
            pass  # larger than 2 GB: the checker wants the path; engines check on load
        except Exception as e:
            raise ValueError(f"{self._label()} is not a valid ONNX model: {e}") from None

    def _label(self):
        return repr(self.path) if self.path else "the model"


def import_onnx(purpose):
    try:
        import onnx
    except ImportError:
        raise _core.XpuRuntimeError(
            f"{purpose} needs the 'onnx' package. Install it with: pip install onnx") from None
    return onnx


def fix_input_dims(proto, dims):
    """Makes the inputs of proto (changed in place) have the shapes in dims (input name ->
    sizes: ExecutionPolicy.input_shapes). ValueError for a rank that differs from the
    model's, or a size that contradicts one of its fixed dimensions."""
    for value in proto.graph.input:
        shape = dims.get(value.name)
        if shape is None:
            continue
        have = value.type.tensor_type.shape.dim
        if len(have) != len(shape):
            raise ValueError(f"ExecutionPolicy input_shapes[{value.name!r}] has rank "
                             f"{len(shape)}, the model's input has rank {len(have)}")
        for dim, size in zip(have, shape):
            if dim.HasField("dim_value") and dim.dim_value != size:
                raise ValueError(f"ExecutionPolicy input_shapes[{value.name!r}]={shape} "
                                 f"contradicts the model's fixed dimension {dim.dim_value}")
            dim.Clear()
            dim.dim_value = size
