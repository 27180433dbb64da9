"""python/xpuruntime/profiler/_report.py: ``profile.report(path)``: one page with a timeline
(host threads, device streams, waits and copies) and the top ops, as HTML (inline SVG, no
script, no network) or as a PNG through matplotlib."""

import html

_LANE = 18
_WIDTH = 1100


def _lanes(prof):
    """(label, [(start_ns, end_ns, name, kind)]) per track: host threads, then streams."""
    lanes = {}
    for o in prof.ops:
        lanes.setdefault(f"host thread {o.thread}", []).append(
            (o.start_ns, o.end_ns, o.name, "op"))
        if o.device_start_ns:
            lanes.setdefault(f"{o.device} stream {o.stream:#x}", []).append(
                (o.device_start_ns, o.device_end_ns, o.kernel, "kernel"))
    for r in prof.ranges:
        lanes.setdefault(f"ranges, thread {r.thread}", []).append(
            (r.start_ns, r.end_ns, r.name, "range"))
    for s in prof._syncs:
        lanes.setdefault("host waits", []).append((s.start_ns, s.end_ns, s.cause, "sync"))
    for t in prof._transfers:
        lanes.setdefault("copies", []).append((t.start_ns, t.end_ns, t.direction, "copy"))
    return sorted(lanes.items())


_COLORS = {"op": "#4e79a7", "kernel": "#59a14f", "range": "#edc948", "sync": "#e15759",
           "copy": "#b07aa1"}


def _svg(prof):
    lanes = _lanes(prof)
    t0, t1 = prof.start_ns, max(prof.stop_ns, prof.start_ns + 1)
    scale = (_WIDTH - 200) / (t1 - t0)
    height = _LANE * (len(lanes) + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}">']
    for i, (label, spans) in enumerate(lanes):
        y = i * _LANE
        parts.append(f'<text x="0" y="{y + 13}" font-size="11">{html.escape(label)}</text>')
        for start, end, name, kind in spans:
            x = 200 + (start - t0) * scale
            w = max((end - start) * scale, 0.5)
            parts.append(f'<rect x="{x:.2f}" y="{y + 2}" width="{w:.2f}" height="{_LANE - 4}" '
                         f'fill="{_COLORS[kind]}"><title>{html.escape(name)} '
                         f'{(end - start) / 1e3:.2f} us</title></rect>')
    parts.append(f'<text x="200" y="{height - 3}" font-size="11">0 ms</text>')
    parts.append(f'<text x="{_WIDTH - 80}" y="{height - 3}" font-size="11">'
                 f'{(t1 - t0) / 1e6:.3f} ms</text></svg>')
    return "\n".join(parts)


def _table(header, rows):
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _html(prof):
    top = prof.summary(sort_by="device_time", limit=20)
    syncs, transfers = prof.syncs(), prof.transfers()
    total = (prof.stop_ns - prof.start_ns) / 1e6
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>xpuruntime profile</title>
<style>body{{font-family:sans-serif;margin:20px}} table{{border-collapse:collapse;font-size:12px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:left}}</style></head><body>
<h1>xpuruntime profile</h1>
<p>{total:.3f} ms; {len(prof.ops)} ops, {len(syncs)} host waits, {len(transfers)} copies,
{len(prof.ranges)} ranges, {len(prof.memory)} memory events{
    f"; {prof.dropped} records dropped (buffer full)" if prof.dropped else ""}</p>
<h2>Timeline</h2>
{_svg(prof)}
<h2>Top ops (by device time)</h2>
{_table(["op", "count", "host total us", "device total us", "kernels"],
        [(r.key, r.count, f"{r.host_time_us:.1f}", f"{r.device_time_us:.1f}", r.kernels)
         for r in top])}
<h2>Host waits</h2>
{_table(["cause", "device", "wait us", "source"],
        [(s.cause, s.device, f"{s.wait_us:.1f}", str(s.source)) for s in syncs[:200]])}
<h2>Copies</h2>
{_table(["direction", "route", "bytes", "us", "source"],
        [(t.direction, t.route, t.bytes, f"{t.host_time_us:.1f}", str(t.source))
         for t in transfers[:200]])}
</body></html>
"""


def _png(prof, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("profile.report(...png) needs matplotlib (pip install matplotlib); "
                          "an .html report needs nothing") from e
    lanes = _lanes(prof)
    top = prof.summary(sort_by="device_time", limit=10)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(12, 3 + 0.3 * len(lanes) + 3))
    for i, (label, spans) in enumerate(lanes):
        ax1.broken_barh([((s - prof.start_ns) / 1e6, max((e - s) / 1e6, 1e-4))
                         for s, e, _, _ in spans], (i, 0.8),
                        facecolors=[_COLORS[k] for _, _, _, k in spans])
    ax1.set_yticks([i + 0.4 for i in range(len(lanes))], [label for label, _ in lanes])
    ax1.set_xlabel("ms")
    ax1.set_title("timeline")
    ax2.barh([r.key for r in top][::-1], [r.device_time_us for r in top][::-1])
    ax2.set_xlabel("device time, us")
    ax2.set_title("top ops")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_report(prof, path):
    lower = path.lower()
    if lower.endswith((".html", ".htm")):
        with open(path, "w", encoding="utf-8") as f:
            f.write(_html(prof))
    elif lower.endswith(".png"):
        _png(prof, path)
    else:
        raise ValueError(f"report: the path must end in .html or .png, got {path!r}")
    return path
