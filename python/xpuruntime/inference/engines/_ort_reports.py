"""python/xpuruntime/inference/engines/_ort_reports.py: what ONNX Runtime says it did, read
for the engine's ``explain()``: which provider ran which node, and its own profile."""

import json


def node_placement(sess):
    """Provider name -> the nodes it ran ("OpType:name"), from ORT's graph assignment info
    (the session was made with ``session.record_ep_graph_assignment_info``); None where
    this ORT cannot say."""
    getter = getattr(sess, "get_provider_graph_assignment_info", None)
    if getter is None:
        return None
    try:
        subgraphs = getter()
    except Exception:
        return None
    placement = {}
    for sub in subgraphs:
        nodes = [f"{n.op_type}:{n.name}" if n.name else n.op_type for n in sub.get_nodes()]
        placement.setdefault(sub.ep_name, []).extend(nodes)
    return placement


def profile_by_op(path):
    """ORT's per-node profile at path (its Chrome-trace JSON), summed by op type and
    provider (ms, largest first); only the file's name when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            events = json.load(f)
    except (OSError, ValueError):
        return {"file": path}
    by_op = {}
    for ev in events:
        args = ev.get("args", {})
        if ev.get("cat") == "Node" and "op_name" in args:
            key = (args["op_name"], args.get("provider", ""))
            by_op[key] = by_op.get(key, 0.0) + ev.get("dur", 0) / 1000.0
    return {"file": path,
            "ms_by_op": {f"{op} ({ep})": round(ms, 4) for (op, ep), ms in
                         sorted(by_op.items(), key=lambda kv: -kv[1])}}
