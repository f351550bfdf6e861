"""An independent ctxsel client: Debian's python3-grpcio with stubs that
tests/clients/stubs.py generates from ctxsel.proto at test time. Runs one
claim cycle (select with a claim, list, renew, release) against a server.

usage: /usr/bin/python3 claims_client.py SERVER PROTO_ROOT GOOGLEAPIS_ROOT
       WORK_DIR
The server must know kernel `saxpy` and exactly one fitting GPU.
Prints "claim cycle ok" and exits 0, or fails with a traceback.
"""
import os
import sys
import time

import grpc

# One stub generator for every Python test client (tests/clients/stubs.py).
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients"))
import stubs  # noqa: E402


def main():
    server, proto_root, googleapis_root, work_dir = sys.argv[1:5]
    stubs.generate(work_dir, proto_root, googleapis_root)
    from ctxsel.v1 import ctxsel_pb2 as pb
    from ctxsel.v1 import ctxsel_pb2_grpc as rpc
    from google.protobuf import duration_pb2

    placement = rpc.PlacementStub(grpc.insecure_channel(server))
    request = pb.SelectRequest(
        job=pb.Job(kernel="saxpy", device_filter="device={kind(gpu)}"),
        claim=pb.ClaimRequest(duration=duration_pb2.Duration(seconds=60),
                             holder="python@test:1"))
    answer = placement.Select(request, timeout=10)
    claim = answer.claim
    assert claim.id.startswith("c-"), answer
    assert claim.device == answer.placement.device.id, answer
    assert claim.holder == "python@test:1", claim
    now_ms = int(time.time() * 1000)
    assert now_ms < claim.expire_time.ToMilliseconds() <= now_ms + 60000, claim

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
        pb.RenewClaimRequest(claim_id=claim.id,
                             duration=duration_pb2.Duration(seconds=120)),
        timeout=10).claim
    assert renewed.expire_time.ToMilliseconds() > \
        claim.expire_time.ToMilliseconds(), renewed

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
