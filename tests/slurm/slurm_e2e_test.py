"""ctxsel's Slurm integration on a real Slurm (docs/launchers.md, "Slurm").

Starts, as child processes, munged (its own key and socket), slurmctld and
slurmd (-D, a one-node cluster on loopback with two GPUs as GRES backed by
device files made here, proctrack/linuxproc, task/none), a ctxsel-server with
TLS and tokens, and a ctxsel-agent that reports this machine from a devices
file (a host CPU and two H100s, vendor indices 0 and 1), and registers saxpy
with an sm_90 variant and a CPU variant. gres.conf is what `ctxsel-cli slurm
gres-conf` prints. Then, with the SPANK plugin (//slurm:ctxsel_spank.so) in
plugstack.conf as docs/launchers.md writes it:

  env        srun with the options: the documented variables, unquoted; the
             GPU Slurm gave the step; a claim held by slurm-<job>.<step>
  two jobs   --gres=gpu:1 each, at once: each runs on the GPU Slurm gave it
  -n2        two distinct GPUs; -n3 fails the step naming why; with
             fallback=base rank 2 runs the base function on the host CPU
  release    scancel, and a SIGKILLed task, leave no claim within 1 s
  failures   an unreachable server, a wrong token: the step fails, the line
             names the cause
  batch      #SBATCH options: the batch step holds no claim, its srun step does
  gres       slurmd -G on the generated gres.conf agrees with ctxsel; swapped
             lines still agree (Slurm numbers by File=); exchanged File= values
             are named
Then the prolog path (TaskProlog, TaskEpilog, Epilog of docs/launchers.md,
after `scontrol reconfigure`): pinned unquoted, the batch step untouched, two
steps of a job one after another on one GPU, a failure's reason in the job's
output, no claim left, the node not drained.

Every wait is bounded; the whole test takes well under three minutes. Where
Slurm's daemons cannot run (not root, no Slurm installed, a daemon that does
not start) it prints one SKIP line saying why and passes.

usage: slurm_e2e_test.py RUNFILES_ROOT TMPDIR
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT, TMP = sys.argv[1], sys.argv[2]
CLI = os.path.join(ROOT, "client/cli/ctxsel-cli")
SERVER = os.path.join(ROOT, "server/ctxsel-server")
AGENT = os.path.join(ROOT, "agent/ctxsel-agent")
PLUGIN = os.path.join(ROOT, "slurm/ctxsel_spank.so")
DOC = os.path.join(ROOT, "docs/launchers.md")
HOST = socket.gethostname()
UUID = ["GPU-00000000-0000-4000-8000-00000000c0a0",
        "GPU-00000000-0000-4000-8000-00000000c0a1"]
OPTIONS = ["--ctxsel-kernel=saxpy",
           "--ctxsel-construct=target,teams,parallel,for",
           "--ctxsel-var=N=4096"]
START = time.monotonic()
# Slurm's unix sockets (munge, slurmd's step sockets) need short paths:
# Bazel's TMPDIR can be longer than a socket path may be.
W = tempfile.mkdtemp(prefix="ctxsel-slurm-", dir="/tmp")
DAEMONS = []
FAILURES = []


def log(text):
    print("[%5.1fs] %s" % (time.monotonic() - START, text), flush=True)


def check(ok, what, detail=""):
    log(("PASS " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)
        if detail:
            print(detail.rstrip(), flush=True)
    return ok


def skip(why):
    print("SKIP: " + why, flush=True)
    raise SystemExit(0)


def run(argv, timeout=30, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, env=ENV, **kwargs)


def wait_for(predicate, seconds, interval=0.05):
    """predicate()'s first true value within `seconds`, else None."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            return None
        time.sleep(interval)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def daemon(name, argv, env=None):
    out = open(os.path.join(W, name + ".out"), "w")
    DAEMONS.append((name, subprocess.Popen(argv, stdout=out,
                                           stderr=subprocess.STDOUT,
                                           env=env or ENV)))
    return DAEMONS[-1][1]


def tail(name, lines=15):
    path = os.path.join(W, name)
    if not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return "".join(f.readlines()[-lines:])


