"""grpc_proto_library: .proto -> C++ messages and gRPC stubs, with the system
protoc and grpc_cpp_plugin (Debian's protobuf-compiler, protobuf-compiler-grpc).

    grpc_proto_library(
        name = "ctxsel_proto",
        srcs = ["ctxsel/v1/ctxsel.proto"],  # paths relative to this package,
    )                                       # which is the import root

C++ code then includes "ctxsel/v1/ctxsel.pb.h" and "ctxsel/v1/ctxsel.grpc.pb.h".
Imports of google/protobuf/duration.proto and timestamp.proto resolve to the
copies @system_libs links from Debian's libprotobuf-dev (system_libs.bzl),
whose C++ code libprotobuf holds.
"""

def grpc_proto_library(name, srcs, deps = [], visibility = None):
    repo = native.repository_name()
    package = native.package_name()
    root = package if repo == "@" else "external/%s/%s" % (repo[1:], package)
    root = root.rstrip("/") or "."

    stems = [src[:-len(".proto")] for src in srcs]
    headers = [s + ".pb.h" for s in stems] + [s + ".grpc.pb.h" for s in stems]
    sources = [s + ".pb.cc" for s in stems] + [s + ".grpc.pb.cc" for s in stems]

    well_known = "@system_libs//:well_known_protos"
    native.genrule(
        name = name + "_codegen",
        srcs = srcs + ([] if repo == "@system_libs" else [well_known]),
        outs = headers + sources,
        cmd = " ".join([
            "protoc",
            "--proto_path=%s" % root,
            "--proto_path=external/system_libs",
            "--proto_path=/usr/include",  # any.proto and the rest, for googleapis
            "--cpp_out=$(RULEDIR)",
            "--grpc_out=$(RULEDIR)",
            "--plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin)",
        ] + ["%s/%s" % (root, src) for src in srcs]),
    )
    native.cc_library(
        name = name,
        srcs = sources,
        hdrs = headers,
        includes = ["."],
        deps = deps + ["@//third_party:grpc"],
        visibility = visibility,
    )
