"""python/xpuruntime/distributed/_store.py: the rendezvous: how the 128-byte NCCL unique id
made by rank 0 reaches the other ranks (a small TCP store of our own, a shared file, or the
store of torchrun's agent), and the ``init_method`` strings that choose among them.

Note [Rendezvous]: the store carries one value per communicator and lives only while the
communicator is made: rank 0 serves (or writes the file), every other rank connects with
retries until the timeout, reads the id and leaves; rank 0 closes the server (removes the
file) once its own init returns, since by then every rank has joined and therefore has read
the id. So MASTER_PORT is free again after ``init_process_group`` (torch.distributed may
take it next). The store trusts its network, as torch's and CuPy's do: run it inside the
cluster only.
"""

import os
import socket
import socketserver
import struct
import threading
import time
import urllib.parse

from .._core import XpuRuntimeError


class DistributedError(XpuRuntimeError):
    """A rendezvous or communicator failure (a timeout, a rank that never came)."""


_GET, _SET = b"G", b"S"


def _read_exactly(sock, n):
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the store's peer closed the connection")
        data += chunk
    return bytes(data)


def _send_frame(sock, *parts):
    sock.sendall(b"".join(struct.pack("!I", len(p)) + p for p in parts))


def _read_frame(sock):
    (n,) = struct.unpack("!I", _read_exactly(sock, 4))
    return _read_exactly(sock, n)


class _Handler(socketserver.BaseRequestHandler):
    # One connection: requests until the client closes. GET waits for the key.
    def handle(self):
        store = self.server.store
        try:
            while True:
                command = _read_frame(self.request)
                key = _read_frame(self.request).decode()
                if command == _SET:
                    value = _read_frame(self.request)
                    with store.cond:
                        store.values[key] = value
                        store.cond.notify_all()
                    _send_frame(self.request, b"ok")
                elif command == _GET:
                    with store.cond:
                        while key not in store.values and not store.closed:
                            store.cond.wait(0.5)
                        value = store.values.get(key)
                    if value is None:
                        return
                    _send_frame(self.request, value)
                else:
                    return
        except (ConnectionError, OSError, struct.error):
            return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class TCPStore:
    """A key-value store over TCP: ``is_server`` hosts it on ``port`` (every interface),
    the others connect to ``host:port``, retrying until ``timeout`` seconds pass.

    ``get(key)`` waits for the key; a DistributedError says which address and how long when
    the server never answers or the key never comes.
    """

    def __init__(self, host, port, is_server, timeout):
        self.host, self.port, self.timeout = host, int(port), float(timeout)
        self.values, self.cond, self.closed = {}, threading.Condition(), False
        self._server = self._sock = None
        if is_server:
            try:
                self._server = _Server(("", self.port), _Handler)
            except OSError as e:
                raise DistributedError(
                    f"cannot serve the rendezvous on port {self.port}: {e.strerror or e} "
                    "(is MASTER_PORT taken? pick another)") from None
            self._server.store = self
            self.port = self._server.server_address[1]
            threading.Thread(target=self._server.serve_forever, args=(0.1,),
                             name="xpuruntime-store", daemon=True).start()

    def _connect(self):
        if self._sock is not None:
            return self._sock
        deadline = time.monotonic() + self.timeout
        last = None
        while time.monotonic() < deadline:
            try:
                self._sock = socket.create_connection(
                    (self.host, self.port), timeout=max(0.1, deadline - time.monotonic()))
                return self._sock
            except OSError as e:  # not up yet: refused, unreachable, name not resolved yet
                last = e
                time.sleep(0.05)
        raise DistributedError(
            f"no rendezvous server answered at {self.host}:{self.port} within "
            f"{self.timeout:g} s (is rank 0 running, and MASTER_ADDR/MASTER_PORT right?)"
            + (f": {last}" if last else ""))

    def set(self, key, value):
        if self._server is not None:
            with self.cond:
                self.values[key] = bytes(value)
                self.cond.notify_all()
            return
        sock = self._connect()
        _send_frame(sock, _SET, key.encode(), bytes(value))
        _read_frame(sock)

    def get(self, key):
        if self._server is not None:
            with self.cond:
                if not self.cond.wait_for(lambda: key in self.values, self.timeout):
                    raise DistributedError(f"the key {key!r} did not come within "
                                           f"{self.timeout:g} s")
                return self.values[key]
        start = time.monotonic()
        sock = self._connect()
        sock.settimeout(max(0.1, self.timeout - (time.monotonic() - start)))
        try:
            _send_frame(sock, _GET, key.encode())
            return _read_frame(sock)
        except (socket.timeout, TimeoutError):
            raise DistributedError(
                f"waited {self.timeout:g} s at {self.host}:{self.port} for {key!r}: rank 0 "
                "never published it") from None
        except (ConnectionError, OSError) as e:
            raise DistributedError(f"the rendezvous server at {self.host}:{self.port} went "
                                   f"away: {e}") from None

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class FileStore:
    """The id in a file every rank can read (a shared file system): rank 0 writes it
    atomically, the others poll until it appears or ``timeout`` passes.

    Note: the file must not exist when the job starts (as with torch's FileStore): a stale
    one would hand out an old id. Rank 0 removes it once every rank has joined.
    """

    def __init__(self, path, timeout):
        self.path, self.timeout = path, float(timeout)
        self._wrote = False

    def set(self, key, value):
        self._wrote = True
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(key.encode() + b"\n" + bytes(value))
        os.replace(tmp, self.path)

    def get(self, key):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                with open(self.path, "rb") as f:
                    head, sep, value = f.read().partition(b"\n")
                if sep and head.decode() == key:
                    return value
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                raise DistributedError(f"{self.path} did not receive the id from rank 0 "
                                       f"within {self.timeout:g} s")
            time.sleep(0.02)

    def close(self):
        if not self._wrote:
            return
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass


