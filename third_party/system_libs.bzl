"""Repository rule that exposes Debian's system libraries to Bazel.

At fetch time it asks pkg-config for each library's flags and generates one
cc_library per library, so BUILD files depend on `//third_party:grpc` and the
like instead of scattering link flags through the tree. Nothing is downloaded.
"""

# name -> (pkg-config modules, extra link flags for libraries without a .pc file)
_LIBS = {
    "grpc": (["grpc++", "protobuf"], []),
    "protobuf": (["protobuf"], []),
    "absl_base": (["absl_base"], []),
    "absl_status": (["absl_status", "absl_statusor"], []),
    "absl_strings": (["absl_strings", "absl_str_format"], []),
    "absl_flags": (["absl_flags", "absl_flags_parse", "absl_flags_usage"], []),
    "absl_synchronization": (["absl_synchronization"], []),
    "absl_time": (["absl_time"], []),
    "absl_hash": (["absl_hash", "absl_raw_hash_set"], []),
    "absl_random": (["absl_random_random", "absl_random_distributions", "absl_random_seed_sequences"], []),
    "spdlog": (["spdlog"], []),
    "gtest": (["gtest"], []),
    "gtest_main": (["gtest_main"], []),
    "gmock": (["gmock"], []),
    "gmock_main": (["gmock_main"], []),
    "benchmark": (["benchmark"], []),
    "benchmark_main": (["benchmark"], ["-lbenchmark_main"]),
    "hwloc": (["hwloc"], []),
    "sqlite3": (["sqlite3"], []),
    "nlohmann_json": (["nlohmann_json"], []),
    "libcrypto": (["libcrypto"], []),
    # Prometheus metrics: the registry and text exposition (core) and the
    # HTTP endpoint Prometheus scrapes (pull, through civetweb).
    "prometheus": (["prometheus-cpp-core", "prometheus-cpp-pull"], []),
}

# Libraries that Debian ships without a pkg-config file: name -> link flags.
_PLAIN_LIBS = {
    # <slurm/spank.h> (libslurm-dev) for SPANK plugins (slurm/). No link
    # flags on purpose: a plugin's spank_* calls resolve against the srun or
    # slurmstepd that loads it, and linking libslurm would load a second
    # copy of Slurm's globals into them.
    "slurm": [],
}

# .proto files that Debian's grpc-proto and libprotobuf-dev packages ship,
# linked into the repository.
_SYSTEM_PROTOS = {
    "grpc/health/v1/health.proto": "/usr/share/grpc-proto/grpc/health/v1/health.proto",
    "grpc/reflection/v1alpha/reflection.proto": "/usr/share/grpc-proto/grpc/reflection/v1alpha/reflection.proto",
    "google/protobuf/duration.proto": "/usr/include/google/protobuf/duration.proto",
    "google/protobuf/timestamp.proto": "/usr/include/google/protobuf/timestamp.proto",
}

# The well-known types ctxsel.proto imports; their C++ code is in libprotobuf.
_WELL_KNOWN_PROTOS = [
    "google/protobuf/duration.proto",
    "google/protobuf/timestamp.proto",
]

def _pkg_config(ctx, flag, modules):
    result = ctx.execute(["pkg-config", flag] + modules)
    if result.return_code != 0:
        fail("pkg-config %s %s failed (run tools/setup.sh): %s" %
             (flag, " ".join(modules), result.stderr))
    return [f for f in result.stdout.strip().split(" ") if f]

def _system_libs_impl(ctx):
    if ctx.which("pkg-config") == None:
        fail("pkg-config not found: run tools/setup.sh")
    build = ['package(default_visibility = ["//visibility:public"])', ""]
    for name, (modules, extra_links) in _LIBS.items():
        defines = []
        for flag in _pkg_config(ctx, "--cflags", modules):
            if not flag.startswith("-D"):
                fail("unsupported pkg-config cflag for %s: %s" % (name, flag))
            defines.append(flag[2:])
        links = _pkg_config(ctx, "--libs", modules) + extra_links
        build.append("cc_library(\n    name = %r,\n    defines = %r,\n    linkopts = %r,\n)\n" %
                     (name, defines, links))
    for name, links in _PLAIN_LIBS.items():
        build.append("cc_library(\n    name = %r,\n    linkopts = %r,\n)\n" % (name, links))
    for dest, src in _SYSTEM_PROTOS.items():
        ctx.symlink(src, dest)
    build.append("filegroup(\n    name = \"well_known_protos\",\n    srcs = %r,\n)\n" %
                 _WELL_KNOWN_PROTOS)
    build.append('load("@//third_party:grpc_proto.bzl", "grpc_proto_library")\n')
    build.append("grpc_proto_library(\n    name = \"health_proto\",\n    srcs = [%r],\n)\n" %
                 "grpc/health/v1/health.proto")
    # The server's own reflection service (server/rpc/reflection_service.h);
    # never linked with libgrpc++_reflection, which holds the same messages.
    build.append("grpc_proto_library(\n    name = \"reflection_proto\",\n    srcs = [%r],\n)\n" %
                 "grpc/reflection/v1alpha/reflection.proto")
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.file("BUILD.bazel", "\n".join(build))

system_libs = repository_rule(
    implementation = _system_libs_impl,
    # Re-run when the machine's packages change.
    environ = ["PKG_CONFIG_PATH"],
    local = True,
)
