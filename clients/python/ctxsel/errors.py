"""Typed errors of the ctxsel service, with their google.rpc details.

Every error the server sends carries a google.rpc.Status in the
`grpc-status-details-bin` trailer with at least an ErrorInfo (its `reason`
says which failure it is, docs/api.md); this module reads it once so that
callers catch by type:

    try:
        client.select(kernel="saxpy", construct=["target"])
    except ctxsel.NoPlacement as e:     # nothing fits: do not wait
        ...
    except ctxsel.AllClaimed as e:      # fits, but claimed: wait or retry
        print(e.first_expiry)

The class follows the reason where the reason asks something else of the
caller than the code does (a rate limit and claimed devices are both
RESOURCE_EXHAUSTED), and the code otherwise.
"""
import grpc

from ctxsel._rpc import error_details_pb2
from ctxsel._rpc import status_pb2


class CtxselError(Exception):
    """A failed call: `code` (grpc.StatusCode), `message`, `reason`
    (ErrorInfo.reason, e.g. "KERNEL_NOT_FOUND"), `metadata` (ErrorInfo's),
    `field_violations` [(field, description)] (BadRequest's)."""

    def __init__(self, code, message, reason="", metadata=None,
                 field_violations=()):
        super().__init__("%s: %s" % (code.name, message))
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.field_violations = list(field_violations)


class InvalidArgument(CtxselError):
    """A bad request; `field_violations` names the fields."""


class NotFound(CtxselError):
    """An unknown kernel, claim or node."""


class NoPlacement(CtxselError):
    """Nothing in the fleet fits the job (FAILED_PRECONDITION): waiting will
    not help until the fleet or the job changes."""


class AllClaimed(CtxselError):
    """Devices fit, but every fitting one is claimed (CLAIMS_EXHAUSTED): wait
    and retry. `first_expiry` is when the first of those claims expires
    (RFC 3339, "2026-05-01T12:00:00Z", ErrorInfo metadata), when known.
    After a wait in the server's queue `reason` is one of QUEUE_REASONS."""

    @property
    def first_expiry(self):
        return self.metadata.get("first_expiry")


class RateLimited(CtxselError):
    """Too many calls for this caller (RATE_LIMITED), or every server thread
    busy (SERVER_BUSY): retry after a pause."""


class LimitExceeded(CtxselError):
    """The request passes a server limit (LIMIT_EXCEEDED; `metadata` names
    the `field`, `limit` and server `flag`): make it smaller."""


class Unavailable(CtxselError):
    """No server answered (every address of the list was tried): retry."""


class Unauthenticated(CtxselError):
    """The token or certificate was refused: fix the credentials."""


class PermissionDenied(CtxselError):
    """The caller's role does not allow the call, or the claim is another's."""


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.FAILED_PRECONDITION: NoPlacement,
    grpc.StatusCode.RESOURCE_EXHAUSTED: AllClaimed,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
}
# ErrorInfo.reason (docs/api.md) where it decides the class.
_BY_REASON = {
    "CLAIMS_EXHAUSTED": AllClaimed,
    "RATE_LIMITED": RateLimited,
    "SERVER_BUSY": RateLimited,
    "LIMIT_EXCEEDED": LimitExceeded,
    "STORE_FULL": CtxselError,
    "NO_FITTING_DEVICE": NoPlacement,
}
# A claim's wait in the server's queue ran out, or the queue was full.
QUEUE_REASONS = ("CLAIM_WAIT_EXPIRED", "CLAIM_QUEUE_FULL")


def from_rpc_error(error):
    """The CtxselError for a grpc.RpcError, details decoded."""
    code = error.code()
    message = error.details() or ""
    reason, metadata, violations = "", {}, []
    for key, value in error.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(info):
                reason, metadata = info.reason, dict(info.metadata)
            elif detail.Unpack(bad):
                violations = [(v.field, v.description)
                              for v in bad.field_violations]
    cls = _BY_REASON.get(reason) or _BY_CODE.get(code, CtxselError)
    return cls(code, message, reason, metadata, violations)
