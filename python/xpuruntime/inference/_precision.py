"""python/xpuruntime/inference/_precision.py: rewriting an ONNX model's float32 computation into
float16 or bfloat16, for engines whose precision is the model's own (ONNX Runtime's CUDA
provider; TensorRT 11, which removed its precision flags and builds strongly typed networks).

Note [Float conversion]: every float32 weight (initializers, Constant and ConstantOfShape
values) becomes the target type, every ``Cast(to=FLOAT)`` casts to it, and the graph's float32
inputs and outputs keep their type through a Cast at the border, so callers see the model
they exported. Inputs that the ONNX specification types as float32 whatever the graph
computes in (Resize's scales, Upsample's scales) stay float32. Value infos are dropped so the
engine infers the new types itself. The conversion works on a copy.
"""

import copy

FLOAT, FLOAT16, BFLOAT16 = 1, 10, 16

# (op type, input index) whose tensor the specification fixes to float32.
_FLOAT32_ONLY = {("Resize", 2), ("Upsample", 1)}


def precision_onnx_type(precision):
    return {"fp16": FLOAT16, "bf16": BFLOAT16}[precision]


def convert_float_model(proto, target):
    """A copy of ``proto`` computing in ``target`` (FLOAT16 or BFLOAT16) instead of float32."""
    import numpy as np
    from onnx import helper, numpy_helper

    model = copy.deepcopy(proto)
    graph = model.graph
    keep = {node.input[i] for node in graph.node for op, i in _FLOAT32_ONLY
            if node.op_type == op and len(node.input) > i}

    def convert_tensor(tensor):
        if tensor.data_type != FLOAT or tensor.name in keep:
            return
        array = numpy_helper.to_array(tensor).astype(np.float32)
        converted = _encode(array, target, tensor.name)
        tensor.CopyFrom(converted)

    for init in graph.initializer:
        convert_tensor(init)
    converted = {i.name for i in graph.initializer if i.data_type == target}
    for value in graph.input:   # old models list their initializers as inputs too
        if value.name in converted:
            value.type.tensor_type.elem_type = target
    for node in graph.node:
        for attr in node.attribute:
            if attr.name == "value" and attr.HasField("t") and node.op_type in (
                    "Constant", "ConstantOfShape") and not (set(node.output) & keep):
                convert_tensor(attr.t)
            if node.op_type == "Cast" and attr.name == "to" and attr.i == FLOAT:
                attr.i = target

    renamed_inputs = {}
    for value in graph.input:
        if value.type.tensor_type.elem_type == FLOAT and value.name not in converted:
            inner = value.name + "__xrt_lowp"
            renamed_inputs[value.name] = inner
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in renamed_inputs and (node.op_type, i) not in _FLOAT32_ONLY:
                node.input[i] = renamed_inputs[name]
    casts_in = [helper.make_node("Cast", [outer], [inner], to=target,
                                 name=f"xrt_cast_in_{outer}")
                for outer, inner in renamed_inputs.items()]

    casts_out = []
    outer_outputs = {v.name for v in graph.output if v.type.tensor_type.elem_type == FLOAT}
    for value in graph.output:
        if value.name not in outer_outputs:
            continue
        inner = value.name + "__xrt_lowp"
        for node in graph.node:
            for i, name in enumerate(node.output):
                if name == value.name:
                    node.output[i] = inner
            for i, name in enumerate(node.input):
                if name == value.name:
                    node.input[i] = inner
        if value.name in renamed_inputs:       # an input passed straight through
            inner = renamed_inputs[value.name]
        casts_out.append(helper.make_node("Cast", [inner], [value.name], to=FLOAT,
                                          name=f"xrt_cast_out_{value.name}"))

    nodes = casts_in + list(graph.node) + casts_out
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.value_info[:]
    return model


def _encode(array, target, name):
    import numpy as np
    from onnx import helper

    if target == FLOAT16:
        data = array.astype(np.float16)
        return helper.make_tensor(name, FLOAT16, array.shape, data.view(np.uint16).tobytes(),
                                  raw=True)
    # bfloat16: round to nearest even on the upper 16 bits of the float32 pattern.
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(array)
    rounded = np.where(nan, 0x7FC0, rounded).astype(np.uint16)
    return helper.make_tensor(name, BFLOAT16, array.shape, rounded.tobytes(), raw=True)
