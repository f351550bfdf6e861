"""Repository rule for Debian's LLVM 14 (llvm-14-dev), used only by manual
targets (bench:corpus_llvm_bench): CI builds without it.

With llvm-14-dev installed, @llvm14//:llvm is a cc_library over its headers
and libLLVM-14.so. Without it, the same target fails to compile with an
#error that says what to install, so `bazel build` of a manual target tells
the user why; tools/perf.sh checks for the header before building.
"""

_ROOT = "/usr/lib/llvm-14"

def _llvm14_impl(ctx):
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    header = ctx.path(_ROOT + "/include/llvm/Frontend/OpenMP/OMPContext.h")
    if header.exists:
        ctx.symlink(_ROOT + "/include/llvm", "include/llvm")
        ctx.symlink(_ROOT + "/include/llvm-c", "include/llvm-c")
        ctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

cc_library(
    name = "llvm",
    hdrs = glob(["include/llvm/**", "include/llvm-c/**"]),
    includes = ["include"],
    linkopts = ["-L{root}/lib", "-Wl,-rpath,{root}/lib", "-lLLVM-14"],
)
""".format(root = _ROOT))
    else:
        ctx.file("missing.cc", '#error "llvm-14-dev is missing: apt-get install llvm-14-dev"\n')
        ctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

cc_library(
    name = "llvm",
    srcs = ["missing.cc"],
)
""")

llvm14 = repository_rule(
    implementation = _llvm14_impl,
    local = True,
)
