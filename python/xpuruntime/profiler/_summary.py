"""python/xpuruntime/profiler/_summary.py: ``profile.summary()``, ops grouped by op, kernel or
op and shapes, with counts and total and mean host and device times."""

from dataclasses import dataclass


@dataclass
class SummaryRow:
    key: str
    count: int
    host_time_us: float  # totals
    device_time_us: float
    kernels: str

    @property
    def mean_host_us(self):
        return self.host_time_us / self.count

    @property
    def mean_device_us(self):
        return self.device_time_us / self.count


class Summary(list):
    """A list of SummaryRow; ``str()`` is the table. Times are inclusive: an op whose kernel
    runs other ops (``attention``'s ``math`` kernel: matmul, softmax, matmul) counts theirs
    too, and they have their own rows; ``device %`` is of the outermost ops' total."""

    def __init__(self, rows=(), total_device_us=None):
        super().__init__(rows)
        self.total_device_us = total_device_us

    def __str__(self):
        total_device = self.total_device_us or sum(r.device_time_us for r in self) or 1.0
        width = max([len(r.key) for r in self] + [4])
        width = min(width, 60)
        head = (f"{'name':<{width}}  {'count':>7}  {'host total us':>13}  {'host mean':>10}  "
                f"{'device total us':>15}  {'device mean':>11}  {'device %':>8}  kernels")
        lines = [head, "-" * len(head)]
        for r in self:
            lines.append(f"{r.key[:width]:<{width}}  {r.count:>7}  {r.host_time_us:>13.1f}  "
                         f"{r.mean_host_us:>10.2f}  {r.device_time_us:>15.1f}  "
                         f"{r.mean_device_us:>11.2f}  "
                         f"{100 * r.device_time_us / total_device:>7.1f}%  {r.kernels}")
        return "\n".join(lines)

    def table(self):
        return str(self)


def _key(op, group_by):
    if group_by == "op":
        return op.name
    if group_by == "kernel":
        return op.kernel
    shapes = ", ".join(str(list(s)) for s in op.input_shapes)
    return f"{op.name} [{shapes}]"


def summarize(ops, sort_by, group_by, limit):
    groups = {}
    for op in ops:
        key = _key(op, group_by)
        g = groups.get(key)
        if g is None:
            g = groups[key] = [0, 0.0, 0.0, {}]
        g[0] += 1
        g[1] += op.host_time_us
        g[2] += op.device_time_us
        g[3][op.kernel] = None
    rows = Summary(SummaryRow(k, c, h, d, ", ".join(ks)) for k, (c, h, d, ks) in groups.items())
    order = {"device_time": lambda r: (-r.device_time_us, r.key),
             "host_time": lambda r: (-r.host_time_us, r.key),
             "count": lambda r: (-r.count, r.key),
             "name": lambda r: r.key}[sort_by]
    rows.sort(key=order)
    total = sum(op.device_time_us for op in ops if op.depth == 0)
    return Summary(rows[:limit] if limit else rows, total)
