"""ctxsel.Client: select and claim over a list of servers.

    import ctxsel
    client = ctxsel.Client(servers=["ctxsel-a:7070", "ctxsel-b:7070"],
                           ca="/etc/ctxsel/ca.pem",
                           token_file="/etc/ctxsel/launcher.token")
    placement = client.select(kernel="saxpy",
                              construct=["target", "teams", "parallel", "for"],
                              variables={"N": 4096})
    print(placement.variant, placement.device, placement.environment)
    with client.claim(kernel="saxpy", construct=["target"], duration=60,
                      holder="job-42") as placement:
        subprocess.run(cmd, env={**os.environ, **placement.environment})

The environment of each rank is the server's (SelectResponse.ranks): this
package has no vendor mapping of its own.
"""
import os
import random
import threading
import time

import grpc
from google.protobuf import duration_pb2

from ctxsel import errors
from ctxsel.v1 import ctxsel_pb2 as pb
from ctxsel.v1 import ctxsel_pb2_grpc as pb_grpc

# Codes after which the next server of the list is tried.
_FAIL_OVER = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class Rank:
    """One rank's answer: `variant` (None for the kernel's base function),
    `device` (its id), `node`, `device_class`, `image` (the binary's image
    that runs there, "" when no images are known), `claim_id` (None without
    a claim) and `environment` (dict, in the server's order)."""

    def __init__(self, proto):
        choice = proto.placement
        self.rank = proto.rank
        self.base = choice.base
        self.variant = None if choice.base else choice.variant
        self.node = choice.node or choice.device.node
        self.device = choice.device.id
        self.device_class = (choice.device_class_short_name or
                             choice.device_class)
        self.image = choice.image
        self.claim_id = proto.claim.id if proto.HasField("claim") else None
        self.environment = {v.name: v.value for v in proto.environment}

    def __repr__(self):
        return "Rank(%d, %s on %s)" % (self.rank, self.variant or "(base)",
                                       self.device)


