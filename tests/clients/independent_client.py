"""An independent ctxsel client: Debian's python3-grpcio with stubs
generated from ctxsel.proto and the google.rpc protos at test time. Drives a
real server through register, report, heartbeat, select, explain and watch,
then the error cases, reading each error's google.rpc details.

usage: /usr/bin/python3 independent_client.py SERVER PROTO_ROOT
           GOOGLEAPIS_ROOT WORK_DIR
The server must be empty. Prints "independent client ok" and exits 0, or
fails with a traceback.
"""
import os
import sys
import threading

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stubs  # noqa: E402


def expect_error(call, code):
    """Runs call(); returns its grpc.RpcError, which must have `code`."""
    try:
        call()
    except grpc.RpcError as e:
        assert e.code() == code, (e.code(), e.details())
        return e
    sys.exit("expected %s, the call succeeded" % code)


def main():
    server, proto_root, googleapis_root, work_dir = sys.argv[1:5]
    stubs.generate(work_dir, proto_root, googleapis_root)
    from ctxsel.v1 import ctxsel_pb2 as pb
    from ctxsel.v1 import ctxsel_pb2_grpc as rpc
    import error_details

    channel = grpc.insecure_channel(server)
    variants = rpc.VariantsStub(channel)
    inventory = rpc.InventoryStub(channel)
    placement = rpc.PlacementStub(channel)

    # Watch first, so the report below arrives as an event.
    events = inventory.WatchInventory(pb.WatchInventoryRequest(initial=True),
                                      timeout=30)
    first_event = []
    watcher = threading.Thread(target=lambda: first_event.append(next(events)))
    watcher.start()

    registered = variants.RegisterVariants(pb.RegisterVariantsRequest(
        kernel="saxpy",
        variants=[
            pb.Variant(name="saxpy_nv", selector="device={arch(nvptx)}"),
            pb.Variant(name="saxpy_cpu", selector="device={kind(cpu)}"),
        ]), timeout=10)
    assert registered.registered_count == 2, registered

    node = pb.Node(id="py-node", agent_version="python-test", devices=[
        pb.Device(index=-1, traits=pb.DeviceTraits(
            kind=["cpu", "host"], arch=["x86_64"], vendor=["amd"])),
        pb.Device(index=0, traits=pb.DeviceTraits(
            kind=["gpu", "nohost"], arch=["nvptx"], vendor=["nvidia"])),
    ])
    reported = inventory.ReportNode(pb.ReportNodeRequest(node=node),
                                    timeout=10)
    assert reported.heartbeat_interval.ToMilliseconds() > 0, reported
    assert reported.node_ttl.ToMilliseconds() > 0, reported

    watcher.join(timeout=20)
    assert first_event, "no inventory event"
    assert first_event[0].kind == pb.InventoryEvent.KIND_ADDED, first_event[0]
    assert first_event[0].event_time.seconds > 0, first_event[0]
    assert first_event[0].node.id == "py-node", first_event[0]
    events.cancel()

    beats = inventory.Heartbeat(iter([pb.HeartbeatRequest(
        node="py-node",
        utilisation=[pb.DeviceUtilisation(device_id="py-node/gpu0",
                                          utilisation=0.5)])]), timeout=10)
    answers = list(beats)
    assert len(answers) == 1, answers
    assert answers[0].action == pb.HeartbeatResponse.ACTION_UNSPECIFIED, answers

    job = pb.Job(kernel="saxpy", construct=[pb.ConstructTrait(name="target")])
    selected = placement.Select(pb.SelectRequest(job=job), timeout=10)
    assert selected.placement.variant == "saxpy_nv", selected
    assert selected.placement.device.id == "py-node/gpu0", selected
    explained = placement.Explain(pb.ExplainRequest(job=job), timeout=10)
    assert explained.placement.variant == "saxpy_nv", explained
    assert "saxpy_nv" in explained.text, explained.text

    # --- errors, each with its details ---
    e = expect_error(lambda: variants.GetVariant(
        pb.GetVariantRequest(kernel="", name="saxpy_nv"), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT)
    d = error_details.details(e)
    violation = d["google.rpc.BadRequest"].field_violations[0]
    assert (violation.field, violation.description) == ("kernel", "required")

    e = expect_error(lambda: variants.GetVariant(
        pb.GetVariantRequest(kernel="saxpy", name="nope"), timeout=10),
        grpc.StatusCode.NOT_FOUND)
    d = error_details.details(e)
    resource = d["google.rpc.ResourceInfo"]
    assert resource.resource_type == "ctxsel.v1.Variant", resource
    assert resource.resource_name == "saxpy/nope", resource
    info = d["google.rpc.ErrorInfo"]
    assert (info.reason, info.domain) == ("VARIANT_NOT_FOUND", "ctxsel.dev")
    assert dict(info.metadata) == {"kernel": "saxpy", "name": "nope"}, info

    e = expect_error(lambda: variants.DeleteVariant(
        pb.DeleteVariantRequest(kernel="saxpy", name=""), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT)
    assert (error_details.details(e)["google.rpc.BadRequest"]
            .field_violations[0].field == "name")

    e = expect_error(lambda: variants.RegisterVariants(
        pb.RegisterVariantsRequest(kernel="saxpy", variants=[
            pb.Variant(name="bad", selector="device={arch(nvptx)")]),
        timeout=10), grpc.StatusCode.INVALID_ARGUMENT)
    d = error_details.details(e)
    assert (d["google.rpc.BadRequest"].field_violations[0].field ==
            "variants[0].selector"), d
    info = d["google.rpc.ErrorInfo"]
    assert info.reason == "SELECTOR_INVALID", info
    assert info.metadata["kernel"] == "saxpy", info
    assert info.metadata["variant"] == "bad", info
    assert info.metadata["line"] == "1", info
    assert int(info.metadata["column"]) > 1, info

    e = expect_error(lambda: variants.RegisterVariants(
        pb.RegisterVariantsRequest(kernel="saxpy", variants=[
            pb.Variant(name="saxpy_nv", selector="device={kind(gpu)}")]),
        timeout=10), grpc.StatusCode.ALREADY_EXISTS)
    d = error_details.details(e)
    assert d["google.rpc.ResourceInfo"].resource_name == "saxpy/saxpy_nv", d
    assert d["google.rpc.ErrorInfo"].reason == "VARIANT_EXISTS", d

    e = expect_error(lambda: inventory.Deregister(
        pb.DeregisterRequest(node=""), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT)
    assert (error_details.details(e)["google.rpc.BadRequest"]
            .field_violations[0].field == "node")

    e = expect_error(lambda: inventory.Deregister(
        pb.DeregisterRequest(node="ghost"), timeout=10),
        grpc.StatusCode.NOT_FOUND)
    d = error_details.details(e)
    assert d["google.rpc.ResourceInfo"].resource_type == "ctxsel.v1.Node", d
    assert d["google.rpc.ErrorInfo"].metadata["node"] == "ghost", d

    e = expect_error(lambda: inventory.ListNodes(
        pb.ListNodesRequest(page_token="garbage"), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT)
    d = error_details.details(e)
    assert (d["google.rpc.BadRequest"].field_violations[0].field ==
            "page_token"), d
    assert d["google.rpc.ErrorInfo"].reason == "PAGE_TOKEN_INVALID", d

    # A page token is bound to the filters it was issued under.
    page = inventory.ListDevices(
        pb.ListDevicesRequest(device_filter="device={kind(cpu)}", page_size=1),
        timeout=10)
    assert page.next_page_token == "", page  # one CPU: a single page
    page = inventory.ListDevices(pb.ListDevicesRequest(page_size=1),
                                 timeout=10)
    assert page.next_page_token, page
    e = expect_error(lambda: inventory.ListDevices(pb.ListDevicesRequest(
        device_filter="device={kind(gpu)}", page_size=1,
        page_token=page.next_page_token), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT)
    d = error_details.details(e)
    assert d["google.rpc.ErrorInfo"].reason == "PAGE_TOKEN_FILTERS_CHANGED", d

    e = expect_error(lambda: placement.Select(pb.SelectRequest(job=pb.Job(
        kernel="saxpy", construct=[pb.ConstructTrait(name="paralel")])),
        timeout=10), grpc.StatusCode.INVALID_ARGUMENT)
    d = error_details.details(e)
    violation = d["google.rpc.BadRequest"].field_violations[0]
    assert violation.field == "job.construct[0].name", violation
    assert "did you mean 'parallel'" in violation.description, violation

    # A policy value this client's stubs know but the server may not (a
    # newer client, or a JavaScript client's unknown string read as a
    # number) is refused on the field, never read as the default.
    e = expect_error(lambda: placement.Select(pb.SelectRequest(job=pb.Job(
        kernel="saxpy", policy=7)), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT)
    d = error_details.details(e)
    assert (d["google.rpc.BadRequest"].field_violations[0].field ==
            "job.policy"), d
    assert pb.Policy.Name(pb.POLICY_SPREAD) == "POLICY_SPREAD"

    # One device filter, one meaning: a filter the job would decide is
    # refused by ListDevices and Select alike, on the field.
    for call, field in (
            (lambda: inventory.ListDevices(pb.ListDevicesRequest(
                device_filter="user={condition(N > 4)}"), timeout=10),
             "device_filter"),
            (lambda: placement.Select(pb.SelectRequest(job=pb.Job(
                kernel="saxpy", variables={"N": 8},
                device_filter="user={condition(N > 4)}")), timeout=10),
             "job.device_filter")):
        d = error_details.details(
            expect_error(call, grpc.StatusCode.INVALID_ARGUMENT))
        assert d["google.rpc.BadRequest"].field_violations[0].field == field, d
        assert d["google.rpc.ErrorInfo"].reason == "SELECTOR_INVALID", d

    e = expect_error(lambda: placement.Select(pb.SelectRequest(
        job=pb.Job(kernel="unknown")), timeout=10),
        grpc.StatusCode.NOT_FOUND)
    d = error_details.details(e)
    assert d["google.rpc.ErrorInfo"].domain == "ctxsel.dev", d
    print("independent client ok")


if __name__ == "__main__":
    main()
