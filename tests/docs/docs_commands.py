"""Runs every ctxsel command shown in README.md and docs/*.md against a real
server, real agents (this machine and the fleet fixtures) and the real CLI.

Commands are the lines of ```sh (or bash/shell) code blocks that name
ctxsel-cli, ctxsel-server or ctxsel-agent (continuation lines joined,
`# comments` dropped), run in document order, each in bash with the environment the
previous ones exported (so `eval "$(... --format=env)"` feeds `$CTXSEL_CLAIM`).
Other lines of a block (shell glue such as `exec ./saxpy`) are not run.

Substitution rules, applied to every command before it runs (SUBSTITUTIONS):
addresses and paths that a test cannot use as written become the test's own
(HOST:7070 -> the test server; /var/lib/ctxsel, /backups, /ctxsel/env ->
the test's temporary directory), placeholder files become real ones
(kernels.c -> tools/demo/saxpy.c, selectors.json -> tools/demo/
spec_scoring.json, saxpy.json -> a variants file written here; ./app and
./hip_app -> docs/binaries.md's fatbins, from images/image_fixtures_tool;
commands run
in tests/sources/corpus, where docs/sources.md's files are), an example
claim id ->
the claim the previous command took, `[OPTIONAL]` parts are dropped
(`[--max_events=N]` -> --max_events=1 so watch ends), ./saxpy -> echo.
Security files are the test's own: tools/make_certs.sh makes TMP/pki (the
CA, the server's certificate, and node certificates for n1..n3, n7 and this
machine's host name), so ca.pem, server.pem/.key, n7.pem/.key and
NODE.pem/.key (the agent on this machine) -> TMP/pki/...;
/etc/ctxsel/tokens -> TMP/tokens; admin.token, slurm.token -> TMP/....
A server after the first (docs/security.md's) gets its own data directory,
since the first holds the documented one's lock.

Every server runs TLS with tokens as documented; every command gets
$CTXSEL_CA (TMP/pki/ca.pem) and $CTXSEL_TOKEN_FILE (an admin token the test
issues with `ctxsel-cli admin token` before the first command), so commands
printed without --ca or a token reach the server as the docs' exported
environment would. The fleet's simulated agents use their node certificates.
Commands before the first server (issuing tokens) run with no server.

ctxsel-server and ctxsel-agent lines are daemons: started in the background
on 127.0.0.1 port 0 and checked to serve. Every other command must exit 0
unless EXPECTED_EXIT says otherwise. Lines naming them in blocks of another
language (a diagram, a synopsis) are not commands: each is printed as SKIP
with the reason, as are the entries of SKIPPED.

usage: docs_commands.py RUNFILES_ROOT TMPDIR
"""
import os
import re
import socket
import subprocess
import sys
import time

ROOT, TMP = sys.argv[1], sys.argv[2]
DOCS = ["README.md"] + sorted(
    "docs/" + f for f in os.listdir(os.path.join(ROOT, "docs"))
    if f.endswith(".md"))

# (document, first line of the command) -> why it is not run.
SKIPPED = {
    ("docs/launchers.md", "ctxsel-cli slurm check"):
        "tests/slurm runs it on the gres.conf a real slurmd loads",
    ("docs/launchers.md", "slurmd -G"):
        "tests/slurm runs it on the gres.conf a real slurmd loads",
    ("docs/launchers.md", 'ctxsel-cli select --kernel="$CTXSEL_KERNEL"'):
        "tests/slurm runs the TaskProlog in a real Slurm",
}
# Documents whose commands another test runs, in the setting they need.
SKIPPED_DOCS = {
    "docs/coverage.md": "tests/agent/coverage_e2e_test.cc runs its commands "
                        "(from the repository root, with its fixtures and jq)",
    "docs/deployment.md": "tests/etcd/deployment_doc_test runs its commands "
                          "(a real etcd with TLS and authentication)",
    "docs/operations.md": "tests/ops/operations_doc_test runs its commands "
                          "(install.sh, systemd units, backup and restore)",
}
SHELL_BLOCKS = ("sh", "bash", "shell")
# (document, start of the command) -> its documented exit code.
EXPECTED_EXIT = {
    ("docs/sources.md", "ctxsel-cli variants register --from_source --keep_going"):
        2,  # documented: exits 2 when a kernel was skipped
}
# Documents whose select and run examples must pass --construct and place a
# variant on an accelerator: ctxsel-cli prints a note on stderr when it
# places the base function or a host CPU (NOTE), and a prolog's `|| echo`
# prints "no placement" when it placed nothing.
NON_BASE_DOCS = ("docs/launchers.md",)
PLACING = re.compile(r"\bctxsel-cli (select|run)\b")
NOTE = "ctxsel-cli: note:"
# Commands that, run as printed, must leave a GPU visibility variable in the
# environment: the launcher example of README.md and docs/service.md.
MUST_EXPORT_GPU = re.compile(r'eval .*--construct=target,teams,parallel,for.*--format=env')
GPU_VARS = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK")


