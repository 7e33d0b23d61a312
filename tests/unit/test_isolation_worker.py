"""backend.isolation.Worker: one forked child serves job after job, and each job keeps its own
limits (time, memory); a child that failed, was killed or served its quota is replaced. Real
processes, real signals; nothing is timed (a limit is only ever exceeded by a wide margin)."""
import os
import signal
import socket
import time

import pytest

from backend import isolation

MIB = 1 << 20


def pid(_path):
    return os.getpid()


def sleep(seconds):
    time.sleep(float(seconds))
    return os.getpid()


def refuse(path):
    raise LookupError(f"{path} is not ours")


def die(_path):
    os.kill(os.getpid(), signal.SIGKILL)


def allocate(mib):
    block = bytearray(int(mib) * MIB)    # touched: the pages are really taken
    block[::4096] = b"x" * len(block[::4096])
    return os.getpid()


@pytest.fixture
def worker():
    made = isolation.Worker(256 * MIB, refusals=(LookupError,), max_jobs=5)
    yield made
    made.close()


def test_jobs_run_one_after_another_in_one_child_not_in_the_caller(worker):
    first = worker.run(pid, "a", 30)
    assert first != os.getpid()
    assert [worker.run(pid, "b", 30) for _ in range(3)] == [first] * 3


def test_a_child_that_served_its_quota_of_jobs_is_replaced(worker):
    pids = [worker.run(pid, "a", 30) for _ in range(6)]
    assert len(set(pids[:5])) == 1 and pids[5] != pids[0]


def test_a_job_past_its_time_limit_is_killed_and_the_next_job_gets_a_new_child(worker):
    before = worker.run(pid, "a", 30)
    with pytest.raises(isolation.ReadError, match="still being read after 0.2 s"):
        worker.run(sleep, "30", 0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)      # killed and reaped, not left a zombie
    assert worker.run(pid, "a", 30) not in (before, os.getpid())


def test_a_refusal_comes_back_with_its_text_and_the_child_is_not_reused(worker):
    before = worker.run(pid, "a", 30)
    with pytest.raises(isolation.ReadError, match="^x.nc is not ours$"):
        worker.run(refuse, "x.nc", 30)
    assert worker.run(pid, "a", 30) != before


def test_a_child_killed_mid_job_is_a_read_error_and_the_worker_goes_on(worker):
    with pytest.raises(isolation.ReadError, match=r"without an answer \(signal 9\)"):
        worker.run(die, "a", 30)
    assert worker.run(pid, "a", 30) != os.getpid()


def test_a_child_gone_between_jobs_is_replaced_before_the_next_one(worker):
    before = worker.run(pid, "a", 30)
    os.kill(before, signal.SIGKILL)
    # gone, not just signalled: wait for its exit without reaping it (the worker still owns it)
    os.waitid(os.P_PID, before, os.WEXITED | os.WNOWAIT)
    assert worker.run(pid, "a", 30) not in (before, os.getpid())


def test_the_memory_limit_holds_per_job_not_for_the_child_s_whole_life(worker):
    # 160 MiB each: two of them would pass the 256 MiB limit if the child kept the first
    first = worker.run(allocate, "160", 60)
    assert worker.run(allocate, "160", 60) == first
    with pytest.raises(isolation.ReadError, match="needs more than 256 MiB"):
        worker.run(allocate, "400", 60)
    assert worker.run(allocate, "160", 60) != first


def test_the_child_holds_none_of_the_caller_s_connections(worker):
    mine, peer = socket.socketpair()
    worker.run(pid, "a", 30)            # the child starts while `mine` is open
    mine.close()
    peer.settimeout(10)
    assert peer.recv(1) == b""          # closed for the peer: no copy lives on in the child
    peer.close()


def test_a_process_forked_with_a_worker_starts_a_child_of_its_own(worker):
    parent_child = worker.run(pid, "a", 30)
    read, write = os.pipe()
    forked = os.fork()
    if forked == 0:
        os.close(read)
        try:
            answer = worker.run(pid, "b", 30)
            os.write(write, str(answer).encode())
        finally:
            os._exit(0)
    os.close(write)
    answer = int(os.read(read, 64))
    os.close(read)
    os.waitpid(forked, 0)
    assert answer not in (parent_child, forked)
    assert worker.run(pid, "a", 30) == parent_child
