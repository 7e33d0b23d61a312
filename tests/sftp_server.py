"""A real SFTP server for the tests: asyncssh on 127.0.0.1 on an ephemeral port, in a thread of
its own, confined to a root folder (chroot-style), with a generated host key and only the
public keys it is given as authorized_keys. It can be stopped and started again on the same
port, and made to drop the connection part way through an upload (drop_after_bytes) or to
acknowledge writes it does not keep (lose_after_bytes)."""
import asyncio
import threading

import asyncssh


class SftpServer:
    def __init__(self, root):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.port = 0
        self.drop_after_bytes = self.lose_after_bytes = None
        self._acceptor = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="test-sftp-server")
        self._thread.start()

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=30)

    @property
    def known_hosts_line(self):
        """The server's key as `ssh-keyscan -p PORT 127.0.0.1` prints it."""
        return f"[127.0.0.1]:{self.port} {self.host_key.export_public_key().decode().strip()}"

    def start(self, authorized_keys):
        """Listen (on the port of the last start, if any), accepting only `authorized_keys`."""
        async def listen():
            return await asyncssh.create_server(
                asyncssh.SSHServer, "127.0.0.1", self.port, server_host_keys=[self.host_key],
                authorized_client_keys=asyncssh.import_authorized_keys(authorized_keys),
                sftp_factory=lambda channel: _Sftp(channel, self), reuse_address=True)

        self._acceptor = self._run(listen())
        self.port = self._acceptor.get_port()
        return self

    def stop(self):
        async def close():
            self._acceptor.close()
            await self._acceptor.wait_closed()

        if self._acceptor is not None:
            self._run(close())
            self._acceptor = None

    def close(self):
        """Stop listening, end the sessions still open, and the thread."""
        async def end_sessions():
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.stop()
        self._run(end_sessions())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def files(self):
        """Every file under the root, by its path relative to the root."""
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())


class _Sftp(asyncssh.SFTPServer):
    def __init__(self, channel, server):
        super().__init__(channel, chroot=str(server.root))
        self._server = server
        self._written = 0

    def write(self, file_obj, offset, data):
        self._written += len(data)
        server = self._server
        if server.drop_after_bytes is not None and self._written > server.drop_after_bytes:
            self.connection.abort()
            raise asyncssh.SFTPConnectionLost("the test server dropped the connection")
        if server.lose_after_bytes is not None and self._written > server.lose_after_bytes:
            return len(data)
        return super().write(file_obj, offset, data)
