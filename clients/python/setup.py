"""Builds the ctxsel client package; the ctxsel.v1 and google.rpc stubs are
generated here, at build time, with protoc (proto3 `optional` needs protoc
3.15 or later: Debian 12's /usr/bin/protoc, not grpc_tools' bundled one).

  pip install --no-build-isolation ./clients/python

CTXSEL_PROTO_ROOT and CTXSEL_GOOGLEAPIS_ROOT name the import roots of
ctxsel/v1/ctxsel.proto and google/rpc/*.proto when the package is built away
from the repository; PROTOC and GRPC_PYTHON_PLUGIN the tools.
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py


def _load_generator():
    # By path: importing the package itself needs the stubs it generates.
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctxsel",
                        "_generate.py")
    spec = importlib.util.spec_from_file_location("ctxsel_generate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        _load_generator().generate(os.path.join(self.build_lib, "ctxsel"))


setup(cmdclass={"build_py": BuildWithStubs})
