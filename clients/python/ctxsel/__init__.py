"""Client of the ctxsel service: which kernel variant, on which device of
which node, a job should use, and claims on those devices (docs/api.md)."""
from ctxsel.client import Client, Placement, Rank
from ctxsel.errors import (AllClaimed, CtxselError, InvalidArgument,
                           LimitExceeded, NoPlacement, NotFound,
                           PermissionDenied, RateLimited, Unauthenticated,
                           Unavailable)

__all__ = [
    "AllClaimed", "Client", "CtxselError", "InvalidArgument", "LimitExceeded",
    "NoPlacement",
    "NotFound", "PermissionDenied", "Placement", "Rank", "RateLimited",
    "Unauthenticated", "Unavailable"
]
