"""tests/test_profiler.py: xpuruntime.profiler on the CPU: ops with their kernels and shapes,
ranges, host waits with their source lines, memory, the Chrome trace, summaries, reports,
the command line and bad arguments."""

import inspect
import json
import os
import subprocess
import sys
import threading

import pytest

import xpuruntime as xrt
from xpuruntime import profiler


def here():
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


# ---- ops ------------------------------------------------------------------------------

def test_known_ops_yield_exactly_those_events_with_kernels_and_shapes():
    a, b, w = xrt.ones((3, 4)), xrt.ones((3, 4)), xrt.ones((4, 2))
    with xrt.profile() as prof:
        c = a + b
        d = c @ w
        s = xrt.sum(d)
    with xrt.explain() as log:  # the same calls, for the dispatcher's own account
        a + b, c @ w, xrt.sum(d)
    assert [o.name for o in prof.ops] == ["add", "matmul", "sum"]
    assert [o.kernel for o in prof.ops] == [r.kernel for r in log.records]
    assert [o.reason for o in prof.ops] == [r.reason for r in log.records]
    add, matmul, total = prof.ops
    assert add.input_shapes == ((3, 4), (3, 4)) and add.output_shapes == ((3, 4),)
    assert matmul.input_shapes == ((3, 4), (4, 2)) and matmul.output_shapes == ((3, 2),)
    assert total.input_shapes == ((3, 2),) and total.output_shapes == ((),)
    assert add.dtypes == "float64, float64 -> float64"
    assert all(o.device == "cpu" for o in prof.ops)
    assert float(s) == 48.0  # (2 * 4) * 6


def test_ops_are_ordered_and_timed_within_the_profile():
    x = xrt.ones((64, 64))
    with xrt.profile() as prof:
        for _ in range(5):
            x = x * 1.0
    muls = [o for o in prof.ops if o.name == "multiply"]
    assert len(muls) == 5
    starts = [o.start_ns for o in prof.ops]
    assert starts == sorted(starts)
    for o in prof.ops:
        assert prof.start_ns <= o.start_ns <= o.end_ns <= prof.stop_ns
        assert o.device_time_us == o.host_time_us  # CPU kernels run on the host


def test_host_only_profiles_have_no_device_clock_error():
    a = xrt.ones((64,))
    with xrt.profile() as prof:
        a + a
    assert prof.device_clock_error_ns == 0


def test_a_pinned_kernel_is_recorded_with_its_reason():
    a = xrt.ones((8, 8))
    with xrt.profile() as prof, xrt.kernel_policy(matmul="native"):
        a @ a
    (op,) = [o for o in prof.ops if o.name == "matmul"]
    assert op.kernel == "native" and op.decision == "pinned"
    assert "pinned" in op.reason


def test_shapes_are_left_out_when_not_asked_for():
    a = xrt.ones((2, 3))
    with xrt.profile(record_shapes=False) as prof:
        a + a
    assert prof.ops[0].input_shapes == () and prof.ops[0].output_shapes == ()


def test_nothing_is_recorded_outside_a_profile():
    a = xrt.ones((2, 2))
    with xrt.profile() as first:
        a + a
    a * a  # between profiles: recorded nowhere
    with xrt.profile() as second:
        a - a
    assert [o.name for o in first.ops] == ["add"]
    assert [o.name for o in second.ops] == ["subtract"]


def test_ops_on_another_thread_have_their_own_thread_number():
    a = xrt.ones((4,))
    with xrt.profile() as prof:
        a + a
        t = threading.Thread(target=lambda: a * a)
        t.start()
        t.join()
    add, mul = prof.ops
    assert add.thread != mul.thread


def test_a_full_buffer_drops_and_counts():
    a = xrt.ones((2,))
    with xrt.profile(max_records=3, memory=False) as prof:
        for _ in range(5):
            a + a
    assert len(prof.ops) == 3 and prof.dropped == 2


# ---- ranges ---------------------------------------------------------------------------

