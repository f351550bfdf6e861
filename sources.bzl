"""The sources of a package, for the tests that read its includes and labels
(//server:layers_test, //:binaries_apart_test)."""

def layer_sources(visibility = ["//server:__pkg__"]):
    """Declares :sources, this package's headers, sources and BUILD file."""
    native.filegroup(
        name = "sources",
        srcs = native.glob([
            "*.h",
            "*.cc",
            "BUILD.bazel",
        ]),
        visibility = visibility,
    )