def doc_block(first_line):
    """The code block of docs/launchers.md whose text holds `first_line`."""
    blocks, block = [], None
    for line in open(DOC):
        if line.startswith("```"):
            if block is not None:
                blocks.append("".join(block))
                block = None
            else:
                block = []
        elif block is not None:
            block.append(line)
    found = [b for b in blocks if first_line in b]
    assert len(found) == 1, "docs/launchers.md: %d blocks with %r" % (
        len(found), first_line)
    return found[0]


def from_doc(text):
    """A documented path or address made this test's own."""
    return (text.replace("ctxsel.example.org:7070", "127.0.0.1:%d" % PORT)
            .replace("/etc/ctxsel/slurm.token", W + "/slurm.token")
            .replace("/etc/ctxsel/ca.pem", W + "/pki/ca.pem")
            .replace("/usr/lib/ctxsel/ctxsel_spank.so", PLUGIN))


def claims():
    """Live claims on this node: [(id, device, holder)]."""
    r = run([CLI, "claims", "ls", HOST, "--no-headers"], timeout=10)
    assert r.returncode == 0, r.stderr
    return [tuple(line.split()[i] for i in (0, 1, 3))
            for line in r.stdout.splitlines() if line.strip()]


def holders():
    return {holder for _, _, holder in claims()}


def task_vars(output):
    """{rank: {NAME: value}} from `srun -l` output of `env`-like lines."""
    ranks = {}
    for line in output.splitlines():
        m = re.match(r"^(\d+): ([A-Z_][A-Z0-9_]*)=(.*)$", line)
        if m:
            ranks.setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3)
    return ranks


# What each task prints: the variables the plugin sets and Slurm's GPUs.
SHOW = ("env | grep -E '^(CTXSEL_|CUDA_VISIBLE_DEVICES|OMP_|SLURM_STEP_GPUS|"
        "SLURM_JOB_ID|SLURM_STEP_ID)'")


def srun(args, command=SHOW, timeout=30):
    return run(["srun", "-l"] + args + ["sh", "-c", command], timeout=timeout)


def plugstack(*extra):
    line = from_doc(doc_block("# /etc/slurm/plugstack.conf").splitlines()[1])
    with open(W + "/plugstack.conf", "w") as f:
        f.write(" ".join([line] + list(extra)) + "\n")


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


# ---------------------------------------------------------------- set-up


def prerequisites():
    if os.geteuid() != 0:
        skip("not root: slurmd runs jobs as their user and mknod needs root")
    missing = [p for p in ("munged", "slurmctld", "slurmd", "srun", "sbatch",
                           "scancel", "scontrol", "sinfo")
               if shutil.which(p) is None]
    if missing:
        skip("Slurm is not installed (no %s): run tools/setup.sh"
             % ", ".join(missing))


