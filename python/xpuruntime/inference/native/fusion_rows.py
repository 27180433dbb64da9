"""python/xpuruntime/inference/native/fusion_rows.py: the ``rows`` fusion (Note [Fusions] in
fusion.py): a linear layer between a head merge and a head split in sequence-first order
takes its rows in the batch-first order instead (Note [Rows in any order]).

Note [Rows in any order]: PyTorch's MultiheadAttention export (batch_first) computes in
sequence-first order. The attention's [N, H, L, D] output is transposed to [L, N, H, D],
merged to [L*N, E] rows for the output projection, and the projection's rows are split to
[L, N, F] and transposed back to [N, L, F]. The merge copies (the transpose is not
contiguous), and the split-and-transpose hands the residual add and norm a strided tensor,
which they copy again: two copies a layer, 217 us of the 12-layer demo's 2.6 ms on the H100
(the engine's own profile). A linear layer treats its rows one by one, so their order may
change around it: the attention output transposed to [N, L, H, D] (a view where the
attention wrote the query's [N, L, H, D] layout, as cuDNN's does here), merged to [N*L, E],
projected and split to [N, L, F] gives the same values with no copy. The pass needs the
shapes: it applies where shape inference knows them (a fixed-shape export), and it checks
that the merge and the split cut exactly where the transposes move axes.
"""

import numpy as np

from .rewrite import consumers_of, new_node, only_consumer, rewrite, weight_aliases

_HEADS_TO_ROWS = [2, 0, 1, 3]  # [N, H, L, D] -> [L, N, H, D]
_BATCH_FIRST = [0, 2, 1, 3]    # [N, H, L, D] -> [N, L, H, D]


def _perm(node):
    perm = node.attrs.get("perm")
    return None if perm is None else [int(p) for p in perm]


def _shape_of(weights, node):
    """A Reshape's target as a tuple of positive ints, or None (0 and -1 need the input)."""
    value = weights.get(node.inputs[1]) if len(node.inputs) > 1 else None
    if value is None or value.ndim != 1 or value.dtype.kind != "i":
        return None
    target = tuple(int(v) for v in value)
    return target if all(v > 0 for v in target) else None


def _known(shape):
    return shape is not None and all(isinstance(d, int) and d > 0 for d in shape)


def _row_wise(node, x, weights, aliases):
    """Whether node computes each row of its 2-D input x on its own: MatMul by a constant
    matrix, or Gemm by one (x not transposed) with a bias the same for every row."""
    if node.domain != "" or not node.inputs or node.inputs[0] != x:
        return False

    def constant(i):
        name = node.inputs[i] if len(node.inputs) > i else ""
        return weights.get(aliases.get(name, name)) if name else None
    w = constant(1)
    if w is None or w.ndim != 2:
        return False
    if node.op_type == "MatMul":
        return True
    if node.op_type != "Gemm" or node.attrs.get("transA", 0):
        return False
    c = constant(2)
    return len(node.inputs) < 3 or not node.inputs[2] or (
        c is not None and (c.ndim <= 1 or c.shape[0] == 1))


def _row_constant(add, x, weights, aliases):
    """Whether add adds to x a constant the same for every row (a bias vector)."""
    if add.domain != "" or len(add.inputs) != 2 or x not in add.inputs:
        return False
    other = add.inputs[1] if add.inputs[0] == x else add.inputs[0]
    c = weights.get(aliases.get(other, other))
    return c is not None and (c.ndim <= 1 or (c.ndim == 2 and c.shape[0] == 1))


def rows(nodes, weights, opsets, records, outputs, shapes):
    """The ``rows`` pass (Note [Rows in any order]); shapes: {value: static shape}."""
    consumers = consumers_of(nodes)
    aliases = weight_aliases(nodes, weights)  # Identity-shared weights (biases)
    replace = {}

    def single(name, op_type):
        if name in outputs:
            return None
        return only_consumer(consumers, name, op_type)

    for merge_t in nodes:
        if merge_t.op_type != "Transpose" or merge_t.domain != "" or \
                _perm(merge_t) != _HEADS_TO_ROWS:
            continue
        a = shapes.get(merge_t.inputs[0])
        if not _known(a) or len(a) != 4:
            continue
        n, h, seq, d = a
        merge = single(merge_t.outputs[0], "Reshape")
        if merge is None or _shape_of(weights, merge) != (seq * n, h * d):
            continue
        users = consumers.get(merge.outputs[0], [])
        if merge.outputs[0] in outputs or len(users) != 1 or \
                not _row_wise(users[0], merge.outputs[0], weights, aliases):
            continue
        linear = tail = users[0]
        add = single(linear.outputs[0], "Add")
        if add is not None and _row_constant(add, linear.outputs[0], weights, aliases):
            tail = add  # MatMul then the bias: still one row at a time
        split = single(tail.outputs[0], "Reshape")
        target = None if split is None else _shape_of(weights, split)
        if target is None or len(target) != 3 or target[:2] != (seq, n):
            continue
        split_t = single(split.outputs[0], "Transpose")
        if split_t is None or _perm(split_t) != [1, 0, 2]:
            continue
        batch_first = new_node(merge_t, "Transpose", [merge_t.inputs[0]], merge_t.outputs,
                               {"perm": _BATCH_FIRST}, "rows")
        batch_first.constants = {}
        shape_name = f"{split.name}/rows_shape"
        weights[shape_name] = np.array([n, seq, target[2]], dtype=np.int64)
        batch_split = new_node(split_t, "Reshape", [tail.outputs[0], shape_name],
                               split_t.outputs, {}, "rows")
        batch_split.constants = {shape_name: weights[shape_name]}
        replace[id(merge_t)] = batch_first
        replace[id(split)] = None
        replace[id(split_t)] = batch_split
        middle = [linear.name] + ([tail.name] if tail is not linear else [])
        records.append({"fusion": "rows", "into": batch_split.name,
                        "nodes": [merge_t.name, merge.name, *middle, split.name,
                                  split_t.name]})
    return rewrite(nodes, replace)


def candidates(nodes):
    """Whether the graph has a head merge the pass could take (shape inference costs a copy
    of the model, so it runs only then)."""
    return any(n.op_type == "Transpose" and n.domain == "" and _perm(n) == _HEADS_TO_ROWS
               for n in nodes)
