"""Drives a real server through the ctxsel Python package, installed with
pip into a venv by python_package_test: typed errors with details, select
with the server's per-rank environment, the claim context manager (renewal
and release), release by holder, a claim that waits in the server's queue,
omit_explanation, a job's own binary images, and failover past a dead
address.

usage: python_package_client.py SERVER_ADDRESS
(run with the venv's python; the package's own stubs set the fleet up)
"""
import re
import sys
import threading
import time

import ctxsel
from ctxsel.v1 import ctxsel_pb2 as pb
from ctxsel.v1 import ctxsel_pb2_grpc as pb_grpc
import grpc


def set_up(address):
    channel = grpc.insecure_channel(address)
    variants = pb_grpc.VariantsStub(channel)
    variants.RegisterVariants(pb.RegisterVariantsRequest(
        kernel="saxpy", variants=[
            pb.Variant(name="saxpy_sm90",
                       selector="construct={target}, "
                                "device={arch(nvidia_gpu_sm_90)}"),
            pb.Variant(name="saxpy_cpu", selector="device={kind(cpu)}"),
        ]))
    node = pb.Node(id="n1")
    for i in range(2):
        device = node.devices.add(index=i, sycl_architecture="nvidia_gpu_sm_90",
                                  uuid="GPU-000%d" % i, vendor_index=i)
        device.traits.kind.extend(["gpu", "nohost"])
        device.traits.vendor.append("nvidia")
    host = node.devices.add(index=-1, sycl_architecture="x86_64")
    host.traits.kind.extend(["cpu", "host"])
    pb_grpc.InventoryStub(channel).ReportNode(pb.ReportNodeRequest(node=node))
    variants.RegisterVariants(pb.RegisterVariantsRequest(
        kernel="tie", variants=[
            pb.Variant(name="tie_first", selector="device={kind(cpu)}"),
            pb.Variant(name="tie_last", selector="device={kind(cpu)}"),
        ]))


def compilers(client):
    """A job names the compiler whose binary asks, and the tie rule."""
    def variant(**job):
        return client.select(kernel="tie", require="cpu", **job).variant
    assert variant() == "tie_first"
    assert variant(compiler="gcc-12") == "tie_last"
    assert variant(compiler="gcc-12", ties="first") == "tie_first"
    assert variant(ties="last") == "tie_last"
    try:
        variant(compiler="icc")
        raise SystemExit("an unknown compiler was accepted")
    except ctxsel.InvalidArgument as e:
        assert "job.compiler" in [f for f, _ in e.field_violations], e


def lean_and_images(client):
    """omit_explanation leaves the explanation out, and only it; a job's
    images confine it to the devices that run one of them."""
    gpu = dict(kernel="saxpy", construct=["target"], require="gpu")
    full = client.select(**gpu)
    assert "saxpy_sm90" in full.explanation, full.explanation
    lean = client.select(omit_explanation=True, **gpu)
    assert lean.explanation == "", lean.explanation
    assert lean.variant == "saxpy_sm90" and lean.device.startswith("n1/gpu")
    on_sm90 = client.select(images=["cubin:sm_90"], kernel="saxpy",
                            construct=["target"])
    assert on_sm90.device.startswith("n1/gpu"), on_sm90
    assert on_sm90.response.placement.image == "cubin:sm_90", on_sm90.response
    try:
        client.select(images=["cubin:sm_80"], **gpu)
        raise SystemExit("a GPU was placed with no image it runs")
    except ctxsel.NoPlacement as e:
        assert "images:" in e.message, e.message


def binary_images(client):
    """A job's own images: only devices that run one of them are placed,
    and each rank names the image that runs there."""
    target = dict(kernel="saxpy", construct=["target"])
    assert client.select(**target).variant == "saxpy_sm90"
    assert client.select(images=["host:x86_64"], **target).variant == (
        "saxpy_cpu")
    on_gpu = client.select(images=["ptx:sm_80"], **target)
    assert on_gpu.variant == "saxpy_sm90", on_gpu
    assert on_gpu.image == "ptx:sm_80", on_gpu.image
    try:
        client.select(images=["cubin:sm_70"], **target)
        raise SystemExit("a device without the binary's image was placed")
    except ctxsel.NoPlacement as e:
        assert "images: the binary has no image" in e.message, e.message