HOST_NODE = socket.gethostname()


def substitutions(port):
    pki = TMP + "/pki/"
    return [
        ("=server.pem", "=" + pki + "server.pem"),
        ("=server.key", "=" + pki + "server.key"),
        ("=ca.pem", "=" + pki + "ca.pem"),
        ("=NODE.pem", "=" + pki + HOST_NODE + ".pem"),
        ("=NODE.key", "=" + pki + HOST_NODE + ".key"),
        ("=n7.pem", "=" + pki + "n7.pem"),
        ("=n7.key", "=" + pki + "n7.key"),
        ("/etc/ctxsel/tokens", TMP + "/tokens"),
        ("admin.token", TMP + "/admin.token"),
        ("slurm.token", TMP + "/slurm.token"),
        ("bazel-bin/client/cli/ctxsel-cli", "ctxsel-cli"),
        ("HOST:7070", "127.0.0.1:%d" % port),
        ("/var/lib/ctxsel", TMP + "/var-lib-ctxsel"),
        ("/backups/", TMP + "/backups/"),
        ("/ctxsel/env", TMP + "/ctxsel-env"),
        (" kernels.c", " " + ROOT + "/tools/demo/saxpy.c"),
        (" selectors.json", " " + ROOT + "/tools/demo/spec_scoring.json"),
        ("=saxpy.json", "=" + TMP + "/saxpy.json"),
        ("c-5f1e0c2a9b3d4e67", "$CTXSEL_CLAIM"),
        ("[--max_events=N]", "--max_events=1"),
        ("./saxpy", "echo saxpy"),
        ("=./app", "=" + TMP + "/app"),
        ("=./hip_app", "=" + TMP + "/hip_app"),
    ]


def commands(doc):
    """(line number, command) for each ctxsel command in doc's code blocks."""
    out, in_block, text, start, lang = [], False, "", 0, ""
    for number, line in enumerate(open(os.path.join(ROOT, doc)), 1):
        line = line.rstrip("\n")
        if line.startswith("```"):
            in_block = not in_block
            lang = line[3:].strip()
            continue
        if not in_block:
            continue
        if not text:
            start = number
        text = (text + " " + line.strip()) if text else line
        if text.endswith("\\"):
            text = text[:-1].rstrip()
            continue
        if re.search(r"(^|[\s\"(/])ctxsel-(cli|server|agent)\b", text):
            out.append((start, re.sub(r"\s+#\s.*$", "", text).strip(),
                        lang in SHELL_BLOCKS))
        text = ""
    return out


