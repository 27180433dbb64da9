"""python/xpuruntime/distributed/_communicator.py: Communicator (one rank of an NCCL
communicator), its collectives on tensors, Work handles and ``group()``.

Note [Streams and handles]: a collective is queued on the calling thread's current stream
of the communicator's device, like every other op, and the call returns at once.
``async_op=False`` (the default) returns None: later work on the same stream sees the
result, as with any op. ``async_op=True`` returns a Work: an event recorded behind the
collective. ``Work.wait()`` makes the *current* stream wait for it (no host wait; this is
what matters after switching streams), ``Work.is_completed()`` asks without waiting, and
``Work.synchronize()`` waits on the host and raises as soon as the communicator fails.
Inputs may be xpuruntime Tensors or any DLPack CUDA tensor (PyTorch, CuPy, ...), imported
without a copy through ``xrt.from_dlpack`` (the producer's stream is ordered before ours by
the DLPack handshake); results land in the caller's memory.
"""

import threading

from .. import _core
from .._core import Tensor
from ._store import DistributedError

_cuda = _core._cuda
ReduceOp = _cuda.ReduceOp

DEFAULT_TIMEOUT = 600.0  # seconds, as torch.distributed's NCCL default (10 minutes)


def timeout_seconds(timeout):
    """Seconds from a number or a datetime.timedelta; None means the default."""
    if timeout is None:
        return DEFAULT_TIMEOUT
    if hasattr(timeout, "total_seconds"):
        return float(timeout.total_seconds())
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        return float(timeout)
    raise TypeError(f"timeout must be seconds or a datetime.timedelta, got {timeout!r}")


def device_index(device):
    """The CUDA device index of None (the current device), an int, "cuda:N" or a Device."""
    if device is None:
        return _cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = _core.Device(device) if isinstance(device, str) else device
    if not isinstance(d, _core.Device) or d.type != "cuda":
        raise ValueError(f"a communicator needs a CUDA device, got {device!r}")
    return d.index


def as_tensor(obj, what):
    """obj as an xpuruntime Tensor: itself, or a DLPack producer imported without a copy."""
    if isinstance(obj, Tensor):
        return obj
    if hasattr(obj, "__dlpack__"):
        return _core.from_dlpack(obj)
    raise TypeError(f"{what} must be an xpuruntime Tensor or a DLPack tensor (torch, CuPy, "
                    f"...), got {type(obj).__name__}")


class _GroupState(threading.local):
    depth = 0
    works = None  # Works created inside the outermost group, recorded at its end


_group = _GroupState()


class Work:
    """A queued collective (see Note [Streams and handles])."""

    __slots__ = ("_communicator", "_event", "_keep", "_stream")

    def __init__(self, communicator, stream, keep):
        self._communicator = communicator
        self._keep = keep  # the tensors, alive until the work is known to be done
        self._stream = stream
        self._event = _cuda.Event()
        if _group.depth:
            _group.works.append(self)  # recorded at the group's end, behind the launch
        else:
            self._event.record(stream)

    def wait(self, timeout=None):
        """Makes the current stream wait for the collective (no host wait); raises when
        the communicator failed. Returns True, as torch's Work.wait does."""
        self._communicator._native.check()
        self._event.wait(_cuda.current_stream(self._stream.device))
        return True

    def is_completed(self):
        """True when the collective finished; raises when the communicator failed."""
        done = self._event.query()
        if not done:
            self._communicator._native.check()
        else:
            self._keep = None
        return done

    def synchronize(self):
        """Waits on the host for the collective (without the GIL); raises XpuRuntimeError
        (CudaError) as soon as the communicator fails or times out."""
        self._communicator._native.wait_event(self._event)
        self._keep = None


class group:
    """``with group():`` batches the collectives inside (ncclGroupStart/End), as
    point-to-point patterns need; they start together when the outermost block ends.

    Note: an error inside the block still ends the group (NCCL's group depth must stay
    balanced), so the collectives queued before the error run.
    """

    def __enter__(self):
        _cuda.nccl_group_start()
        if _group.depth == 0:
            _group.works = []
        _group.depth += 1
        return self

    def __exit__(self, *exc):
        _group.depth -= 1
        try:
            _cuda.nccl_group_end()
        finally:
            if _group.depth == 0:
                works, _group.works = _group.works, None
                for work in works:
                    work._event.record(work._stream)
        return False