def test_ranges_nest_and_hold_their_ops():
    a = xrt.ones((4,))

    @profiler.range("decorated")
    def step():
        return a + a

    with xrt.profile() as prof:
        with profiler.range("outer"):
            with profiler.range("inner"):
                step()
            profiler.push_range("pushed")
            a * a
            profiler.pop_range()
    by_name = {r.name: r for r in prof.ranges}
    assert [r.name for r in prof.ranges] == ["outer", "inner", "decorated", "pushed"]
    assert [by_name[n].depth for n in ("outer", "inner", "decorated", "pushed")] == [0, 1, 2, 1]

    def inside(child, parent):
        return parent.start_ns <= child.start_ns <= child.end_ns <= parent.end_ns

    assert inside(by_name["inner"], by_name["outer"])
    assert inside(by_name["decorated"], by_name["inner"])
    add, mul = prof.ops
    assert inside(add, by_name["decorated"]) and inside(mul, by_name["pushed"])
    assert not inside(mul, by_name["inner"])


def test_a_bare_range_decorator_takes_the_function_name():
    @profiler.range
    def work(x):
        return x + 1

    with xrt.profile() as prof:
        assert int(work(xrt.asarray(1))) == 2
    assert prof.ranges[0].name.endswith("work")


def test_a_range_left_open_ends_with_the_profile():
    with xrt.profile() as prof:
        profiler.push_range("left open")
    profiler.pop_range()
    assert prof.ranges[0].end_ns == prof.stop_ns


# ---- host waits and copies ------------------------------------------------------------

def test_host_reads_are_attributed_to_their_source_line():
    x = xrt.ones((3,))
    with xrt.profile() as prof:
        line_bool = here() + 1
        if xrt.sum(x) > 0:
            pass
        line_float = here() + 1
        value = float(xrt.sum(x))
        line_item = here() + 1
        int(xrt.sum(x))
    assert value == 3.0
    syncs = prof.syncs()
    assert [s.cause for s in syncs] == ["__bool__", "item", "item"]
    assert [s.source.line for s in syncs] == [line_bool, line_float, line_item]
    assert all(s.source.file == __file__ for s in syncs)
    function = inspect.currentframe().f_code.co_name
    assert all(s.source.function == function for s in syncs)
    assert all(s.device == "cpu" and s.wait_us == 0 for s in syncs)


def test_a_data_dependent_shape_is_a_host_read_after_its_counting_kernel():
    x = xrt.asarray([0.0, 1.0, 2.0, 0.0])
    with xrt.profile() as prof:
        line = here() + 1
        (indices,) = xrt.nonzero(x)
    (s,) = prof.syncs()
    assert (s.cause, s.op, s.source.line) == ("data-dependent shape", "nonzero_count", line)
    assert indices.shape == (2,)


def test_an_explicit_synchronize_is_a_wait_on_its_line():
    stream = xrt.runtime.current_stream("cpu")
    with xrt.profile() as prof:
        line = here() + 1
        stream.synchronize()
    (s,) = prof.syncs()
    assert s.cause == "synchronize" and s.source.line == line and s.device == "cpu"


def test_cpu_code_moves_nothing_between_host_and_device():
    x = xrt.ones((8,))
    with xrt.profile() as prof:
        y = x.to_device("cpu")
        xrt.asarray([1.0, 2.0])
    assert prof.transfers() == [] and y is not None


# ---- memory ---------------------------------------------------------------------------

def test_memory_counters_return_to_zero_after_frees():
    with xrt.profile() as prof:
        t = xrt.ones((1000,))
        u = t * 2.0
        peak = xrt.sum(u)
        del t, u, peak
    allocs = [m for m in prof.memory if m.kind == "alloc"]
    frees = [m for m in prof.memory if m.kind == "free"]
    assert allocs and sorted((m.address, m.bytes) for m in allocs) == \
        sorted((m.address, m.bytes) for m in frees)
    assert max(m.allocated for m in prof.memory) >= 16000
    assert prof.memory[-1].allocated == 0
    counters = [e for e in prof.chrome_trace()["traceEvents"] if e["ph"] == "C"]
    assert counters and counters[-1]["args"]["allocated"] == 0


def test_memory_kept_past_the_profile_stays_counted():
    with xrt.profile() as prof:
        kept = xrt.ones((10,))
    assert prof.memory[-1].allocated == 80 and kept.shape == (10,)


