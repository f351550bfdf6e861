"""Client of the ctxsel service: which kernel variant, on which device of
which node, a job should use, and claims on those devices (docs/api.md)."""
from ctxsel.client import Client, Placement, Rank
from ctxsel.errors import (AllClaimed, CtxselError, InvalidArgument,
                           NoPlacement, NotFound, PermissionDenied,
                           RateLimited, Unauthenticated, Unavailable)

__all__ = [
    "AllClaimed", "Client", "CtxselError", "InvalidArgument", "NoPlacement",
    "NotFound", "PermissionDenied", "Placement", "Rank", "RateLimited",
    "Unauthenticated", "Unavailable"
]