class Placement:
    """A Select's answer: `ranks` (one per device asked for), the
    explanation, and rank 0's fields as attributes of its own."""

    def __init__(self, response):
        self.response = response
        self.ranks = [Rank(r) for r in response.ranks]
        if not self.ranks:  # a server from before ranks: rank 0 only
            legacy = pb.RankPlacement(placement=response.placement,
                                      claim=response.claim)
            self.ranks = [Rank(legacy)]
        self.explanation = response.explanation

    def __getattr__(self, name):
        if name in ("rank", "base", "variant", "node", "device",
                    "device_class", "image", "claim_id", "environment"):
            return getattr(self.ranks[0], name)
        raise AttributeError(name)

    def __repr__(self):
        return "Placement(%r)" % self.ranks


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class Client:
    """Calls the first server of `servers` that answers, from the one that
    answered last, within `timeout` seconds per call (split over the
    servers, so a paused one costs at most timeout / len(servers)). TLS by default (`ca`: the CA file; `cert`/`key`: a client
    certificate); `token_file` (default $CTXSEL_TOKEN_FILE) adds a bearer
    token; `insecure=True` is plaintext, for loopback and tests, and sends
    no token. Each address is verified against its own host name."""

    def __init__(self, servers, ca=None, token_file=None, insecure=False,
                 cert=None, key=None, timeout=10.0):
        if isinstance(servers, str):
            servers = [s for s in servers.split(",") if s.strip()]
        if not servers:
            raise ValueError("servers: empty")
        token_file = token_file or os.environ.get("CTXSEL_TOKEN_FILE")
        if insecure and token_file:
            raise ValueError("token_file: a token is sent only over TLS, "
                             "not with insecure=True")
        self._timeout = timeout
        self._servers = [s.strip() for s in servers]
        self._current = 0
        self._channels = []
        for address in self._servers:
            if insecure:
                channel = grpc.insecure_channel(address)
            else:
                credentials = grpc.ssl_channel_credentials(
                    root_certificates=_read(ca) if ca else None,
                    private_key=_read(key) if key else None,
                    certificate_chain=_read(cert) if cert else None)
                if token_file:
                    token = _read(token_file).decode().splitlines()[0].strip()
                    if not token:
                        raise ValueError("token_file: %s is empty" %
                                         token_file)
                    credentials = grpc.composite_channel_credentials(
                        credentials,
                        grpc.access_token_call_credentials(token))
                channel = grpc.secure_channel(address, credentials)
            self._channels.append(channel)
        self._stubs = [(pb_grpc.PlacementStub(c), pb_grpc.CtxselStub(c))
                       for c in self._channels]

    def close(self):
        for channel in self._channels:
            channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()

    def _call(self, method, request, stub_index=0, extra_timeout=0.0,
              once=False):
        """Calls `method` under the C++ client's failover rule
        (client/ctxsel_client.h): each attempt gets an even share of what
        is left of the timeout over the servers not yet tried, and moves on
        after UNAVAILABLE or DEADLINE_EXCEEDED. A call that is not safe to
        send twice (`once`: a claiming Select) goes only to the first server
        that answers a Ping within its share, and is not sent again."""
        deadline = time.monotonic() + self._timeout
        count = len(self._servers)
        last = None
        for i in range(count):
            index = (self._current + i) % count
            share = max(0.0, deadline - time.monotonic()) / (count - i)
            stubs = self._stubs[index]
            try:
                if once and count > 1:
                    try:
                        stubs[1].Ping(pb.PingRequest(), timeout=share)
                    except grpc.RpcError as error:
                        if error.code() in _FAIL_OVER:
                            last = error
                            continue  # nothing was sent
                    share = max(0.0, deadline - time.monotonic())
                answer = getattr(stubs[stub_index], method)(
                    request, timeout=share + extra_timeout)
                self._current = index
                return answer
            except grpc.RpcError as error:
                last = error
                if once or error.code() not in _FAIL_OVER:
                    if error.code() not in _FAIL_OVER:
                        self._current = index
                    raise errors.from_rpc_error(error) from None
        raise errors.from_rpc_error(last) from None

    def ping(self):
        return self._call("Ping", pb.PingRequest(), stub_index=1)

    @staticmethod
    def job(kernel, construct=(), variables=None, nodes=(), devices=(),
            count=0, same_node=False, require=None, require_variant=False,
            device_filter="", policy=None, top_k=0, compiler="", ties=None,
            images=()):
        """The ctxsel.v1.Job of these arguments (`devices`: the allocation,
        device ids or UUIDs; `require`: a device kind such as "gpu";
        `compiler`: answer for the binary it builds, "spec", "gcc-12" or
        "clang-14"; `ties`: "first" or "last" declared wins a tie, None:
        the compiler's rule; `images`: the image ids of the job's binary,
        e.g. "cubin:sm_90", used instead of the kernel's: only devices that
        run one)."""
        job = pb.Job(kernel=kernel, nodes=list(nodes),
                     allowed_devices=list(devices), count=count,
                     same_node=same_node,
                     required_kind=require or "",
                     require_variant=require_variant,
                     device_filter=device_filter, top_k=top_k,
                     compiler=compiler, images=list(images))
        if ties:
            job.ties = pb.TieBreak.Value("TIE_BREAK_%s_DECLARED" % ties.upper())
        for name in construct:
            job.construct.add(name=name)
        for name, value in (variables or {}).items():
            job.variables[name] = int(value)
        if policy:
            job.policy = pb.Policy.Value("POLICY_" + policy.upper())
        return job

    def select(self, kernel, claim=None, holder=None, wait=0.0, priority=0,
               omit_explanation=False, **job):
        """Where the job runs (Placement). `claim` (seconds) also claims the
        devices for `holder`; with `wait` (seconds) a claim waits up to that
        long in the server's queue while every fitting device is claimed
        (FIFO within `priority`, 0 to 9, above 0 for admins), and
        AllClaimed's reason is then CLAIM_WAIT_EXPIRED or CLAIM_QUEUE_FULL.
        A server older than the queue answers at once with another reason:
        claim() then retries on its own. `omit_explanation`: the server
        neither formats nor sends the explanation (a launcher that reads
        only the placement); `explanation` is then empty."""
        request = pb.SelectRequest(job=self.job(kernel, **job),
                                   omit_explanation=omit_explanation)
        if claim:
            request.claim.duration.CopyFrom(_duration(claim))
            request.claim.holder = holder or _default_holder()
            request.claim.priority = priority
            if wait:
                request.claim.wait.CopyFrom(_duration(wait))
        return Placement(self._call("Select", request,
                                    extra_timeout=wait if claim else 0.0,
                                    once=bool(claim)))

    def waiters(self):
        """The claims waiting in the server's queue, in the order they will
        be served (ctxsel.v1.ClaimWaiter: position, kernel, holder,
        priority, waited, ...)."""
        return list(self._call("ListClaims", pb.ListClaimsRequest(
            waiting=True)).waiters)

    def renew(self, claim_id, duration):
        return self._call("RenewClaim", pb.RenewClaimRequest(
            claim_id=claim_id, duration=_duration(duration))).claim

    def release(self, claim_id):
        self._call("ReleaseClaim", pb.ReleaseClaimRequest(claim_id=claim_id))

    def release_holder(self, holder):
        """Ends every claim of `holder`; how many (0 when none)."""
        return self._call("ReleaseClaim", pb.ReleaseClaimRequest(
            holder=holder)).released_count

    def claim(self, kernel, duration, holder=None, wait=0.0, priority=0,
              **job):
        """A context manager: claims the job's devices for `duration`
        seconds (waiting up to `wait` seconds in the server's queue while
        they are all claimed; retrying against a server older than the
        queue), yields the Placement, renews the claims in the background
        every third of `duration`, and releases them on exit."""
        return _Claim(self, kernel, duration, holder, wait,
                      dict(job, priority=priority))