# ---- Chrome trace ---------------------------------------------------------------------

def check_chrome_trace(trace):
    """The Trace Event Format's rules that viewers rely on: events carry name/ph/ts/pid/tid,
    the timed ones are sorted, and complete (X) events nest per track."""
    events = trace["traceEvents"]
    timed = [e for e in events if e["ph"] != "M"]
    for e in events:
        assert {"name", "ph", "pid", "tid"} <= e.keys()
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    assert [e["ts"] for e in timed] == sorted(e["ts"] for e in timed)
    stacks = {}
    for e in timed:
        if e["ph"] != "X":
            continue
        assert e["dur"] >= 0
        stack = stacks.setdefault((e["pid"], e["tid"]), [])
        while stack and stack[-1] <= e["ts"] + 1e-3:
            stack.pop()
        end = e["ts"] + e["dur"]
        if stack:
            assert end <= stack[-1] + 1e-3, f"{e['name']} overlaps its parent"
        stack.append(end)
    return events


def test_the_chrome_trace_is_valid_json_with_nested_sorted_events(tmp_path):
    a = xrt.ones((16, 16))
    with xrt.profile() as prof:
        with profiler.range("step"):
            b = a @ a
            if xrt.sum(b) > 0:
                b = b + 1
        profiler.mark("done")
    path = tmp_path / "trace.json"
    assert prof.export_chrome_trace(path) == path
    trace = json.loads(path.read_text())
    events = check_chrome_trace(trace)
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert {"step", "matmul", "sum", "add", "wait (__bool__)"} <= names
    matmul = next(e for e in events if e["name"] == "matmul")
    assert matmul["args"]["kernel"] == prof.ops[0].kernel
    assert matmul["args"]["input_shapes"] == [[16, 16], [16, 16]]
    assert any(e["ph"] == "i" and e["name"] == "done" for e in events)
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)


# ---- summary, report, command line ----------------------------------------------------

def test_summary_groups_by_op_kernel_and_shape():
    a, b = xrt.ones((4, 4)), xrt.ones((2, 2))
    with xrt.profile() as prof:
        for _ in range(3):
            a + a
        b + b
        a * a
    by_op = prof.summary(group_by="op", sort_by="count")
    assert [(r.key, r.count) for r in by_op] == [("add", 4), ("multiply", 1)]
    by_shape = prof.summary(group_by="shape", sort_by="count")
    assert [(r.key, r.count) for r in by_shape] == [
        ("add [[4, 4], [4, 4]]", 3), ("add [[2, 2], [2, 2]]", 1), ("multiply [[4, 4], [4, 4]]", 1)]
    by_kernel = prof.summary(group_by="kernel")
    assert sum(r.count for r in by_kernel) == 5
    assert by_op[0].host_time_us == pytest.approx(
        sum(o.host_time_us for o in prof.ops if o.name == "add"))
    table = str(prof.summary(sort_by="count", limit=1))
    assert "add" in table.splitlines()[2] and len(table.splitlines()) == 3


def test_html_report_has_a_timeline_and_the_top_ops(tmp_path):
    a = xrt.ones((8, 8))
    with xrt.profile() as prof:
        a @ a
        bool(xrt.sum(a) > 0)
    path = str(tmp_path / "report.html")
    prof.report(path)
    page = open(path).read()
    assert "<svg" in page and "Timeline" in page and "matmul" in page and "__bool__" in page


