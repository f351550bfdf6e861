"""Reads google.rpc error details from a failed call, as the grpc_status
package does: the serialized google.rpc.Status in the
`grpc-status-details-bin` trailer, each detail an Any."""
from google.rpc import error_details_pb2
from google.rpc import status_pb2

_TYPES = {
    "google.rpc.BadRequest": error_details_pb2.BadRequest,
    "google.rpc.ErrorInfo": error_details_pb2.ErrorInfo,
    "google.rpc.ResourceInfo": error_details_pb2.ResourceInfo,
}


def rpc_status(error):
    """The google.rpc.Status of a grpc.RpcError, or None."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            assert status.code == error.code().value[0], (status, error)
            assert status.message == error.details(), (status, error)
            return status
    return None


def details(error):
    """{"google.rpc.BadRequest": message, ...} of a grpc.RpcError."""
    status = rpc_status(error)
    assert status is not None, "no grpc-status-details-bin: %s" % error
    out = {}
    for any_detail in status.details:
        name = any_detail.type_url.split("/")[-1]
        message = _TYPES[name]()
        assert any_detail.Unpack(message), any_detail
        out[name] = message
    return out
