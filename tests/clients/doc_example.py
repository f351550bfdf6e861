"""Runs docs/api.md's Python client as a reader would: the page's ```sh
block (protoc into gen/) in a directory laid out like the repository, a
node with one NVIDIA GPU reported, then the page's ```python block with gen/
on PYTHONPATH; its output must be the page's plain ``` block.

usage: /usr/bin/python3 doc_example.py API_MD SERVER PROTO_ROOT
           GOOGLEAPIS_ROOT WORK_DIR
Prints "doc example ok" and exits 0, or exits non-zero saying what differs.
"""
import os
import subprocess
import sys


def blocks(text, language):
    """The bodies of the page's fenced blocks tagged `language` ("" for
    untagged), walking fences in order so a closing fence never opens one."""
    found, body, tag = [], None, None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if body is None:
                body, tag = "", line[3:].strip()
            else:
                if tag == language:
                    found.append(body)
                body = None
        elif body is not None:
            body += line
    return found


def main():
    api_md, server, proto_root, googleapis_root, work = sys.argv[1:6]
    with open(api_md) as f:
        text = f.read()
    [shell] = blocks(text, "sh")
    # The last: the stubs-alone client. The package's example above it
    # needs a fleet of its own; python_package_test drives the same calls.
    python = blocks(text, "python")[-1]
    [expected] = blocks(text, "")

    os.makedirs(os.path.join(work, "third_party"))
    os.symlink(proto_root, os.path.join(work, "proto"))
    os.symlink(googleapis_root, os.path.join(work, "third_party/googleapis"))
    subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=work,
                   check=True)
    gen = os.path.join(work, "gen")

    sys.path.insert(0, gen)
    import grpc
    from ctxsel.v1 import ctxsel_pb2 as pb
    from ctxsel.v1 import ctxsel_pb2_grpc as rpc
    rpc.InventoryStub(grpc.insecure_channel(server)).ReportNode(
        pb.ReportNodeRequest(node=pb.Node(id="gpu1", devices=[pb.Device(
            index=0, traits=pb.DeviceTraits(kind=["gpu", "nohost"],
                                            arch=["nvptx"],
                                            vendor=["nvidia"]))])),
        timeout=10)

    script = os.path.join(work, "example.py")
    with open(script, "w") as f:
        f.write(python)
    env = dict(os.environ, CTXSEL_SERVER=server, PYTHONPATH=gen)
    run = subprocess.run(["/usr/bin/python3", script], env=env,
                         capture_output=True, text=True, timeout=60)
    if run.returncode != 0 or run.stdout != expected:
        sys.exit("docs/api.md example: exit %d\n--- printed\n%s--- page says"
                 "\n%s--- stderr\n%s" % (run.returncode, run.stdout, expected,
                                         run.stderr))
    print("doc example ok")


if __name__ == "__main__":
    main()