def test_png_report_through_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    a = xrt.ones((8, 8))
    with xrt.profile() as prof:
        a @ a
    path = tmp_path / "report.png"
    prof.report(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_line_profiles_a_script(tmp_path):
    script = tmp_path / "work.py"
    script.write_text("import sys\nimport xpuruntime as xrt\n"
                      "x = xrt.ones((4, 4))\ny = x @ x\n"
                      "assert sys.argv[1:] == ['--flag']\nprint(bool(xrt.sum(y) > 0))\n")
    out = tmp_path / "trace.json"
    run = subprocess.run([sys.executable, "-m", "xpuruntime", "profile", "-o", str(out),
                          str(script), "--flag"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"
    assert "matmul" in run.stderr and f"{script}:6" in run.stderr
    events = check_chrome_trace(json.loads(out.read_text()))
    assert any(e["name"] == "matmul" for e in events)


def test_the_command_line_refuses_a_missing_script(tmp_path):
    run = subprocess.run([sys.executable, "-m", "xpuruntime", "profile",
                          str(tmp_path / "missing.py")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2 and "no such script" in run.stderr


# ---- inference sessions ---------------------------------------------------------------

def test_an_inference_run_is_a_range_holding_its_engine_ops():
    pytest.importorskip("onnx")
    from onnx_models import mlp
    model, _ = mlp()
    sess = xrt.InferenceSession(model, engine="native")
    x = xrt.ones((2, 16), dtype=xrt.float32)
    with xrt.profile() as prof:
        sess.run({"x": x})
    (run,) = [r for r in prof.ranges if r.name.startswith("InferenceSession.run")]
    assert run.args["engine"] == "native" and run.args["inputs"] == {"x": (2, 16)}
    inside = [o for o in prof.ops if run.start_ns <= o.start_ns <= run.end_ns]
    assert any(o.name == "matmul" for o in inside)


# ---- bad arguments --------------------------------------------------------------------

def test_bad_arguments_give_clear_errors(tmp_path):
    with pytest.raises(TypeError, match="device_time"):
        xrt.profile(device_time="yes")
    with pytest.raises(ValueError, match="max_records"):
        xrt.profile(max_records=0)
    with pytest.raises(TypeError, match="str"):
        profiler.range(3)
    with pytest.raises(TypeError, match="str"):
        profiler.push_range(None)
    with pytest.raises(ValueError, match="push_range"):
        profiler.pop_range()
    prof = xrt.profile()
    with pytest.raises(RuntimeError, match="not finished"):
        prof.summary()
    with prof:
        with pytest.raises(xrt.XpuRuntimeError, match="do not nest"):
            xrt.profile().start()
        with pytest.raises(RuntimeError, match="not finished"):
            prof.syncs()
    with pytest.raises(RuntimeError, match="has run already"):
        prof.start()
    with pytest.raises(ValueError, match="sort_by"):
        prof.summary(sort_by="speed")
    with pytest.raises(ValueError, match="group_by"):
        prof.summary(group_by="stream")
    with pytest.raises(ValueError, match="limit"):
        prof.summary(limit=0)
    with pytest.raises(ValueError, match=r"\.html or \.png"):
        prof.report(str(tmp_path / "report.txt"))
    with pytest.raises(TypeError, match="torch_trace"):
        profiler.merge_torch_trace(prof, 42)
    with pytest.raises(TypeError, match="on must be"):
        profiler.set_nvtx(1)


# ---- torch.profiler -------------------------------------------------------------------

def test_a_merged_torch_trace_holds_both_on_one_clock(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, record_function
    a = xrt.ones((32, 32))
    with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as tprof:
        with record_function("torch_region"):
            torch.ones(8) + 1
            with xrt.profile() as prof:
                a @ a
            torch.ones(8) * 2
    merged = profiler.merge_torch_trace(prof, tprof, tmp_path / "merged.json")
    assert json.loads((tmp_path / "merged.json").read_text()) == merged
    events = merged["traceEvents"]
    region = next(e for e in events if e.get("name") == "torch_region")
    ours = next(e for e in events if e.get("name") == "matmul" and e.get("cat") == "op")
    assert any(e.get("name") == "aten::add" for e in events)
    # One clock: our op sits inside the torch range that enclosed it (50 us of slack for
    # the sampling of the two clocks).
    assert region["ts"] - 50 <= ours["ts"] <= region["ts"] + region["dur"] + 50
    assert ours["pid"] not in {e["pid"] for e in events if e.get("cat") == "user_annotation"}


# ---- NVTX -----------------------------------------------------------------------------

NVTX_TOOL = r"""
// A tiny NVTX tool: records domain range pushes and pops into the file $NVTX_TOOL_LOG.
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

static FILE* out;
static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  fprintf(out, "push %s %s\n", d ? (const char*)d : "-", a->message.ascii);
  fflush(out);
  return 0;
}
static int pop(nvtxDomainHandle_t d) { fprintf(out, "pop\n"); fflush(out); return 0; }
static nvtxDomainHandle_t create(const char* name) { return (nvtxDomainHandle_t)strdup(name); }

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  out = fopen(getenv("NVTX_TOOL_LOG"), "w");
  const NvtxExportTableCallbacks* cb =
      (const NvtxExportTableCallbacks*)get(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = 0;
  unsigned int size = 0;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  if (size <= NVTX_CBID_CORE2_DomainCreateA) return 0;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)create;
  return 1;
}
"""


def nvtx_include_dir():
    """NVIDIA's NVTX3 headers (the tool is built against them, so the test checks our side
    of the interface against theirs): the CUDA toolkit's or the nvidia-nvtx wheel's."""
    candidates = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    candidates += sorted((f"/usr/local/{d}" for d in os.listdir("/usr/local")
                          if d.startswith("cuda-")), reverse=True)
    for root in candidates:
        if root and os.path.isfile(os.path.join(root, "include", "nvtx3", "nvToolsExt.h")):
            return os.path.join(root, "include")
    for path in sys.path:
        nvidia = os.path.join(path, "nvidia")
        if os.path.isdir(nvidia):
            for sub in sorted(os.listdir(nvidia)):
                inc = os.path.join(nvidia, sub, "include")
                if os.path.isfile(os.path.join(inc, "nvtx3", "nvToolsExt.h")):
                    return inc
    return None


@pytest.fixture(scope="module")
def nvtx_tool(tmp_path_factory):
    include = nvtx_include_dir()
    if include is None:
        pytest.skip("no NVTX3 headers (CUDA toolkit or nvidia-nvtx wheel) to build a tool")
    d = tmp_path_factory.mktemp("nvtx")
    (d / "tool.c").write_text(NVTX_TOOL)
    lib = d / "libtool.so"
    cc = os.environ.get("CC", "cc")
    try:
        subprocess.run([cc, "-shared", "-fPIC", "-I", include, str(d / "tool.c"), "-o", str(lib)],
                       check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot build the NVTX tool: {e}")
    return lib


NVTX_SCRIPT = """
import xpuruntime as xrt
from xpuruntime import profiler
a = xrt.ones((4, 4))
with profiler.range("outer"):
    a @ a
with xrt.profile(nvtx={nvtx}):
    with profiler.range("inside"):
        a + a
"""


@pytest.mark.parametrize("how", ["environment", "argument"])
def test_nvtx_ranges_reach_a_tool_through_the_injection_interface(nvtx_tool, tmp_path, how):
    log = tmp_path / "nvtx.log"
    env = dict(os.environ, NVTX_INJECTION64_PATH=str(nvtx_tool), NVTX_TOOL_LOG=str(log))
    env.pop("XPURUNTIME_NVTX", None)
    if how == "environment":
        env["XPURUNTIME_NVTX"] = "1"
    script = NVTX_SCRIPT.format(nvtx=how == "argument")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = log.read_text().splitlines()
    pushes = [line.split(" ", 2)[2] for line in lines if line.startswith("push")]
    assert all(line.split(" ")[1] == "xpuruntime" for line in lines if line.startswith("push"))
    if how == "environment":
        assert pushes == ["fill", "outer", "matmul", "inside", "add"]  # fill: xrt.ones
    else:  # only inside the profile that asked for NVTX
        assert pushes == ["inside", "add"]
    depth = 0
    for line in lines:
        depth += 1 if line.startswith("push") else -1
        assert depth >= 0
    assert depth == 0


def test_an_engine_keeps_its_own_profile_beside_ours():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from onnx_models import mlp
    model, _ = mlp()
    sess = xrt.InferenceSession(model, engine="onnxruntime",
                                exec_policy=xrt.ExecutionPolicy(profile=True))
    with xrt.profile() as prof:
        sess.run({"x": xrt.ones((2, 16), dtype=xrt.float32)})
    (run,) = prof.ranges
    assert run.name == "InferenceSession.run (onnxruntime)"
    (engine_profile,) = prof.engine_profiles().values()
    assert "MatMul" in json.dumps(engine_profile)