class _TorchStore:
    # torchrun's agent store (a torch TCPStore) or a torch process group's store.
    def __init__(self, store):
        self.store = store

    def set(self, key, value):
        self.store.set(key, bytes(value))

    def get(self, key):
        try:
            return bytes(self.store.get(key))
        except Exception as e:  # torch's DistStoreError on a timeout
            raise DistributedError(f"waiting in torch's store for {key!r}: {e}") from None

    def close(self):
        pass


def env_int(name, given, default=None):
    """An int argument, else the environment variable name, else default (ValueError
    naming the variable when none of them is there)."""
    if given is not None:
        return int(given)
    value = os.environ.get(name)
    if value is None:
        if default is not None:
            return default
        raise ValueError(f"{name} is not set: pass it as an argument or set the environment "
                         "variable (torchrun and `python -m xpuruntime.distributed.run` do)")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


def open_store(init_method, rank, world_size, timeout):
    """The store init_method names, as rank of world_size: "env://" (MASTER_ADDR,
    MASTER_PORT; torchrun's agent store when torchrun started us), "tcp://host:port" or
    "file:///path". ValueError for anything else."""
    if not isinstance(init_method, str):
        raise TypeError(f"init_method must be a string, got {type(init_method).__name__}")
    url = urllib.parse.urlsplit(init_method)
    if url.scheme == "env":
        host = os.environ.get("MASTER_ADDR")
        port = os.environ.get("MASTER_PORT")
        if host is None or port is None:
            missing = " and ".join(n for n, v in (("MASTER_ADDR", host), ("MASTER_PORT", port))
                                   if v is None)
            raise ValueError(f"init_method='env://' needs {missing} in the environment")
        if os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true":
            # torchrun's agent already serves MASTER_PORT: talk to its store.
            import datetime

            from torch.distributed import TCPStore as _TorchTCPStore

            return _TorchStore(_TorchTCPStore(
                host, int(port), world_size, is_master=False,
                timeout=datetime.timedelta(seconds=timeout)))
        return TCPStore(host, _port(port, init_method), rank == 0, timeout)
    if url.scheme == "tcp":
        if not url.hostname or url.port is None:
            raise ValueError(f"init_method {init_method!r} must be tcp://host:port")
        return TCPStore(url.hostname, url.port, rank == 0, timeout)
    if url.scheme == "file":
        path = url.path
        if not path:
            raise ValueError(f"init_method {init_method!r} names no file (file:///path)")
        return FileStore(path, timeout)
    raise ValueError(f"init_method {init_method!r} is not env://, tcp://host:port or "
                     "file:///path")


def _port(value, init_method):
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port < 65536:
        raise ValueError(f"MASTER_PORT={value!r} is not a port number ({init_method})")
    return port


def exchange_unique_id(store, rank, key, make_id):
    """Rank 0 makes the id (make_id()) and publishes it under key; the others read it."""
    if rank == 0:
        unique_id = bytes(make_id())
        store.set(key, unique_id)
        return unique_id
    return store.get(key)
