"""Python stubs for ctxsel.v1 and google.rpc, generated at test time with
Debian's protoc (3.21) and /usr/bin/grpc_python_plugin. (The protoc bundled
in Debian's grpc_tools 1.14 predates proto3 `optional`, which ctxsel.proto
uses.) Import this module from scripts run with /usr/bin/python3.
"""
import os
import subprocess
import sys


def generate(out_dir, proto_root, googleapis_root):
    """Writes ctxsel/v1/ctxsel_pb2*.py and google/rpc/*_pb2.py under out_dir
    and puts out_dir first on sys.path."""
    protos = [
        (proto_root, "ctxsel/v1/ctxsel.proto"),
        (googleapis_root, "google/rpc/status.proto"),
        (googleapis_root, "google/rpc/error_details.proto"),
    ]
    for root, proto in protos:
        code = subprocess.call([
            "protoc", "-I" + root, "-I/usr/include",
            "--python_out=" + out_dir, "--grpc_python_out=" + out_dir,
            "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
            os.path.join(root, proto)
        ])
        if code != 0:
            sys.exit("protoc failed on %s: %d" % (proto, code))
    # `google` is a namespace package (no __init__.py, here or in Debian's
    # python3-protobuf), so google.rpc from out_dir and google.protobuf from
    # dist-packages import side by side.
    sys.path.insert(0, out_dir)
