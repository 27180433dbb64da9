"""python/xpuruntime/inference/native/rewrite.py: what the fusion passes (fusion.py,
fusion_attention.py, fusion_elementwise.py) read of the node list and how they edit it: who
reads and who makes a value, constant scalars, aliased weights, new nodes and the rewrite.
"""

import math

from .ops import lookup


def consumers_of(nodes):
    out = {}
    for node in nodes:
        for name in node.inputs:
            out.setdefault(name, []).append(node)
    return out


def scalar_of(weights, name):
    value = weights.get(name)
    if value is None or value.size != 1 or value.dtype.kind != "f":
        return None
    return float(value.reshape(-1)[0])


def only_consumer(consumers, name, op_type):
    users = consumers.get(name, [])
    if len(users) == 1 and users[0].op_type == op_type and users[0].domain == "":
        return users[0]
    return None


def other_input(node, name):
    """The input of a two-input node that is not ``name``."""
    a, b = node.inputs[:2]
    return b if a == name else a


def is_close(value, target):
    return value is not None and math.isclose(value, target, rel_tol=1e-6)


def weight_aliases(nodes, weights):
    """Values that are a weight under another name: exporters share equal weights through
    Identity nodes (every LayerNorm's ones and zeros, zero biases)."""
    return {n.outputs[0]: n.inputs[0] for n in nodes
            if n.op_type == "Identity" and n.domain == "" and n.inputs[0] in weights}


def producers_of(nodes):
    return {out: node for node in nodes for out in node.outputs if out}


def new_node(like, op_type, inputs, outputs, attrs, fusion, domain=""):
    from .plan import Node

    node = Node(like.name, op_type, domain, like.opset, attrs, inputs, outputs)
    node.spec = lookup(domain, op_type)
    node.fused = fusion
    return node


def rewrite(nodes, replace):
    out = []
    for node in nodes:
        new = replace.get(id(node), node)
        if new is not None:
            out.append(new)
    return out
