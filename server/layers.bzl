"""The sources of a server/ package, for //server:layers_test."""

def layer_sources():
    """Declares :sources, this package's headers, sources and BUILD file."""
    native.filegroup(
        name = "sources",
        srcs = native.glob([
            "*.h",
            "*.cc",
            "BUILD.bazel",
        ]),
        visibility = ["//server:__pkg__"],
    )
