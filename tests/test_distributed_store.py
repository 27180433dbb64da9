"""tests/test_distributed_store.py: the rendezvous that carries NCCL's unique id (TCP store,
file store, init_method strings, the environment), all on the CPU."""

import os
import socket
import threading
import time

import pytest

from xpuruntime.distributed import DistributedError, _store
from xpuruntime.distributed._store import FileStore, TCPStore, exchange_unique_id, open_store


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def exchange(init_method, world_size, timeout=10.0):
    """Runs the id exchange as world_size ranks in threads; returns each rank's id."""
    results, errors = [None] * world_size, []

    def rank_main(rank):
        try:
            store = open_store(init_method, rank, world_size, timeout)
            try:
                results[rank] = exchange_unique_id(store, rank, "id", lambda: os.urandom(128))
            finally:
                # rank 0 closes last, as init_process_group does after every rank joined
                if rank == 0:
                    while any(r is None for r in results[1:]) and not errors:
                        time.sleep(0.01)
                store.close()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(world_size)]
    for t in reversed(threads):  # the clients first: they must wait for the server
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    return results


def test_tcp_store_hands_rank_0s_id_to_every_rank():
    ids = exchange(f"tcp://127.0.0.1:{free_port()}", 4)
    assert len(ids[0]) == 128 and all(i == ids[0] for i in ids)


def test_file_store_hands_rank_0s_id_to_every_rank_and_is_removed(tmp_path):
    path = tmp_path / "rendezvous"
    ids = exchange(f"file://{path}", 3)
    assert len(ids[0]) == 128 and all(i == ids[0] for i in ids)
    assert not path.exists()


def test_env_init_method_reads_master_addr_and_port(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    monkeypatch.delenv("TORCHELASTIC_USE_AGENT_STORE", raising=False)
    ids = exchange("env://", 2)
    assert ids[0] == ids[1]


def test_client_without_a_server_times_out_naming_the_address():
    port = free_port()
    store = TCPStore("127.0.0.1", port, False, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(DistributedError, match=f"127.0.0.1:{port}.*0.5 s"):
        store.get("id")
    assert time.monotonic() - start < 5


def test_get_of_a_key_never_set_times_out():
    port = free_port()
    server = TCPStore("127.0.0.1", port, True, timeout=5)
    try:
        client = TCPStore("127.0.0.1", port, False, timeout=0.5)
        with pytest.raises(DistributedError, match="never published"):
            client.get("missing")
        client.close()
        server.timeout = 0.3  # the server's own get waits as long
        with pytest.raises(DistributedError, match="did not come"):
            server.get("missing")
    finally:
        server.close()


def test_file_store_times_out_when_rank_0_never_writes(tmp_path):
    with pytest.raises(DistributedError, match="within 0.3 s"):
        FileStore(str(tmp_path / "never"), timeout=0.3).get("id")


def test_serving_a_taken_port_says_so():
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        with pytest.raises(DistributedError, match="MASTER_PORT"):
            TCPStore("127.0.0.1", taken.getsockname()[1], True, timeout=1)


@pytest.mark.parametrize("init_method", [
    "foo://x", "tcp://127.0.0.1", "tcp://:1234", "file://", "127.0.0.1:1234",
])
def test_bad_init_method_is_a_value_error(init_method):
    with pytest.raises(ValueError, match="init_method"):
        open_store(init_method, 0, 2, 1.0)


def test_init_method_must_be_a_string():
    with pytest.raises(TypeError):
        open_store(1234, 0, 2, 1.0)


def test_env_init_method_names_the_missing_variables(monkeypatch):
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.delenv("MASTER_PORT", raising=False)
    with pytest.raises(ValueError, match="MASTER_ADDR and MASTER_PORT"):
        open_store("env://", 0, 2, 1.0)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "http")
    with pytest.raises(ValueError, match="MASTER_PORT='http'"):
        open_store("env://", 0, 2, 1.0)


def test_env_int_prefers_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv("RANK", "3")
    assert _store.env_int("RANK", None) == 3
    assert _store.env_int("RANK", 1) == 1
    monkeypatch.delenv("RANK")
    with pytest.raises(ValueError, match="RANK is not set"):
        _store.env_int("RANK", None)
    monkeypatch.setenv("RANK", "one")
    with pytest.raises(ValueError, match="not an integer"):
        _store.env_int("RANK", None)