def start_ctxsel():
    global PORT
    subprocess.run(["bash", os.path.join(ROOT, "tools/make_certs.sh"),
                    W + "/pki", HOST], check=True, capture_output=True)
    tokens = open(W + "/tokens", "w")
    for role, name in (("admin", "test-admin"), ("launcher", "slurm")):
        with open("%s/%s.token" % (W, name), "w") as token:
            subprocess.run([CLI, "admin", "token", "--role=" + role,
                            "--name=" + name], stdout=token, stderr=tokens,
                           check=True)
    tokens.close()
    write(W + "/wrong.token", "not-a-token-the-server-knows\n")
    daemon("server", [SERVER, "--listen=127.0.0.1:0", "--port_file=" + W + "/port",
                      "--tls_cert=" + W + "/pki/server.pem",
                      "--tls_key=" + W + "/pki/server.key",
                      "--client_ca=" + W + "/pki/ca.pem",
                      "--tokens_file=" + W + "/tokens", "--data_dir=" + W + "/data"])
    port = wait_for(lambda: os.path.exists(W + "/port") and
                    open(W + "/port").read().strip(), 20)
    assert port, "ctxsel-server did not start:\n" + tail("server.out")
    PORT = int(port)
    ENV.update(CTXSEL_SERVER="127.0.0.1:%d" % PORT, CTXSEL_CA=W + "/pki/ca.pem",
               CTXSEL_TOKEN_FILE=W + "/slurm.token")
    write(W + "/devices.json", json.dumps({"devices": [
        {"sycl_architecture": "x86_64", "compute_units": 2,
         "traits": {"isa": ["avx2", "x86_64_v3"], "vendor": ["intel"]}},
        {"sycl_architecture": "nvidia_gpu_sm_90", "compute_units": 132,
         "memory_bytes": 85520809984, "uuid": UUID[0], "vendor_index": 0,
         "agent": {"name": "NVIDIA H100 80GB HBM3"}},
        {"sycl_architecture": "nvidia_gpu_sm_90", "compute_units": 132,
         "memory_bytes": 85520809984, "uuid": UUID[1], "vendor_index": 1,
         "agent": {"name": "NVIDIA H100 80GB HBM3"}}]}))
    daemon("agent", [AGENT, "--server=127.0.0.1:%d" % PORT,
                     "--ca=" + W + "/pki/ca.pem",
                     "--tls_cert=%s/pki/%s.pem" % (W, HOST),
                     "--tls_key=%s/pki/%s.key" % (W, HOST), "--backends=",
                     "--devices_file=" + W + "/devices.json", "--heartbeat=1s"],
           env={k: v for k, v in ENV.items() if k != "CTXSEL_TOKEN_FILE"})
    write(W + "/variants.json", json.dumps({"kernel": "saxpy", "variants": [
        {"name": "saxpy_sm90",
         "selector": "construct={target}, device={arch(nvptx), isa(sm_90)}"},
        {"name": "saxpy_cpu", "selector": "device={kind(cpu)}"}]}))
    r = run([CLI, "--token_file=" + W + "/test-admin.token", "variants",
             "register", "saxpy", "--variants_file=" + W + "/variants.json"])
    assert r.returncode == 0, r.stderr
    listed = wait_for(lambda: len(run([CLI, "devices", "ls", "--node=" + HOST,
                                       "-o", "name"]).stdout.split()) == 3, 20)
    assert listed, "the agent did not report:\n" + tail("agent.out")


def start_slurm():
    os.makedirs(W + "/dev")
    for i, minor in enumerate((3, 7)):  # like /dev/null and /dev/full
        os.mknod("%s/dev/nvidia%d" % (W, i), 0o666 | 0o020000,
                 os.makedev(1, minor))
    r = run([CLI, "slurm", "gres-conf", "--node=" + HOST,
             "--file_prefix=" + W + "/dev/nvidia"])
    assert r.returncode == 0, r.stderr
    write(W + "/gres.conf", r.stdout)
    os.makedirs(W + "/munge", mode=0o711)
    write(W + "/munge/munge.key", os.urandom(1024).hex(), 0o400)
    daemon("munged", ["munged", "-F", "-f", "--socket=" + W + "/munge/socket",
                      "--key-file=" + W + "/munge/munge.key",
                      "--pid-file=" + W + "/munge/pid",
                      "--seed-file=" + W + "/munge/seed",
                      "--log-file=" + W + "/munge/log"])
    if not wait_for(lambda: os.path.exists(W + "/munge/socket"), 10):
        skip("munged did not start: " + tail("munged.out", 3).strip())
    for d in ("state", "spool"):
        os.makedirs(W + "/" + d)
    write(W + "/plugstack.conf", "")
    # Slurm's daemons take fixed ports, found free by binding port 0 and
    # letting go: another process may take one before they bind it. Then
    # they are started again on new ports (three tries), not skipped.
    for attempt in range(3):
        write(W + "/slurm.conf", SLURM_CONF % {
            "w": W, "host": HOST, "ctld": free_port(), "slurmd": free_port()})
        ctld = daemon("slurmctld", ["slurmctld", "-D", "-f", W + "/slurm.conf"])
        # -N: the node is the agent's host name even where slurmd would
        # shorten it.
        slurmd = daemon("slurmd",
                        ["slurmd", "-D", "-N", HOST, "-f", W + "/slurm.conf"])
        idle = wait_for(lambda: "idle" in run(["sinfo", "-h", "-o", "%t"],
                                              timeout=10).stdout, 30, 0.2)
        logs = tail("slurmd.log", 200) + tail("slurmctld.log", 200)
        if idle or "Address already in use" not in logs or attempt == 2:
            break
        log("a Slurm port was taken meanwhile; starting again on new ports")
        for process in (ctld, slurmd):
            process.terminate()
            process.wait(timeout=10)
        DAEMONS[:] = [d for d in DAEMONS if d[1] not in (ctld, slurmd)]
    if not idle:
        skip("Slurm's daemons did not bring node %s up within 30 s: %s" % (
            HOST, " | ".join(
                l for l in (tail("slurmd.log", 200) + tail("slurmctld.log", 200))
                .splitlines() if "error" in l)[-3:]))
    log("Slurm is up: node %s idle, gres %s" % (HOST, run(
        ["sinfo", "-h", "-o", "%G"]).stdout.strip()))