class Communicator:
    """One rank of an NCCL communicator on one CUDA device.

    ``Communicator(unique_id, world_size, rank, device=None, timeout=600)`` joins the
    communicator that ``unique_id`` (128 bytes from ``unique_id()`` on one rank) names;
    every rank calls it, each in its own process (or thread). It blocks until all have
    joined. ``timeout`` (seconds or a timedelta) bounds the join and every collective: a
    watchdog aborts the communicator when a collective does not finish in time or NCCL
    reports an error, and every later call raises CudaError with the reason (Note [Failing
    ranks] in cpp/include/xpuruntime/cuda/collectives.h).
    """

    def __init__(self, unique_id, world_size, rank, device=None, timeout=None):
        device = device_index(device)
        self._native = _cuda.NcclCommunicator(bytes(unique_id), world_size, rank, device,
                                              timeout_seconds(timeout))
        self._barrier = None

    @staticmethod
    def unique_id():
        """A fresh 128-byte NCCL unique id."""
        return _cuda.nccl_unique_id()

    @classmethod
    def from_torch_process_group(cls, process_group=None, device=None, timeout=None):
        """A communicator over the ranks of a torch.distributed process group (the default
        group when None): the id travels through torch (``broadcast_object_list``), so any
        torch backend bootstraps it. Imports torch only here."""
        import torch.distributed as torch_dist

        if not torch_dist.is_initialized():
            raise DistributedError("torch.distributed is not initialized")
        rank = torch_dist.get_rank(process_group)
        world_size = torch_dist.get_world_size(process_group)
        holder = [cls.unique_id() if rank == 0 else None]
        src = torch_dist.get_global_rank(process_group, 0) if process_group is not None else 0
        torch_dist.broadcast_object_list(holder, src=src, group=process_group)
        return cls(holder[0], world_size, rank, device, timeout)

    rank = property(lambda self: self._native.rank)
    world_size = property(lambda self: self._native.world_size)
    device = property(lambda self: _core.Device("cuda", self._native.device))

    def error(self):
        """Why the communicator failed ('' while it works)."""
        return self._native.error()

    def abort(self):
        """Gives up at once: queued collectives return early, later calls raise."""
        self._native.abort()

    def destroy(self):
        """Waits for the queued collectives (up to the timeout) and frees the communicator."""
        self._native.destroy()

    def __repr__(self):
        return (f"<xpuruntime.distributed.Communicator rank {self.rank} of {self.world_size}"
                f" on {self.device}>")

    # ---- collectives (Note [Streams and handles]) -------------------------------------

    def _stream(self):
        return _cuda.current_stream(self._native.device)

    def _done(self, stream, async_op, *keep):
        return Work(self, stream, keep) if async_op else None

    def all_reduce(self, tensor, op=ReduceOp.SUM, *, async_op=False):
        """Reduces tensor across the ranks, in place."""
        t = as_tensor(tensor, "tensor")
        s = self._stream()
        self._native.all_reduce(t, t, op, s)
        return self._done(s, async_op, t)

    def broadcast(self, tensor, src, *, async_op=False):
        """Copies tensor of rank src into tensor of every rank."""
        t = as_tensor(tensor, "tensor")
        s = self._stream()
        self._native.broadcast(t, t, src, s)
        return self._done(s, async_op, t)

    def reduce(self, tensor, dst, op=ReduceOp.SUM, *, async_op=False):
        """Reduces tensor across the ranks into tensor of rank dst (the others' unchanged)."""
        t = as_tensor(tensor, "tensor")
        s = self._stream()
        self._native.reduce(t, t, op, dst, s)
        return self._done(s, async_op, t)

    def all_gather(self, output, tensor, *, async_op=False):
        """Every rank's tensor into output: one tensor of shape (world_size * n0, ...) or
        (world_size, *tensor.shape), or a list of world_size tensors shaped like tensor."""
        t = as_tensor(tensor, "tensor")
        s = self._stream()
        if isinstance(output, (list, tuple)):
            outs = self._parts(output, "output")
            with group():  # one broadcast per rank, straight into each part
                for root, out in enumerate(outs):
                    self._native.broadcast(t, out, root, s)
            return self._done(s, async_op, t, *outs)
        out = as_tensor(output, "output")
        self._native.all_gather(t, out, s)
        return self._done(s, async_op, t, out)

    def reduce_scatter(self, output, input, op=ReduceOp.SUM, *, async_op=False):
        """Reduces input across the ranks and leaves block r of the result on rank r: input
        is one tensor of shape (world_size * n0, ...) or (world_size, *output.shape), or a
        list of world_size tensors shaped like output."""
        out = as_tensor(output, "output")
        s = self._stream()
        if isinstance(input, (list, tuple)):
            parts = self._parts(input, "input")
            with group():  # one reduce per rank, straight from each part
                for root, part in enumerate(parts):
                    self._native.reduce(part, out, op, root, s)
            return self._done(s, async_op, out, *parts)
        inp = as_tensor(input, "input")
        self._native.reduce_scatter(inp, out, op, s)
        return self._done(s, async_op, out, inp)

    def all_to_all(self, output, input, *, async_op=False):
        """Block i of input's first axis goes to rank i; block j of output comes from rank j
        (torch's all_to_all_single with equal splits)."""
        out, inp = as_tensor(output, "output"), as_tensor(input, "input")
        s = self._stream()
        self._native.all_to_all(inp, out, s)
        return self._done(s, async_op, out, inp)

    def send(self, tensor, dst, *, async_op=False):
        """Sends tensor to rank dst (which calls recv); pair sends and recvs in group()."""
        t = as_tensor(tensor, "tensor")
        s = self._stream()
        self._native.send(t, dst, s)
        return self._done(s, async_op, t)

    def recv(self, tensor, src, *, async_op=False):
        """Receives into tensor from rank src."""
        t = as_tensor(tensor, "tensor")
        s = self._stream()
        self._native.recv(t, src, s)
        return self._done(s, async_op, t)

    def barrier(self):
        """Returns once every rank has reached it: a one-element all-reduce the host waits
        for (raising when the communicator fails or times out)."""
        if self._barrier is None:
            self._barrier = _core.zeros((1,), dtype=_core.int32,
                                        device=_core.Device("cuda", self._native.device))
        s = self._stream()
        self._native.all_reduce(self._barrier, self._barrier, ReduceOp.SUM, s)
        Work(self, s, ()).synchronize()

    def _parts(self, tensors, what):
        if len(tensors) != self.world_size:
            raise ValueError(f"{what} has {len(tensors)} tensors, the communicator "
                             f"{self.world_size} ranks")
        return [as_tensor(x, what) for x in tensors]
