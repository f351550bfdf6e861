"""A client that knows no ctxsel .proto: it asks the server's reflection
service (grpc.reflection.v1alpha, the one gRPC 1.51's C++ plugin serves)
which services it has, fetches their descriptors, builds the messages from
them and registers a variant, reports a node and calls Select. Only the
reflection protocol's own stubs are generated, from Debian's grpc-proto.

usage: /usr/bin/python3 reflection_client.py SERVER WORK_DIR
Prints the services, then "reflection client ok"; exits 0.
"""
import os
import subprocess
import sys

import grpc
from google.protobuf import descriptor_pb2
from google.protobuf import descriptor_pool
from google.protobuf import json_format
from google.protobuf import message_factory

REFLECTION_PROTO_ROOT = "/usr/share/grpc-proto"
REFLECTION_PROTO = "grpc/reflection/v1alpha/reflection.proto"


def reflection_stubs(work_dir):
    # Generated under a file name of its own: at grpc/reflection/... the
    # module would hide behind the installed `grpc` package. The proto
    # package, and so the service's name on the wire, stays the same.
    with open(os.path.join(REFLECTION_PROTO_ROOT, REFLECTION_PROTO)) as f:
        text = f.read()
    with open(os.path.join(work_dir, "reflection_v1alpha.proto"), "w") as f:
        f.write(text)
    code = subprocess.call([
        "protoc", "-I" + work_dir, "--python_out=" + work_dir,
        "--grpc_python_out=" + work_dir,
        "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
        os.path.join(work_dir, "reflection_v1alpha.proto")
    ])
    if code != 0:
        sys.exit("protoc failed: %d" % code)
    sys.path.insert(0, work_dir)
    import reflection_v1alpha_pb2
    import reflection_v1alpha_pb2_grpc
    return reflection_v1alpha_pb2, reflection_v1alpha_pb2_grpc


def ask(stub, pb, **request):
    [answer] = list(stub.ServerReflectionInfo(
        iter([pb.ServerReflectionRequest(**request)]), timeout=10))
    assert not answer.HasField("error_response"), answer.error_response
    return answer


def load_pool(stub, pb, symbol):
    """A DescriptorPool with the file defining `symbol` and its imports."""
    files = {}
    pending = [("file_containing_symbol", symbol)]
    while pending:
        kind, name = pending.pop()
        answer = ask(stub, pb, **{kind: name})
        for raw in answer.file_descriptor_response.file_descriptor_proto:
            proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
            if proto.name in files:
                continue
            files[proto.name] = proto
            pending.extend(("file_by_filename", dep)
                           for dep in proto.dependency if dep not in files)
    pool = descriptor_pool.DescriptorPool()
    added = set()
    while len(added) < len(files):  # imports before their importers
        for name, proto in files.items():
            if name not in added and all(d in added for d in proto.dependency):
                pool.Add(proto)
                added.add(name)
    return pool


def message_class(pool, full_name):
    descriptor = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def call(channel, pool, service, method, request_json):
    """Calls service.method with a request built from JSON; returns the
    reply as a dict."""
    m = pool.FindServiceByName(service).FindMethodByName(method)
    request_class = message_class(pool, m.input_type.full_name)
    reply_class = message_class(pool, m.output_type.full_name)
    invoke = channel.unary_unary(
        "/%s/%s" % (service, method),
        request_serializer=lambda msg: msg.SerializeToString(),
        response_deserializer=reply_class.FromString)
    request = json_format.ParseDict(request_json, request_class())
    return json_format.MessageToDict(invoke(request, timeout=10))


def main():
    server, work_dir = sys.argv[1:3]
    pb, rpc = reflection_stubs(work_dir)
    channel = grpc.insecure_channel(server)
    stub = rpc.ServerReflectionStub(channel)

    services = sorted(s.name for s in ask(
        stub, pb, list_services="").list_services_response.service)
    print("services:", " ".join(services))
    for wanted in ("ctxsel.v1.Inventory", "ctxsel.v1.Placement",
                   "ctxsel.v1.Variants", "grpc.health.v1.Health"):
        assert wanted in services, services

    pool = load_pool(stub, pb, "ctxsel.v1.Placement")
    call(channel, pool, "ctxsel.v1.Variants", "RegisterVariants", {
        "kernel": "saxpy",
        "variants": [{"name": "saxpy_nv", "selector": "device={arch(nvptx)}"}],
    })
    call(channel, pool, "ctxsel.v1.Inventory", "ReportNode", {"node": {
        "id": "reflected",
        "devices": [{"index": 0, "traits": {
            "kind": ["gpu", "nohost"], "arch": ["nvptx"]}}],
    }})
    answer = call(channel, pool, "ctxsel.v1.Placement", "Select", {
        "job": {"kernel": "saxpy", "construct": [{"name": "target"}]}})
    assert answer["placement"]["variant"] == "saxpy_nv", answer
    assert answer["placement"]["device"]["id"] == "reflected/gpu0", answer
    print("reflection client ok")


if __name__ == "__main__":
    main()