SLURM_CONF = """\
ClusterName=ctxseltest
SlurmctldHost=localhost
SlurmctldPort=%(ctld)d
SlurmdPort=%(slurmd)d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%(w)s/munge/socket
CredType=cred/munge
StateSaveLocation=%(w)s/state
SlurmdSpoolDir=%(w)s/spool
SlurmctldPidFile=%(w)s/slurmctld.pid
SlurmdPidFile=%(w)s/slurmd.pid
SlurmctldLogFile=%(w)s/slurmctld.log
SlurmdLogFile=%(w)s/slurmd.log
SlurmdDebug=verbose
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
ReturnToService=2
KillWait=1
PlugStackConfig=%(w)s/plugstack.conf
NodeName=%(host)s NodeAddr=127.0.0.1 CPUs=2 Gres=gpu:sm_90:2 State=UNKNOWN
PartitionName=main Nodes=%(host)s Default=YES MaxTime=INFINITE State=UP
"""


# ---------------------------------------------------------------- the plugin


def test_environment():
    r = srun(["--gres=gpu:1"] + OPTIONS,
             SHOW + "; ctxsel-cli claims ls --no-headers | sed 's/^/HELD /'")
    if not check(r.returncode == 0, "env: srun with the options runs",
                 r.stdout + r.stderr):
        return
    v = task_vars(r.stdout).get(0, {})
    gpu = int(v.get("SLURM_STEP_GPUS", "-1"))
    holder = "slurm-%s.%s" % (v.get("SLURM_JOB_ID"), v.get("SLURM_STEP_ID"))
    check(v.get("CTXSEL_VARIANT") == "saxpy_sm90" and
          v.get("CTXSEL_DEVICE") == "%s/gpu%d" % (HOST, gpu) and
          v.get("CUDA_VISIBLE_DEVICES") == UUID[gpu] and
          v.get("OMP_DEFAULT_DEVICE") == "0" and
          not any("'" in x or '"' in x for x in v.values()),
          "env: CTXSEL_VARIANT, CTXSEL_DEVICE, CUDA_VISIBLE_DEVICES of the "
          "GPU Slurm gave (SLURM_STEP_GPUS=%d), unquoted" % gpu, r.stdout)
    claimed = [l.split() for l in r.stdout.splitlines() if "HELD " in l]
    check(len(claimed) == 1 and claimed[0][2] == v.get("CTXSEL_CLAIM") and
          claimed[0][3] == "%s/gpu%d" % (HOST, gpu) and claimed[0][5] == holder,
          "env: the task's device is claimed by %s" % holder, r.stdout)
    check(wait_for(lambda: holder not in holders(), 1.0) is not None,
          "env: the claim is released when the task exits")


def test_two_jobs():
    for round in range(2):
        jobs = [subprocess.Popen(
            ["srun", "-l", "--gres=gpu:1"] + OPTIONS +
            ["sh", "-c", SHOW + "; sleep 1.5"], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=ENV) for _ in range(2)]
        got = []
        for job in jobs:
            out, err = job.communicate(timeout=30)
            v = task_vars(out).get(0, {})
            got.append((v.get("SLURM_STEP_GPUS"), v.get("CTXSEL_DEVICE"),
                        v.get("CUDA_VISIBLE_DEVICES"), err))
        ok = sorted(g[0] or "" for g in got) == ["0", "1"] and all(
            g[1] == "%s/gpu%s" % (HOST, g[0]) and g[2] == UUID[int(g[0])]
            for g in got)
        check(ok, "two jobs with --gres=gpu:1 at once (round %d): each on the "
              "GPU Slurm gave it %s" % (round + 1, [g[:2] for g in got]),
              repr(got))