def wait_for(predicate, what, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise SystemExit("timed out waiting for " + what)


def main():
    os.makedirs(TMP + "/backups", exist_ok=True)
    env = dict(os.environ)
    env.update(PATH=TMP + "/bin:" + env["PATH"], CTXSEL_KERNEL="saxpy",
               CTXSEL_N="4096", SLURMD_NODENAME="n1", NODE_NAME="n2")
    # A Slurm step given n1's second GPU (docs/launchers.md's prolog, epilog
    # and srun examples), and a pod's UID (its Kubernetes examples).
    env.update(SLURM_JOB_ID="42", SLURM_STEP_ID="0", SLURM_STEP_GPUS="1",
               POD_UID="0b7c5e4e-6f0a-4d2b-9a51-3c2d1e0f9a87")
    for launcher_var in ("SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES",
                         "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                         "ZE_AFFINITY_MASK", "SLURM_PROCID",
                         "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        env.pop(launcher_var, None)
    env.pop("CTXSEL_SERVER", None)
    env.update(CTXSEL_CA=TMP + "/pki/ca.pem",
               CTXSEL_TOKEN_FILE=TMP + "/fixture-admin.token")
    os.makedirs(TMP + "/bin", exist_ok=True)
    for name, path in [("ctxsel-cli", "client/cli/ctxsel-cli"),
                       ("ctxsel-server", "server/ctxsel-server"),
                       ("ctxsel-agent", "agent/ctxsel-agent")]:
        link = os.path.join(TMP, "bin", name)
        if not os.path.exists(link):
            os.symlink(os.path.join(ROOT, path), link)
    with open(TMP + "/saxpy.json", "w") as f:
        f.write('{"kernel": "saxpy", "variants": [{"name": "saxpy_nv", '
                '"selector": "construct={target}, device={arch(nvptx)}"}]}')
    # docs/binaries.md's programs: a CUDA fatbin (PTX sm_80, a cubin for
    # the H100 fixture's sm_90) and a HIP one (the MI250X's gfx90a).
    tool = os.path.join(ROOT, "images/image_fixtures_tool")
    subprocess.run([tool, "cuda", TMP + "/app", "ptx:sm_80", "cubin:sm_90"],
                   check=True)
    subprocess.run([tool, "hip", TMP + "/hip_app", "gfx90a:xnack-"],
                   check=True)
    subprocess.run(["bash", os.path.join(ROOT, "tools/make_certs.sh"),
                    TMP + "/pki", "n1", "n2", "n3", "n7", HOST_NODE],
                   check=True, capture_output=True)
    with open(TMP + "/fixture-admin.token", "w") as token, \
            open(TMP + "/tokens", "a") as tokens:
        subprocess.run(["ctxsel-cli", "admin", "token", "--role=admin",
                        "--name=docs-test"], env=daemon_env(env), stdout=token,
                       stderr=tokens, check=True)
    env_file = TMP + "/exported.sh"
    open(env_file, "w").close()
    daemons, port, failures, ran = [], None, [], 0
    try:
        for doc in DOCS:
            if doc in SKIPPED_DOCS:
                print("SKIP %s: %s" % (doc, SKIPPED_DOCS[doc]))
                continue
            for number, command, shell in commands(doc):
                where = "%s:%d" % (doc, number)
                if not shell:
                    print("SKIP %s: not a shell block: %s" % (where, command))
                    continue
                if any(doc == d and command.startswith(c)
                       for (d, c) in SKIPPED):
                    print("SKIP %s: %s" % (where, command))
                    continue
                daemon = re.match(r"ctxsel-(server|agent)\b", command)
                for old, new in substitutions(port or 0):
                    command = command.replace(old, new)
                command = re.sub(r" \[[A-Z_]+\]", "", command)  # [NODE]
                ran += 1
                print("RUN  %s: %s" % (where, command), flush=True)
                if daemon:
                    port_file = "%s/port%d" % (TMP, len(daemons))
                    argv = command.split()
                    if port is None and daemon.group(1) != "server":
                        raise SystemExit(where + ": an agent before the server")
                    if daemon.group(1) == "server":
                        argv = [a for a in argv if not a.startswith("--listen=")]
                        if port is not None:  # a second server: its own store
                            argv = [a.replace("/var-lib-ctxsel", "/var-lib-ctxsel-%d"
                                              % len(daemons)) for a in argv]
                        argv += ["--listen=127.0.0.1:0", "--port_file=" + port_file]
                    else:
                        argv += ["--heartbeat=1s"]
                    log = open(port_file + ".log", "w")
                    daemons.append(subprocess.Popen(argv, env=daemon_env(env), stdout=log,
                                                    stderr=log))
                    if daemon.group(1) == "server":
                        wait_for(lambda: os.path.exists(port_file) and
                                 open(port_file).read().strip(), where + " port")
                        if port is None:
                            port = int(open(port_file).read())
                            start_fleet(env, port, daemons)
                    time.sleep(0.5)
                    if daemons[-1].poll() is not None:
                        failures.append(where + ": exited; see " + port_file + ".log")
                    elif daemon.group(1) == "server" and len(daemons) > 1 and port != int(open(port_file).read()):
                        daemons.pop().terminate()  # a second server (restore): it served
                    continue
                script = ('. "%s"; %s\nrc=$?; export -p > "%s"; exit $rc'
                          % (env_file, command, env_file))
                result = subprocess.run(
                    ["bash", "-c", script],
                    env=dict(env, CTXSEL_SERVER="127.0.0.1:%d" % port)
                    if port is not None else env,
                    cwd=os.path.join(ROOT, "tests/sources/corpus"),
                    capture_output=True, text=True, timeout=60)
                want = next((code for (d, c), code in EXPECTED_EXIT.items()
                             if d == doc and command.startswith(c)), 0)
                if result.returncode != want:
                    failures.append("%s: exit %d, want %d: %s\n%s%s" % (
                        where, result.returncode, want, command, result.stdout,
                        result.stderr))
                if doc in NON_BASE_DOCS and PLACING.search(command):
                    if "--construct" not in command:
                        failures.append(where + ": no --construct: " + command)
                    if NOTE in result.stderr or "no placement" in result.stdout:
                        failures.append("%s: placed a fallback, or nothing: %s\n%s" % (
                            where, command, result.stderr))
                if MUST_EXPORT_GPU.search(command):
                    exported = open(env_file).read()
                    if not any("declare -x %s=" % v in exported for v in GPU_VARS):
                        failures.append(where + ": exported no GPU visibility variable")
        ran += check_conventions(env, port, failures)
    finally:
        for d in daemons:
            d.terminate()
            d.wait()
    print("%d commands run, %d failed" % (ran, len(failures)))
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures or ran < 30 else 0


# The CLI's conventions against the same server and fleet: (arguments,
# exit code, a regular expression stdout must match).
CONVENTIONS = [
    (["devices", "ls", "--node=n1"], 0,
     r"(?s)^DEVICE .* CLASS .*n1/cpu0 .* x86_64_v4/amx .*n1/gpu0 .* "
     r"nvidia_gpu_sm_90 "),
    (["devices", "ls", "--node=n1", "-o", "wide"], 0,
     r"device=\{kind\(gpu, nohost\)"),
    (["devices", "ls", "--node=n1", "-o", "name"], 0,
     r"^n1/cpu0\nn1/gpu0\nn1/gpu1\n$"),
    (["devices", "ls", "--node=n1", "-o", "json"], 0,
     r'"memory_bytes":85520809984,'),
    (["devices", "ls", "--node=n1", "-o", "yaml"], 0,
     r"\n  - id: \"n1/gpu0\"\n(.|\n)*    memory_bytes: 85520809984\n"),
    (["nodes", "ls", "--no-headers"], 0, r"^n1 "),
    (["select", "--kernel=saxpy", "--var=N=4096", "--nodes=n1",
      "--construct=target,teams,parallel,for"], 0,
     r"^\S+ on n1/gpu\d \[nvidia_gpu_sm_90\] score"),
    (["select", "--help"], 0, r"^usage: ctxsel-cli select --kernel=K"),
    (["--version"], 0, r"^ctxsel-cli \d+\.\d+"),
    (["nodes", "ls", "--kernel=saxpy"], 2, r"^$"),
    (["nodes", "ls", "--bogus"], 2, r"^$"),
    (["select", "--kernel=saxpy", "--top_k=many"], 2, r"^$"),
    (["select", "--kernel=saxpy", "--var=N=1", "--nodes=nowhere"], 1, r"^$"),
    # Unquoted, for a Slurm TaskProlog and env files.
    (["select", "--kernel=saxpy", "--var=N=4096", "--nodes=n1",
      "--construct=target,teams,parallel,for", "--format=slurm"], 0,
     r"^export CTXSEL_VARIANT=saxpy_\w+\n(export [A-Z_]+=[-\w.,:/@+=]*\n)+$"),
    (["select", "--kernel=saxpy", "--var=N=4096", "--nodes=n1",
      "--construct=target,teams,parallel,for", "--format=dotenv"], 0,
     r"^CTXSEL_VARIANT=saxpy_\w+\n([A-Z_]+=[-\w.,:/@+=]*\n)+$"),
    (["claims", "release", "--holder=nobody"], 0,
     r"^released 0 claims of nobody\n$"),
]


def check_conventions(env, port, failures):
    for args, want, pattern in CONVENTIONS:
        argv = ["ctxsel-cli", "--server=127.0.0.1:%d" % port] + args
        print("RUN  conventions: " + " ".join(argv[2:]), flush=True)
        result = subprocess.run(argv, env=env, capture_output=True, text=True,
                                timeout=60)
        if result.returncode != want or not re.search(pattern, result.stdout):
            failures.append("%s: exit %d (want %d), stdout does not match %r:\n%s%s"
                            % (" ".join(args), result.returncode, want, pattern,
                               result.stdout, result.stderr))
        if want == 0 and args[:2] == ["devices", "ls"] and len(args) == 3:
            longest = max(len(l) for l in result.stdout.splitlines())
            if longest > 120:
                failures.append("devices ls: a %d-character line" % longest)
    return len(CONVENTIONS)


def daemon_env(env):
    """Agents speak for their node by certificate: no admin token."""
    return {k: v for k, v in env.items() if k != "CTXSEL_TOKEN_FILE"}


def start_fleet(env, port, daemons):
    """The demo fleet: one simulated agent per fixture file, nodes n1.."""
    fleet = os.path.join(ROOT, "tools/fixtures/fleet")
    for i, name in enumerate(["dgx-h100.json", "mi250x.json", "pvc.json"], 1):
        daemons.append(subprocess.Popen(
            ["ctxsel-agent", "--server=127.0.0.1:%d" % port, "--node_id=n%d" % i,
             "--backends=", "--devices_file=" + os.path.join(fleet, name),
             "--tls_cert=%s/pki/n%d.pem" % (TMP, i),
             "--tls_key=%s/pki/n%d.key" % (TMP, i),
             "--heartbeat=1s"], env=daemon_env(env), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
    cli = ["ctxsel-cli", "--server=127.0.0.1:%d" % port, "nodes", "ls", "-o", "name"]
    wait_for(lambda: len(subprocess.run(cli, env=env, capture_output=True,
                                        text=True).stdout.split()) >= 3,
             "the fleet's three nodes")


if __name__ == "__main__":
    sys.exit(main())
