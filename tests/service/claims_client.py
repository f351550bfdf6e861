"""An independent ctxsel client: Debian's python3-grpcio with stubs that
Debian's protoc and grpc_python_plugin generate from ctxsel.proto at test
time. Runs one claim cycle
(select with a claim, list, renew, release) against a server.

usage: /usr/bin/python3 claims_client.py SERVER PROTO_ROOT WORK_DIR
The server must know kernel `saxpy` and exactly one fitting GPU.
Prints "claim cycle ok" and exits 0, or fails with a traceback.
"""
import os
import subprocess
import sys
import time

import grpc


def generate(proto_root, out_dir):
    # Debian's protoc (3.21) with its gRPC Python plugin: the protoc bundled
    # in Debian's grpc_tools (1.14) predates proto3 `optional`.
    code = subprocess.call([
        "protoc", "-I" + proto_root, "--python_out=" + out_dir,
        "--grpc_python_out=" + out_dir,
        "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
        os.path.join(proto_root, "ctxsel/v1/ctxsel.proto")
    ])
    if code != 0:
        sys.exit("protoc failed: %d" % code)
    sys.path.insert(0, out_dir)


def main():
    server, proto_root, work_dir = sys.argv[1:4]
    generate(proto_root, work_dir)
    from ctxsel.v1 import ctxsel_pb2 as pb
    from ctxsel.v1 import ctxsel_pb2_grpc as rpc

    placement = rpc.PlacementStub(grpc.insecure_channel(server))
    request = pb.SelectRequest(
        job=pb.Job(kernel="saxpy", device_filter="device={kind(gpu)}"),
        claim=pb.ClaimRequest(duration_ms=60000, holder="python@test:1"))
    answer = placement.Select(request, timeout=10)
    claim = answer.claim
    assert claim.id.startswith("c-"), answer
    assert claim.device == answer.placement.device.id, answer
    assert claim.holder == "python@test:1", claim
    now_ms = int(time.time() * 1000)
    assert now_ms < claim.expires_unix_ms <= now_ms + 60000, claim

    # The only GPU is claimed: a second claim is refused.
    try:
        placement.Select(request, timeout=10)
        sys.exit("second claim succeeded")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
        assert "all 1 fitting devices are claimed" in e.details(), e.details()

    listed = placement.ListClaims(pb.ListClaimsRequest(), timeout=10).claims
    assert [c.id for c in listed] == [claim.id], listed

    renewed = placement.RenewClaim(
        pb.RenewClaimRequest(claim_id=claim.id, duration_ms=120000),
        timeout=10).claim
    assert renewed.expires_unix_ms > claim.expires_unix_ms, renewed

    placement.ReleaseClaim(pb.ReleaseClaimRequest(claim_id=claim.id),
                           timeout=10)
    assert not placement.ListClaims(pb.ListClaimsRequest(),
                                    timeout=10).claims
    try:
        placement.ReleaseClaim(pb.ReleaseClaimRequest(claim_id=claim.id),
                               timeout=10)
        sys.exit("second release succeeded")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.NOT_FOUND, e
    print("claim cycle ok")


if __name__ == "__main__":
    main()