def test_ranks():
    r = srun(["-n2", "--gres=gpu:2"] + OPTIONS)
    v = task_vars(r.stdout)
    devices = sorted(v.get(i, {}).get("CUDA_VISIBLE_DEVICES", "") for i in (0, 1))
    check(r.returncode == 0 and devices == sorted(UUID) and
          v[0]["CTXSEL_CLAIM"] != v[1]["CTXSEL_CLAIM"],
          "-n2 --gres=gpu:2: two distinct GPUs, two claims",
          r.stdout + r.stderr)
    r = srun(["-n3", "--overcommit", "--gres=gpu:2"] + OPTIONS)
    job = (task_vars(r.stdout).get(0) or {}).get("SLURM_JOB_ID", "?")
    want = ("ctxsel: rank 2 of slurm-%s.0: every device of the step's "
            "allocation (SLURM_STEP_GPUS=0,1) that fits saxpy is claimed" % job)
    check(r.returncode != 0 and want in r.stderr and
          sum("ctxsel:" in l for l in r.stderr.splitlines()) == 1,
          "-n3 on 2 GPUs: the step fails, one line naming why", r.stderr)
    plugstack("fallback=base")
    r = srun(["-n3", "--overcommit", "--gres=gpu:2"] + OPTIONS)
    plugstack()
    v = task_vars(r.stdout).get(2, {})
    check(r.returncode == 0 and v.get("CTXSEL_VARIANT") == "saxpy" and
          v.get("CTXSEL_DEVICE") == HOST + "/cpu0" and
          v.get("OMP_TARGET_OFFLOAD") == "DISABLED" and
          "running the base function of saxpy on the host CPU "
          "(fallback=base)" in r.stderr,
          "-n3 with fallback=base: rank 2 runs the base function on the host "
          "CPU, and says so", r.stdout + r.stderr)
    check(wait_for(lambda: not claims(), 1.0) is not None,
          "-n2, -n3: no claim left")


