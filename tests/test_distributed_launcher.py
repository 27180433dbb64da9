"""tests/test_distributed_launcher.py: `python -m xpuruntime.distributed.run` on the CPU: the
environment each rank gets, argument errors, a failing rank stopping the others, signals."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

LAUNCHER = [sys.executable, "-m", "xpuruntime.distributed.run"]


def script(tmp_path, body):
    path = tmp_path / "rank_script.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def launch(*args, timeout=60, **kwargs):
    return subprocess.run(LAUNCHER + list(args), capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def test_each_rank_gets_torchruns_environment(tmp_path):
    path = script(tmp_path, """
        import os, sys
        keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                "MASTER_PORT", "NCCL_NVLS_ENABLE")
        line = " ".join(f"{k}={os.environ.get(k)}" for k in keys) + f" {sys.argv[1:]}\\n"
        os.write(1, line.encode())  # one write: the ranks share the pipe
    """)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    out = launch("-n", "3", "--master-port", "29123", path, "--flag", "x", env=env)
    assert out.returncode == 0, out.stderr
    lines = sorted(out.stdout.splitlines())
    assert len(lines) == 3
    for rank, line in enumerate(lines):
        assert line == (f"RANK={rank} LOCAL_RANK={rank} WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 "
                        "MASTER_ADDR=127.0.0.1 MASTER_PORT=29123 NCCL_NVLS_ENABLE=0 "
                        "['--flag', 'x']")


def test_ranks_of_a_second_node_follow_the_first(tmp_path):
    # One write per rank: with print's separate writes the ranks' lines can interleave on
    # the shared pipe ("32 4" and " 4" in one CI run).
    path = script(tmp_path, "import os; os.write(1, f\"{os.environ['RANK']} "
                            "{os.environ['WORLD_SIZE']}\\n\".encode())")
    out = launch("-n", "2", "--nnodes", "2", "--node-rank", "1", path)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.splitlines()) == ["2 4", "3 4"]


def test_a_failing_rank_stops_the_others_and_sets_the_exit_code(tmp_path):
    path = script(tmp_path, """
        import os, sys, time
        if os.environ["RANK"] == "1":
            time.sleep(0.5)
            sys.exit(3)
        time.sleep(120)
    """)
    start = time.monotonic()
    out = launch("-n", "3", path)
    assert out.returncode == 3
    assert "rank 1" in out.stderr and "code 3" in out.stderr
    assert time.monotonic() - start < 30  # the sleepers were stopped, not waited for


def test_a_rank_that_ignores_sigterm_is_killed(tmp_path):
    path = script(tmp_path, """
        import os, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.environ["RANK"] == "0":
            time.sleep(0.5)
            sys.exit(5)
        time.sleep(120)
    """)
    start = time.monotonic()
    assert launch("-n", "2", path).returncode == 5
    assert time.monotonic() - start < 30


def test_signals_reach_every_rank(tmp_path):
    marker = tmp_path / "got"
    path = script(tmp_path, f"""
        import os, signal, sys, time
        def stop(sig, frame):
            open(r"{marker}" + os.environ["RANK"], "w").close()
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        open(r"{marker}" + "ready" + os.environ["RANK"], "w").close()
        time.sleep(120)
    """)
    proc = subprocess.Popen(LAUNCHER + ["-n", "2", path])
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"gotready{r}").exists() for r in range(2)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert (tmp_path / "got0").exists() and (tmp_path / "got1").exists()


def test_module_targets_run_with_dash_m():
    out = launch("-n", "2", "-m", "json.tool", "--help")
    assert out.returncode == 0
    assert out.stdout.count("usage") == 2


@pytest.mark.parametrize("args, message", [
    (["-n", "0", "x.py"], "must be >= 1"),
    (["-n", "2", "no_such_script.py"], "no such script"),
    (["-n", "2", "--nnodes", "2", "--node-rank", "2", "x.py"], "--node-rank 2"),
    (["-n", "2", "--master-port", "70000", "x.py"], "not a port"),
    (["-n", "2"], "target"),
])
def test_bad_arguments_exit_2_with_a_reason(args, message):
    out = launch(*args)
    assert out.returncode == 2
    assert message in out.stderr
