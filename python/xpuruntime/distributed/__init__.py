"""python/xpuruntime/distributed/__init__.py: NCCL collectives on xpuruntime (and any DLPack)
tensors, with torch.distributed's names: one default communicator per process made by
``init_process_group``, or ``Communicator`` objects for those who manage several.

    import xpuruntime as xrt
    import xpuruntime.distributed as dist

    dist.init_process_group()            # RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT
    x = xrt.ones((1024,), device=f"cuda:{dist.get_rank()}")
    dist.all_reduce(x)                   # queued on the current stream
    dist.destroy_process_group()

Start one process per GPU with ``python -m xpuruntime.distributed.run -n 2 script.py`` or
``torchrun --nproc-per-node 2 script.py``. See docs/distributed.md.
"""

import atexit
import os

from .. import _core
from ._communicator import (
    Communicator,
    ReduceOp,
    Work,
    device_index,
    group,
    timeout_seconds,
)
from ._store import DistributedError, env_int, exchange_unique_id, open_store

_default = None  # the process group's Communicator
_generation = 0  # init_process_group calls so far: keeps the rendezvous keys apart


def init_process_group(rank=None, world_size=None, init_method="env://", device=None,
                       timeout=None):
    """Makes this process rank ``rank`` of ``world_size`` in the default communicator.

    - rank, world_size: default to RANK and WORLD_SIZE from the environment.
    - init_method: how the NCCL unique id travels from rank 0 (Note [Rendezvous]):
      "env://" (MASTER_ADDR, MASTER_PORT; under torchrun, its agent's store; when
      torch.distributed is already initialized, through torch), "tcp://host:port", or
      "file:///path" (a file on a shared file system, absent when the job starts).
    - device: the CUDA device (index, "cuda:N" or Device); default LOCAL_RANK, else
      rank % device_count. It becomes the current device.
    - timeout: seconds or a timedelta (default 600) for the rendezvous, the join, and each
      collective (the watchdog's deadline; see Communicator).
    """
    global _default, _generation
    if _default is not None:
        raise DistributedError("the process group is already initialized "
                               "(destroy_process_group() first)")
    seconds = timeout_seconds(timeout)
    rank = env_int("RANK", rank)
    world_size = env_int("WORLD_SIZE", world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, world_size={world_size})")
    if device is None:
        local = env_int("LOCAL_RANK", None, default=-1)
        count = _core._cuda.status()["device_count"]
        device = local if local >= 0 else rank % max(count, 1)
    device = device_index(device)
    _core._cuda.set_device(device)
    if init_method == "env://" and _torch_distributed_initialized():
        comm = Communicator.from_torch_process_group(None, device, seconds)
    else:
        store = open_store(init_method, rank, world_size, seconds)
        restarts = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
        key = f"xpuruntime/nccl_unique_id/{restarts}/{_generation}"
        try:
            unique_id = exchange_unique_id(store, rank, key, Communicator.unique_id)
            comm = Communicator(unique_id, world_size, rank, device, seconds)
        finally:
            store.close()  # every rank has joined, hence read the id
    _generation += 1
    _default = comm


def _torch_distributed_initialized():
    import sys

    torch = sys.modules.get("torch")  # never imported here
    return torch is not None and torch.distributed.is_available() and \
        torch.distributed.is_initialized()


def is_initialized():
    return _default is not None


def get_communicator():
    """The default Communicator (DistributedError before init_process_group)."""
    if _default is None:
        raise DistributedError("the process group is not initialized: call "
                               "xpuruntime.distributed.init_process_group() first")
    return _default


def get_rank():
    return get_communicator().rank


def get_world_size():
    return get_communicator().world_size


def destroy_process_group():
    """Waits for the queued collectives (up to the timeout) and frees the communicator."""
    global _default
    comm, _default = _default, None
    if comm is not None:
        comm.destroy()


@atexit.register
def _abort_at_exit():
    # A process that never called destroy_process_group must not wait for peers at exit.
    global _default
    comm, _default = _default, None
    if comm is not None:
        comm.abort()


def barrier(group=None):
    (group or get_communicator()).barrier()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    return (group or get_communicator()).all_reduce(tensor, op, async_op=async_op)


def broadcast(tensor, src, group=None, async_op=False):
    return (group or get_communicator()).broadcast(tensor, src, async_op=async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    return (group or get_communicator()).reduce(tensor, dst, op, async_op=async_op)


def all_gather(output, tensor, group=None, async_op=False):
    return (group or get_communicator()).all_gather(output, tensor, async_op=async_op)


def reduce_scatter(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    return (group or get_communicator()).reduce_scatter(output, input, op, async_op=async_op)


def all_to_all(output, input, group=None, async_op=False):
    return (group or get_communicator()).all_to_all(output, input, async_op=async_op)


def send(tensor, dst, group=None, async_op=False):
    return (group or get_communicator()).send(tensor, dst, async_op=async_op)


def recv(tensor, src, group=None, async_op=False):
    return (group or get_communicator()).recv(tensor, src, async_op=async_op)


# The collectives share their docstrings with Communicator's methods.
for _name in ("all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter",
              "all_to_all", "send", "recv", "barrier"):
    globals()[_name].__doc__ = getattr(Communicator, _name).__doc__ + \
        "\n\n(On the default communicator, or on ``group`` when given.)"
del _name

__all__ = [
    "Communicator", "DistributedError", "ReduceOp", "Work", "all_gather", "all_reduce",
    "all_to_all", "barrier", "broadcast", "destroy_process_group", "get_communicator",
    "get_rank", "get_world_size", "group", "init_process_group", "is_initialized", "recv",
    "reduce", "reduce_scatter", "send",
]