def wait_in_queue(client):
    """Both GPUs claimed: a claim with `wait` waits in the server's queue,
    is listed there, and gets the GPU released; one whose wait runs out
    says so."""
    gpu = dict(kernel="saxpy", construct=["target"], require="gpu")
    full = client.select(count=2, claim=30, holder="py-full", **gpu)
    try:
        client.select(claim=5, holder="py-late", wait=1, **gpu)
        raise SystemExit("a claim was granted with every GPU claimed")
    except ctxsel.AllClaimed as e:
        assert e.reason == "CLAIM_WAIT_EXPIRED", (e.reason, e.message)
    got = {}

    def waiter():
        with client.claim(duration=5, holder="py-waiter", wait=30,
                          **gpu) as placement:
            got["device"] = placement.device

    thread = threading.Thread(target=waiter)
    thread.start()
    waiting = []
    for _ in range(400):
        waiting = client.waiters()
        if waiting:
            break
        time.sleep(0.05)
    assert [(w.holder, w.position, w.kernel) for w in waiting] == [
        ("py-waiter", 1, "saxpy")], waiting
    client.release(full.ranks[1].claim_id)
    thread.join(30)
    assert got.get("device") == full.ranks[1].device, (got, full)
    assert not client.waiters()
    assert client.release_holder("py-full") == 1


def main(address):
    set_up(address)
    # The first address is dead: every call fails over to the live one.
    client = ctxsel.Client(servers=["127.0.0.1:1", address], insecure=True,
                           timeout=5)

    try:
        client.select(kernel="nope", construct=["target"])
        raise SystemExit("an unknown kernel was placed")
    except ctxsel.NotFound as e:
        assert e.reason == "KERNEL_NOT_FOUND", e
    try:
        client.select(kernel="saxpy", construct=["target"], count=-1)
        raise SystemExit("count=-1 was accepted")
    except ctxsel.InvalidArgument as e:
        assert ("job.count" in [f for f, _ in e.field_violations]), (
            e.field_violations)
        assert e.reason == "FIELD_INVALID", e.reason

    placement = client.select(kernel="saxpy", construct=["target"],
                              require="gpu", count=2)
    assert [r.variant for r in placement.ranks] == ["saxpy_sm90"] * 2, (
        placement)
    devices = {r.device for r in placement.ranks}
    assert devices == {"n1/gpu0", "n1/gpu1"}, devices
    for rank in placement.ranks:
        # The server's environment, read as it is: no mapping here.
        assert rank.environment["CUDA_VISIBLE_DEVICES"].startswith("GPU-"), (
            rank.environment)
        assert rank.environment["CTXSEL_VARIANT"] == "saxpy_sm90"
    try:
        client.select(kernel="saxpy", construct=["target"], require="gpu",
                      count=3)
        raise SystemExit("three GPUs of two were placed")
    except ctxsel.NoPlacement as e:
        assert e.reason == "NO_FITTING_DEVICE", e.reason
        assert e.metadata["count"] == "3", e.metadata

    with client.claim(kernel="saxpy", construct=["target"], require="gpu",
                      duration=3, holder="py-test") as held:
        assert held.claim_id and held.environment["CTXSEL_CLAIM"] == (
            held.claim_id), held.environment
        with client.claim(kernel="saxpy", construct=["target"],
                          require="gpu", duration=3,
                          holder="py-test") as second:
            assert second.device != held.device
            try:
                client.select(kernel="saxpy", construct=["target"],
                              require="gpu", claim=5, holder="py-other")
                raise SystemExit("a third GPU claim was granted")
            except ctxsel.AllClaimed as e:
                assert e.reason == "CLAIMS_EXHAUSTED", e.reason
                # RFC 3339 from ErrorInfo metadata, the same instant the
                # message names for people.
                assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
                                    e.first_expiry or ""), e.metadata
                assert e.first_expiry in e.message, e.message
            time.sleep(4)  # past the first expiry: renewed in the back
        claims = pb_grpc.PlacementStub(grpc.insecure_channel(address))
        listed = claims.ListClaims(pb.ListClaimsRequest()).claims
        assert [c.id for c in listed] == [held.claim_id], listed
    listed = claims.ListClaims(pb.ListClaimsRequest()).claims
    assert not listed, listed  # released on exit

    wait_in_queue(client)
    compilers(client)
    lean_and_images(client)
    binary_images(client)

    client.select(kernel="saxpy", construct=["target"], require="gpu",
                  count=2, claim=30, holder="slurm-7.0")
    assert client.release_holder("slurm-7.0") == 2
    assert client.release_holder("slurm-7.0") == 0  # idempotent
    print("python package ok")


if __name__ == "__main__":
    main(sys.argv[1])
