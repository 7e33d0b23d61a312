"""Hosts as Linux network namespaces on one bridge: each namespace has its own loopback and one
veth link (eth0) with its own address in 10.N.0.0/24; the bridge in the root namespace holds
10.N.0.1, where PostgreSQL and RabbitMQ listen; the object store (an S3 server) is a host of its
own. The file system is not namespaced, so every host sees the same data root, as hosts mounting
one shared file system would. Needs root."""
import subprocess

# host -> last byte of its address (the root namespace, on the bridge, is .1)
ADDRESSES = {"web": 10, "ingest": 11, "archive": 12, "distribution": 13, "default": 14,
             "sm-silo1": 21, "sm-silo2": 22, "objects": 30, "client": 100}


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


class Network:
    """The namespaces `gcN-<host>` and bridge `gcN-br` of subnet 10.N.0.0/24."""

    def __init__(self, net=77):
        self.net, self.prefix = net, f"gc{net}"
        self.bridge = f"{self.prefix}-br"
        self.gateway = f"10.{net}.0.1"
        self.cidr = f"10.{net}.0.0/24"

    def ns(self, host):
        return f"{self.prefix}-{host}"

    def address(self, host):
        return f"10.{self.net}.0.{ADDRESSES[host]}"

    def create(self):
        self.destroy()  # what a run killed -9 left behind
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for index, host in enumerate(ADDRESSES):
            ns, outside, inside = self.ns(host), f"{self.prefix}v{index}", f"{self.prefix}p{index}"
            ip("netns", "add", ns)
            ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            ip("link", "set", inside, "netns", ns)
            ip("link", "set", outside, "master", self.bridge, "up")
            ip("-n", ns, "link", "set", inside, "name", "eth0")
            ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")

    def exec_argv(self, host, argv):
        return ["ip", "netns", "exec", self.ns(host), *argv]

    def pids(self, host):
        found = ip("netns", "pids", self.ns(host), check=False).stdout.split()
        return [int(p) for p in found]

    def kill_host(self, host):
        """kill -9 every process in the host's namespace, as a host losing power; returns
        how many there were."""
        import os
        import signal
        import time

        killed = 0
        for _ in range(50):  # a process forking as it dies leaves a child: look again
            pids = self.pids(host)
            if not pids:
                return killed
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"processes left in {self.ns(host)}: {self.pids(host)}")

    def addresses(self, host):
        """The host's IPv4 addresses by interface, as `ip -4 addr` in its namespace shows."""
        out = ip("-n", self.ns(host), "-4", "-o", "addr", "show").stdout
        return [f"{line.split()[1]} {line.split()[3]}" for line in out.splitlines()]

    def existing(self):
        return [line.split()[0] for line in ip("netns", "list", check=False).stdout.splitlines()
                if line.split() and line.split()[0].startswith(f"{self.prefix}-")]

    def destroy(self):
        """Kill every process in this network's namespaces, then remove them and the bridge
        (deleting a namespace deletes its veth end and the peer with it)."""
        for ns in self.existing():
            host = ns[len(self.prefix) + 1:]
            if host in ADDRESSES:
                self.kill_host(host)
            ip("netns", "del", ns, check=False)
        for index in range(len(ADDRESSES)):
            ip("link", "del", f"{self.prefix}v{index}", check=False)
        ip("link", "del", self.bridge, check=False)