def _duration(seconds):
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return d


def _default_holder():
    import socket
    return "%s@%s:%d" % (os.environ.get("USER", "unknown"),
                         socket.gethostname(), os.getpid())


class _Claim:
    def __init__(self, client, kernel, duration, holder, wait, job):
        self._client = client
        self._args = (kernel, duration, holder, job)
        self._wait = wait
        self._stop = threading.Event()
        self._thread = None
        self.placement = None
        self.renew_error = None

    def __enter__(self):
        kernel, duration, holder, job = self._args
        deadline = time.monotonic() + self._wait
        pause = 0.1
        queued = self._wait > 0
        while True:
            try:
                self.placement = self._client.select(
                    kernel, claim=duration, holder=holder,
                    wait=self._wait if queued else 0.0, **job)
                break
            except errors.AllClaimed as e:
                if queued and e.reason in errors.QUEUE_REASONS:
                    raise  # the server's queue answered: it waited
                queued = False
                if time.monotonic() + pause > deadline:
                    raise
                # Equal jitter, as base/backoff.h: waiters that met the
                # same claim do not all come back in the same moment.
                time.sleep(random.uniform(pause / 2, pause))
                pause = min(2 * pause, 2.0)
        self._thread = threading.Thread(target=self._renew_loop,
                                        args=(duration,), daemon=True)
        self._thread.start()
        return self.placement

    def _renew_loop(self, duration):
        while not self._stop.wait(duration / 3.0):
            for rank in self.placement.ranks:
                try:
                    self._client.renew(rank.claim_id, duration)
                except errors.CtxselError as error:
                    self.renew_error = error

    def __exit__(self, *unused):
        self._stop.set()
        if self._thread:
            self._thread.join()
        for rank in self.placement.ranks:
            try:
                self._client.release(rank.claim_id)
            except errors.NotFound:
                pass  # expired meanwhile
