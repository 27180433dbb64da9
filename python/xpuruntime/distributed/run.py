"""python/xpuruntime/distributed/run.py: ``python -m xpuruntime.distributed.run -n 2 script.py
[args]``, one process per GPU with the environment torchrun sets.

Each child gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and
MASTER_PORT, and inherits everything else (NCCL_* settings such as NCCL_NVLS_ENABLE or
NCCL_SOCKET_IFNAME included). The launcher:

- fails fast: when a child exits with an error, the others get SIGTERM (SIGKILL after a
  grace period), and the launcher exits with the first failing child's code (128 + N for a
  child killed by signal N);
- forwards SIGINT, SIGTERM and SIGHUP to every child (each runs in its own session, so a
  terminal's Ctrl-C reaches it once, through here);
- exits 2 for bad arguments, like argparse.
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

_GRACE_SECONDS = 5.0


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m xpuruntime.distributed.run",
        description="Starts one process per GPU with RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/"
                    "MASTER_PORT set, as torchrun does.")
    p.add_argument("-n", "--nproc-per-node", type=int, default=None,
                   help="processes on this node (default: one per visible GPU)")
    p.add_argument("--nnodes", type=int, default=1, help="nodes in the job (default 1)")
    p.add_argument("--node-rank", type=int, default=0, help="this node's index (default 0)")
    p.add_argument("--master-addr", default="127.0.0.1",
                   help="rank 0's host, reachable from every node (default 127.0.0.1)")
    p.add_argument("--master-port", type=int, default=None,
                   help="rank 0's rendezvous port (default: a free one on one node, 29500 "
                        "on several)")
    p.add_argument("-m", dest="module", action="store_true",
                   help="run the target as a module (python -m target)")
    p.add_argument("target", help="the script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _visible_gpus():
    from .. import cuda

    return cuda.device_count()


def _check(parser, options):
    if options.nproc_per_node is None:
        options.nproc_per_node = _visible_gpus()
        if options.nproc_per_node == 0:
            parser.error("no GPU is visible here: pass -n/--nproc-per-node")
    if options.nproc_per_node < 1:
        parser.error(f"-n/--nproc-per-node must be >= 1, got {options.nproc_per_node}")
    if options.nnodes < 1:
        parser.error(f"--nnodes must be >= 1, got {options.nnodes}")
    if not 0 <= options.node_rank < options.nnodes:
        parser.error(f"--node-rank {options.node_rank} is not in [0, {options.nnodes})")
    if options.master_port is not None and not 0 < options.master_port < 65536:
        parser.error(f"--master-port {options.master_port} is not a port")
    if not options.module and not os.path.isfile(options.target):
        parser.error(f"no such script: {options.target}")
    if options.master_port is None:
        options.master_port = _free_port() if options.nnodes == 1 else 29500


def _exit_code(returncode):
    return 128 - returncode if returncode < 0 else returncode


def _signal_all(children, sig):
    for child in children:
        if child.poll() is None:
            try:
                os.killpg(child.pid, sig)
            except ProcessLookupError:
                pass


def _stop(children):
    _signal_all(children, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE_SECONDS
    while time.monotonic() < deadline and any(c.poll() is None for c in children):
        time.sleep(0.05)
    _signal_all(children, signal.SIGKILL)
    for child in children:
        child.wait()


def launch(options):
    """Starts the children and watches them; returns the launcher's exit code."""
    n = options.nproc_per_node
    world_size = n * options.nnodes
    command = [sys.executable] + (["-m"] if options.module else []) + [options.target]
    command += options.args
    children = []
    received = []

    def forward(sig, _frame):
        received.append(sig)
        _signal_all(children, sig)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM,
                                                       signal.SIGHUP)}
    try:
        for local_rank in range(n):
            env = dict(os.environ)
            env.update(RANK=str(options.node_rank * n + local_rank), LOCAL_RANK=str(local_rank),
                       WORLD_SIZE=str(world_size), LOCAL_WORLD_SIZE=str(n),
                       GROUP_RANK=str(options.node_rank), MASTER_ADDR=options.master_addr,
                       MASTER_PORT=str(options.master_port))
            children.append(subprocess.Popen(command, env=env, start_new_session=True))
        while True:
            failed = [(i, c) for i, c in enumerate(children)
                      if c.poll() is not None and c.returncode != 0]
            if failed:
                local_rank, child = failed[0]
                code = _exit_code(child.returncode)
                if not received:
                    print(f"xpuruntime.distributed.run: rank "
                          f"{options.node_rank * n + local_rank} (pid {child.pid}) exited "
                          f"with code {code}; stopping the other ranks", file=sys.stderr)
                _stop(children)
                return code
            if all(c.poll() is not None for c in children):
                return 0
            time.sleep(0.05)
    finally:
        _stop(children)
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(argv)
    _check(parser, options)
    return launch(options)


if __name__ == "__main__":
    sys.exit(main())
