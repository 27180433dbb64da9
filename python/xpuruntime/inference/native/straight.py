"""python/xpuruntime/inference/native/straight.py: a plan's plain run generated as one
Python function (Note [Straight-line runs]); plan.py's Plan runs it once a memo exists."""

import xpuruntime as xrt


def compile_straight(plan, named_error):
    """A plan's plain run as one generated Python function; named_error(node, error) names a
    failing node as the loop does.

    Note [Straight-line runs]: the loop of _run_plain costs about 0.4 us a node in
    CPython (the node's attributes, a list of its inputs, a dict store per output, a
    delete per dead value): 23 us a run of the small transformer's 59 nodes, 4% of its
    CPU run. Once a memo exists, a plain run is instead one function generated from
    the plan, which holds values in local variables: a node is one line,
    ``v7 = F[3](v2, S['w'])[0]``, and a value dies where the loop would drop it
    (``del v2``), so memory is reused as before. Constants and the memo's host values
    are read from the memo's start dict (S); "derived" nodes are left out, as the loop
    skips them while the memo holds; each "shape" node is a test of its input's shape
    against the memo's, and on the first that differs the function hands its live
    values to the loop, which goes on from that node (and keeps a new memo). An error
    is named after the node of the line it came from. 3.7 us a run instead of 23.
    Recording and profiling runs take the loop. The function binds the node functions
    when it is made (at the first plain run after planning or freezing)."""
    nodes = plan.nodes
    inputs = set(plan.input_names)
    local = {}   # value name -> the local variable holding it in this run
    lines = []   # (source line, index of the node it belongs to or None)
    names = {}   # local variable -> value name, for resuming
    fns = []

    def ref(name):
        if name in local:
            return local[name]
        return f"S[{name!r}]"  # a constant, or a host value the memo holds

    def bind(name):
        var = f"v{len(names)}"
        names[var] = name
        local[name] = var
        return var
    read_later = {}
    for index, node in enumerate(nodes):
        for name in node.inputs:
            read_later[name] = index
    wanted = set(plan.output_names)
    args = [bind(name) for name in plan.input_names]
    lines.append(("def straight(memo, " + ", ".join(args) + "):", None))
    lines.append(("    E, S = memo", None))
    lines.append(("    try:", None))
    for index, node in enumerate(nodes):
        if node.memo == "derived":
            continue  # its outputs are the memo's while the memo holds
        if node.memo == "shape":
            test = (f"        if {ref(node.inputs[0])}.shape != E[{index}][0]: "
                    f"return resume({index}, memo, locals())")
            lines.append((test, index))
            continue
        moved = dict(node.moves)
        operands = []
        for position, name in enumerate(node.inputs):
            if not name:
                operands.append("None")
            elif moved.get(position) == "constant":
                operands.append(f"D[{name!r}]")
            elif position in moved:
                place = "HOST" if moved[position] == "host" else "DEVICE"
                operands.append(f"{ref(name)}.to_device({place})")
            else:
                operands.append(ref(name))
        fns.append(node.fn)
        call = f"F[{len(fns) - 1}]({', '.join(operands)})"
        outputs = [(k, name) for k, name in enumerate(node.outputs) if name and (
            read_later.get(name, -1) > index or name in wanted)]
        if not outputs:
            lines.append((f"        {call}", index))
        elif len(outputs) == 1:
            k, name = outputs[0]
            lines.append((f"        {bind(name)} = {call}[{k}]", index))
        else:
            lines.append((f"        o = {call}", index))
            for k, name in outputs:
                lines.append((f"        {bind(name)} = o[{k}]", index))
        dead = [local.pop(name) for name in node.frees if name in local and
                name not in inputs]
        if dead:
            lines.append((f"        del {', '.join(dead)}", index))
    result = ", ".join(f"{name!r}: {ref(name)}" for name in plan.output_names)
    lines.append((f"        return {{{result}}}", None))
    lines.append(("    except (XpuRuntimeError, ValueError, TypeError, IndexError) as e:",
                  None))
    lines.append(("        raise named(e) from e", None))
    source = "\n".join(line for line, _ in lines) + "\n"
    where = {number: index for number, (_, index) in enumerate(lines, 1)
             if index is not None}
    code = compile(source, "<native plan>", "exec")

    def resume(index, memo, values):
        """A shape differs from the memo's: the loop goes on from this node."""
        env = dict(memo[1])
        for var, value in values.items():
            if var in names:
                env[names[var]] = value
        return plan._run_plain(env, memo, index)

    def named(error):
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<native plan>":
            tb = tb.tb_next
        index = where.get(tb.tb_lineno) if tb is not None else None
        if index is None:
            return error
        return named_error(nodes[index], error)

    scope = {"F": fns, "D": plan.device_constants, "HOST": plan.host,
             "DEVICE": plan.device, "XpuRuntimeError": xrt.XpuRuntimeError,
             "resume": resume, "named": named}
    exec(code, scope)  # noqa: S102 (source made above from the plan's names, quoted)
    plan.straight_source = source
    return scope["straight"]
