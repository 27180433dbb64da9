"""python/xpuruntime/inference/native/fusion_views.py: the ``views`` fusion (Note [Fusions] in
fusion.py): a chain of Reshape, Transpose, Unsqueeze, Squeeze and Flatten nodes becomes one
``xpuruntime:ViewChain`` node, a view where the chain as a whole is one (Note [View chains]
in ops/shape.py)."""

from .rewrite import consumers_of, new_node, producers_of, rewrite

_VIEW_OPS = frozenset({"Reshape", "Transpose", "Unsqueeze", "Squeeze", "Flatten"})


def _is_view(node):
    return node.op_type in _VIEW_OPS and node.domain == "" and \
        not (node.op_type == "Reshape" and node.opset < 5)


def _next(node, consumers, outputs):
    """The chain's next node after node: the only reader of its output, a view op reading
    it as its data; None where the chain ends."""
    out = node.outputs[0]
    users = consumers.get(out, [])
    if out in outputs or len(users) != 1 or not _is_view(users[0]) or \
            users[0].inputs[0] != out or out in users[0].inputs[1:]:
        return None
    return users[0]


def views(nodes, weights, opsets, records, outputs):
    """The ``views`` pass (Note [Fusions] in fusion.py)."""
    consumers = consumers_of(nodes)
    producers = producers_of(nodes)
    replace = {}
    for node in nodes:
        if not _is_view(node) or id(node) in replace:
            continue
        before = producers.get(node.inputs[0])
        if before is not None and _is_view(before) and \
                _next(before, consumers, outputs) is node:
            continue  # not the chain's first node
        chain = [node]
        while (after := _next(chain[-1], consumers, outputs)) is not None:
            chain.append(after)
        if len(chain) < 2 or not any(n.op_type in ("Reshape", "Flatten") for n in chain):
            continue  # transposes and squeezes alone are views already
        inputs = [chain[0].inputs[0]] + [name for n in chain for name in n.inputs[1:]]
        fused = new_node(chain[-1], "ViewChain", inputs, chain[-1].outputs[:1], {}, "views",
                         domain="xpuruntime")
        fused.members = chain
        replace.update({id(n): None for n in chain})
        replace[id(chain[-1])] = fused
        records.append({"fusion": "views", "into": fused.name,
                        "nodes": [n.name for n in chain]})
    return rewrite(nodes, replace)