def test_release():
    job = subprocess.Popen(["srun", "--gres=gpu:1"] + OPTIONS + ["sleep", "60"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=ENV)
    held = wait_for(lambda: [h for h in holders() if h.endswith(".0")], 10)
    if check(bool(held), "scancel: the step holds a claim"):
        started = time.monotonic()
        run(["scancel", held[0].split("-")[1].split(".")[0]])
        gone = wait_for(lambda: held[0] not in holders(), 3)
        elapsed = time.monotonic() - started
        check(gone is not None and elapsed <= 1.0,
              "scancel: no claim %.2f s later" % elapsed)
    job.wait(timeout=20)

    pids = W + "/pids"
    job = subprocess.Popen(
        ["srun", "-l", "-n2", "--gres=gpu:2"] + OPTIONS +
        ["sh", "-c", "echo $$ > %s.$SLURM_PROCID; exec sleep 60" % pids],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    both = wait_for(lambda: os.path.exists(pids + ".0") and
                    os.path.exists(pids + ".1") and len(claims()) == 2 and
                    claims(), 10)
    if check(bool(both), "SIGKILL: two tasks hold a claim each"):
        pid = int(open(pids + ".0").read())
        env0 = open("/proc/%d/environ" % pid).read().split("\0")
        mine = [e.split("=", 1)[1] for e in env0 if e.startswith("CTXSEL_CLAIM=")]
        started = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        gone = wait_for(lambda: mine and mine[0] not in
                        [c[0] for c in claims()], 3)
        elapsed = time.monotonic() - started
        left = claims()
        check(gone is not None and elapsed <= 1.0 and len(left) == 1,
              "SIGKILL: the killed task's claim is gone %.2f s later, its "
              "sibling's stays" % elapsed, repr(left))
        run(["scancel", left[0][2].split("-")[1].split(".")[0]] if left else
            ["true"])
    job.wait(timeout=20)
    check(wait_for(lambda: not claims(), 2) is not None,
          "release: no claim left")


def test_failures():
    dead = free_port()
    with open(W + "/plugstack.conf", "w") as f:
        f.write("required %s server=127.0.0.1:%d insecure timeout=2s\n"
                % (PLUGIN, dead))
    r = srun(["--gres=gpu:1"] + OPTIONS, "echo ran")
    check(r.returncode != 0 and "ran" not in r.stdout and re.search(
        r"ctxsel: rank 0 of slurm-\d+\.0: ctxsel server 127\.0\.0\.1:%d did "
        r"not answer .*(onnect|refused)" % dead, r.stderr),
          "unreachable server: the step fails, naming the server and why",
          r.stderr)
    plugstack()
    with open(W + "/plugstack.conf") as f:
        line = f.read().replace(W + "/slurm.token", W + "/wrong.token")
    with open(W + "/plugstack.conf", "w") as f:
        f.write(line)
    r = srun(["--gres=gpu:1"] + OPTIONS, "echo ran")
    check(r.returncode != 0 and "ran" not in r.stdout and
          "refused the plugin's credentials (token_file=" in r.stderr and
          "UNAUTHENTICATED" in r.stderr.upper(),
          "wrong token: the step fails, naming the credentials", r.stderr)
    plugstack()
    r = srun(["--gres=gpu:1", "--ctxsel-var=N=4k"] + OPTIONS[:2], "echo ran")
    check(r.returncode != 0 and "--ctxsel-var=N=4k" in r.stderr,
          "a bad --ctxsel-var is refused by srun itself", r.stderr)
    r = srun(["--gres=gpu:1"], "echo CUDA=$CUDA_VISIBLE_DEVICES "
             "STEP=$SLURM_STEP_GPUS CTXSEL=$CTXSEL_VARIANT.")
    m = re.search(r"CUDA=(\d) STEP=(\d) CTXSEL=\.", r.stdout)
    check(r.returncode == 0 and m and m.group(1) == m.group(2),
          "a step without the options is left alone", r.stdout + r.stderr)


def test_batch():
    script = doc_block("#SBATCH --ctxsel-kernel=saxpy").replace(
        "srun ./saxpy",
        "echo \"batch: CTXSEL_VARIANT=${CTXSEL_VARIANT:-unset}\"\n"
        "ctxsel-cli claims ls --no-headers | sed 's/^/batch claim: /'\n"
        "srun sh -c 'echo \"step: CTXSEL_DEVICE=$CTXSEL_DEVICE\"; "
        "ctxsel-cli claims ls --no-headers | sed \"s/^/step claim: /\"'\n")
    write(W + "/batch.sh", script, 0o755)
    r = run(["sbatch", "-W", "-o", W + "/batch.out", W + "/batch.sh"], timeout=40)
    out = open(W + "/batch.out").read() if os.path.exists(W + "/batch.out") else ""
    job = re.search(r"Submitted batch job (\d+)", r.stdout)
    step_claims = [l for l in out.splitlines() if l.startswith("step claim: ")]
    check(r.returncode == 0 and job and
          "batch: CTXSEL_VARIANT=unset" in out and "batch claim: " not in out and
          re.search(r"step: CTXSEL_DEVICE=%s/gpu\d" % HOST, out) and
          len(step_claims) == 1 and
          step_claims[0].split()[5] == "slurm-%s.0" % job.group(1),
          "#SBATCH options: the batch step holds no claim, its srun step one",
          r.stdout + r.stderr + out)


def test_gres():
    g = run(["slurmd", "-G", "-f", W + "/slurm.conf"])
    r = run([CLI, "slurm", "check", "--gres_conf=-", "--node=" + HOST,
             "--file_prefix=" + W + "/dev/nvidia"], input=g.stdout + g.stderr)
    check(r.returncode == 0 and "agree" in r.stdout,
          "gres: slurmd -G on the generated gres.conf agrees with ctxsel",
          g.stderr + r.stdout + r.stderr)
    lines = open(W + "/gres.conf").read().splitlines()
    alt = W + "/alt"
    os.makedirs(alt)
    shutil.copy(W + "/slurm.conf", alt + "/slurm.conf")
    write(alt + "/gres.conf", "\n".join([lines[0], lines[2], lines[1]]) + "\n")
    g = run(["slurmd", "-G", "-f", alt + "/slurm.conf"])
    indices = re.findall(r"Index=(\d+) .*File=\S*nvidia(\d)", g.stdout + g.stderr)
    r = run([CLI, "slurm", "check", "--gres_conf=" + alt + "/gres.conf",
             "--node=" + HOST, "--file_prefix=" + W + "/dev/nvidia"])
    check(r.returncode == 0 and indices and all(i == f for i, f in indices),
          "gres: swapped lines: slurmd still numbers by File= %s, check "
          "agrees" % indices, g.stdout + g.stderr + r.stdout + r.stderr)
    files = [re.search(r"File=(\S+)", l).group(1) for l in lines[1:3]]
    swapped = [lines[0], lines[1].replace(files[0], files[1]),
               lines[2].replace(files[1], files[0])]
    write(alt + "/gres.conf", "\n".join(swapped) + "\n")
    r = run([CLI, "slurm", "check", "--gres_conf=" + alt + "/gres.conf",
             "--node=" + HOST, "--file_prefix=" + W + "/dev/nvidia"])
    check(r.returncode == 1 and all(
        "%s/gpu%d (vendor index %d, %s)" % (HOST, i, i, UUID[i]) in r.stdout
        for i in (0, 1)),
          "gres: exchanged File= values: check names both GPUs, exit 1",
          r.stdout + r.stderr)


# ---------------------------------------------------------------- prolog path


def prolog_path():
    scripts = {}
    for name, marker in (("TaskProlog", "task_prolog.sh (slurm.conf"),
                         ("TaskEpilog", "task_epilog.sh (slurm.conf"),
                         ("Epilog", "epilog.sh (slurm.conf: Epilog")):
        path = "%s/%s.sh" % (W, name.lower())
        text = from_doc(doc_block(marker)).replace(
            "ctxsel-cli ", os.path.dirname(CLI) + "/ctxsel-cli ")
        write(path, text, 0o755)
        scripts[name] = path
    with open(W + "/slurm.conf", "a") as f:
        for name, path in scripts.items():
            f.write("%s=%s\n" % (name, path))
    write(W + "/plugstack.conf", "")
    r = run(["scontrol", "reconfigure"])
    check(r.returncode == 0, "prolog path: scontrol reconfigure", r.stderr)
    job_env = dict(ENV, CTXSEL_KERNEL="saxpy",
                   CTXSEL_CONSTRUCT="target,teams,parallel,for",
                   CTXSEL_VARS="N=4096")
    job_env.pop("CTXSEL_TOKEN_FILE")  # the prolog's own, not the job's
    # The reconfigured slurmd runs the prolog from its next step on.
    ran = wait_for(lambda: "CTXSEL_VARIANT" in subprocess.run(
        ["srun", "--gres=gpu:1", "env"], capture_output=True, text=True,
        env=job_env, timeout=30).stdout, 15, 0.5)
    check(bool(ran), "prolog path: the TaskProlog runs after reconfigure")
    r = subprocess.run(
        ["srun", "-l", "--gres=gpu:1", "sh", "-c",
         SHOW + "; ctxsel-cli --token_file=%s/slurm.token claims ls "
         "--no-headers | sed 's/^/HELD /'" % W],
        capture_output=True, text=True, env=job_env, timeout=30)
    v = task_vars(r.stdout).get(0, {})
    gpu = int(v.get("SLURM_STEP_GPUS", "-1"))
    held = [l.split() for l in r.stdout.splitlines() if "HELD " in l]
    check(r.returncode == 0 and v.get("CTXSEL_VARIANT") == "saxpy_sm90" and
          v.get("CUDA_VISIBLE_DEVICES") == UUID[gpu] and len(held) == 1 and
          held[0][5] == "slurm-%s.0" % v.get("SLURM_JOB_ID"),
          "prolog path: unquoted variables of the step's GPU, a claim held by "
          "slurm-<job>.0", r.stdout + r.stderr)
    check(wait_for(lambda: not claims(), 1.0) is not None,
          "prolog path: the TaskEpilog released it")
    script = ("#!/bin/sh\n#SBATCH --gres=gpu:1\n"
              "echo \"batch: ${CTXSEL_VARIANT:-unset}\"\n"
              "srun sh -c 'echo \"step 0: $CTXSEL_DEVICE\"'\n"
              "srun sh -c 'echo \"step 1: $CTXSEL_DEVICE\"'\n")
    write(W + "/prolog_batch.sh", script, 0o755)
    r = subprocess.run(["sbatch", "-W", "-o", W + "/prolog_batch.out",
                        W + "/prolog_batch.sh"], capture_output=True,
                       text=True, env=job_env, timeout=40)
    out = open(W + "/prolog_batch.out").read()
    check(r.returncode == 0 and "batch: unset" in out and
          re.search(r"step 0: %s/gpu\d" % HOST, out) and
          re.search(r"step 1: %s/gpu\d" % HOST, out),
          "prolog path: the batch step untouched; two steps one after another "
          "on the job's GPU", out + r.stderr)
    r = subprocess.run(["srun", "--gres=gpu:1", "echo", "ran"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(job_env, CTXSEL_KERNEL="nosuchkernel"))
    check(r.returncode != 0 and "ran" not in r.stdout and
          re.search(r"ctxsel: .*nosuchkernel", r.stdout),
          "prolog path: a failed select fails the task, its reason in the "
          "job's output", r.stdout + r.stderr)
    # The Epilog releases what a task left, and never fails.
    take = run([CLI, "select", "--kernel=saxpy",
                "--construct=target,teams,parallel,for", "--var=N=4096",
                "--nodes=" + HOST, "--claim=10m", "--holder=slurm-999.3"])
    epilog = subprocess.run([scripts["Epilog"]], capture_output=True, text=True,
                            timeout=30, env=dict(ENV, SLURM_JOB_ID="999",
                                                 SLURMD_NODENAME=HOST))
    check(take.returncode == 0 and epilog.returncode == 0 and
          "slurm-999.3" not in holders(),
          "prolog path: the Epilog releases a job's claims by holder",
          take.stderr + epilog.stderr)
    down = W + "/epilog_server_down.sh"
    write(down, open(scripts["Epilog"]).read().replace(
        "127.0.0.1:%d" % PORT, "127.0.0.1:%d" % free_port()), 0o755)
    epilog = subprocess.run([down], capture_output=True, text=True, timeout=30,
                            env=dict(ENV, SLURM_JOB_ID="999",
                                     SLURMD_NODENAME=HOST))
    state = run(["sinfo", "-h", "-o", "%t"]).stdout.strip()
    check(epilog.returncode == 0 and state in ("idle", "mix", "alloc"),
          "prolog path: the Epilog exits 0 with the server down; node %s"
          % state, epilog.stderr)


# ---------------------------------------------------------------- main


def stop_daemons():
    run(["scancel", "--user=root"], timeout=10) if shutil.which("scancel") else None
    for name, process in reversed(DAEMONS):
        if process.poll() is None:
            process.terminate()
    for name, process in reversed(DAEMONS):
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def timed_out(signum, frame):
    raise SystemExit("FAIL: the test ran past 170 s")


def main():
    global ENV
    ENV = dict(os.environ, SLURM_CONF=W + "/slurm.conf",
               PATH=os.path.dirname(CLI) + ":" + os.environ["PATH"])
    for name in list(ENV):
        if name.startswith(("SLURM_", "CUDA_", "CTXSEL_")) and name != "SLURM_CONF":
            ENV.pop(name)
    signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(170)  # the whole test: a hang fails it, well within Bazel's
    try:
        prerequisites()
        start_ctxsel()
        start_slurm()
        plugstack()
        for test in (test_environment, test_two_jobs, test_ranks, test_release,
                     test_failures, test_batch, test_gres, prolog_path):
            try:
                test()
            except (AssertionError, subprocess.TimeoutExpired, OSError,
                    KeyError, ValueError, IndexError) as e:
                check(False, "%s: %s: %s" % (test.__name__, type(e).__name__, e))
    finally:
        try:
            stop_daemons()
        finally:
            if FAILURES:
                for name in ("slurmd.log", "slurmctld.log", "server.out",
                             "agent.out"):
                    print("--- %s (tail)\n%s" % (name, tail(name, 25)))
            shutil.rmtree(W, ignore_errors=True)
    log("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
