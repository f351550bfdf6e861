"""Generates the package's stubs: ctxsel/v1/ctxsel_pb2{,_grpc}.py and
_rpc/{status,error_details}_pb2.py under a package directory. Used by
setup.py at build time; importing it needs nothing generated."""
import os
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))


def _root(variable, default, probe):
    root = os.environ.get(variable, default)
    if not os.path.exists(os.path.join(root, probe)):
        raise SystemExit("%s: %s not found under %s" % (variable, probe, root))
    return root


def generate(package_dir):
    proto_root = _root("CTXSEL_PROTO_ROOT", os.path.join(_REPO, "proto"),
                       "ctxsel/v1/ctxsel.proto")
    googleapis_root = _root(
        "CTXSEL_GOOGLEAPIS_ROOT",
        os.path.join(_REPO, "third_party", "googleapis"),
        "google/rpc/status.proto")
    protoc = os.environ.get("PROTOC", "protoc")
    plugin = os.environ.get("GRPC_PYTHON_PLUGIN", "/usr/bin/grpc_python_plugin")
    # ctxsel/v1/... lands inside the package directory's parent, which is
    # the `ctxsel` package itself: modules ctxsel.v1.ctxsel_pb2{,_grpc}.
    parent = os.path.dirname(os.path.abspath(package_dir))
    subprocess.run([
        protoc, "-I" + proto_root, "-I/usr/include", "--python_out=" + parent,
        "--grpc_python_out=" + parent,
        "--plugin=protoc-gen-grpc_python=" + plugin,
        os.path.join(proto_root, "ctxsel/v1/ctxsel.proto")
    ], check=True)
    open(os.path.join(package_dir, "v1", "__init__.py"), "a").close()
    # google.rpc under the package (ctxsel._rpc), so that it needs no
    # googleapis package; its files import only google.protobuf.
    rpc_dir = os.path.join(package_dir, "_rpc")
    os.makedirs(rpc_dir, exist_ok=True)
    open(os.path.join(rpc_dir, "__init__.py"), "a").close()
    for proto in ("status", "error_details"):
        subprocess.run([
            protoc, "-I" + googleapis_root, "-I/usr/include",
            "--python_out=" + rpc_dir,
            os.path.join(googleapis_root, "google/rpc/%s.proto" % proto)
        ], check=True)
        os.replace(os.path.join(rpc_dir, "google", "rpc", proto + "_pb2.py"),
                   os.path.join(rpc_dir, proto + "_pb2.py"))
