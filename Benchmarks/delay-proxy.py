#!/usr/bin/env python3
"""A TCP proxy that delays every chunk by DELAY_MS in each direction (a network round trip is felt).

    delay-proxy.py TARGET_HOST TARGET_PORT DELAY_MS

Listens on a free port of 127.0.0.1, prints it on the first line of stdout, then forwards each connection to
TARGET_HOST:TARGET_PORT, holding every chunk DELAY_MS (order kept), until stdin closes. Started by
`securestore-bench --concurrency` for the PostgreSQL row "behind a 1 ms proxy"; standard library only.
"""
import asyncio
import sys


async def pipe(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def feed():
        while True:
            try:
                data = await reader.read(65536)
            except (ConnectionError, OSError):
                data = b""
            queue.put_nowait((loop.time() + delay, data))
            if not data:
                return

    async def drain():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                try:
                    writer.close()
                except OSError:
                    pass
                return
            try:
                writer.write(data)
                await writer.drain()
            except (ConnectionError, OSError):
                return

    await asyncio.gather(feed(), drain())


async def main():
    host, port, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000.0

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(host, port)
        except OSError:
            client_writer.close()
            return
        sock = server_writer.get_extra_info("socket")
        if sock is not None:
            import socket
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        csock = client_writer.get_extra_info("socket")
        if csock is not None:
            import socket
            csock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pipe(client_reader, server_writer, delay), pipe(server_reader, client_writer, delay))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, _context: None)   # connections cut at shutdown are no news
    stdin_closed = loop.create_future()

    def watch():
        sys.stdin.read()   # returns when the benchmark closes our stdin (or exits)
        loop.call_soon_threadsafe(stdin_closed.set_result, None)

    loop.run_in_executor(None, watch)
    async with server:
        await stdin_closed


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
