#!/usr/bin/env bash
# Bundles the test's ctxsel-agent and ctxsel-cli with tools/package.sh,
# unpacks them into an empty directory and checks that they run on their own
# libraries and loader only, that the agent still finds the node's NVML
# library, and that tools/gpu_check.sh passes against the fake NVML library
# and a matching fake nvidia-smi, and fails, naming the field, when the fake
# nvidia-smi disagrees on one.
set -euo pipefail

R="$TEST_SRCDIR/$TEST_WORKSPACE"
T="$(mktemp -d "$TEST_TMPDIR/package.XXXXXX")"
FAKE_NVML="$R/agent/testdata/libfake_nvml.so"
# The same from a driver without nvmlDeviceGetNumGpuCores: no SM counts.
FAKE_NVML_NO_GPU_CORES="$R/agent/testdata/libfake_nvml_no_gpu_cores.so"
fail() { echo "FAIL: $*" >&2; exit 1; }
version="$(sed -n 's/.*kVersion\[\] = "\(.*\)";.*/\1/p' "$R/base/version.h")"
[[ -n "$version" ]] || fail "no version in base/version.h"

# --- the bundles -----------------------------------------------------------
# docs/operations.md shows the commands tested here.
for shown in 'tools/package.sh agent cli' "tools/gpu_check.sh ctxsel-agent-$version-x86_64-linux.tar.gz" \
  "ctxsel-agent-$version/bin/ctxsel-agent"; do
  grep -qF -- "$shown" "$R/docs/operations.md" || fail "docs/operations.md does not show: $shown"
done
OUT_DIR="$T/dist" BIN_DIR="$R" "$R/tools/package.sh" agent cli | tee "$T/package.out"
for name in ctxsel-agent ctxsel-cli; do
  tarball="$T/dist/$name-$version-x86_64-linux.tar.gz"
  [[ -f "$tarball" ]] || fail "no $tarball"
  grep -q "^$tarball: [0-9.]* MiB" "$T/package.out" || fail "no size printed for $tarball"
done
mkdir "$T/root"
tar -C "$T/root" -xzf "$T/dist/ctxsel-agent-$version-x86_64-linux.tar.gz"
tar -C "$T/root" -xzf "$T/dist/ctxsel-cli-$version-x86_64-linux.tar.gz"
[[ "$(ls "$T/root")" == "ctxsel-agent-$version"$'\n'"ctxsel-cli-$version" ]] ||
  fail "the tarballs hold more than their bundle: $(ls "$T/root")"
AGENT_BUNDLE="$T/root/ctxsel-agent-$version"
AGENT="$AGENT_BUNDLE/bin/ctxsel-agent"
CLI="$T/root/ctxsel-cli-$version/bin/ctxsel-cli"
for f in bin/ctxsel-agent libexec/ctxsel-agent lib/ld-linux-x86-64.so.2 lib/libc.so.6; do
  [[ -x "$AGENT_BUNDLE/$f" || -f "$AGENT_BUNDLE/$f" ]] || fail "bundle lacks $f"
done
[[ "$(head -1 "$AGENT")" == "#!/bin/sh" ]] || fail "bin/ctxsel-agent is not a sh wrapper"
for f in "$AGENT_BUNDLE"/lib/*nvidia* "$AGENT_BUNDLE"/lib/*cuda*; do
  [[ ! -e "$f" ]] || fail "a GPU vendor's library is bundled: $f"
done
file_type="$(od -An -c -N4 "$AGENT_BUNDLE/libexec/ctxsel-agent" | tr -d ' ')"
[[ "$file_type" == 177ELF ]] || fail "libexec/ctxsel-agent is not an ELF binary"

# --- the bundle runs on its own libraries ----------------------------------
# The bundled loader resolves every library from the bundle, and the wrapper
# runs with an empty environment and LD_LIBRARY_PATH.
check_resolved() {  # check_resolved BUNDLE_DIR NAME
  local listed outside
  listed="$(env -i "$1/lib/ld-linux-x86-64.so.2" --library-path "$1/lib" --list "$1/libexec/$2")" ||
    fail "$2: the bundled loader cannot list its libraries"
  outside="$(grep '=>' <<<"$listed" | grep -v "=> $1/lib/" || true)"
  [[ -z "$outside" ]] || fail "$2: libraries from outside the bundle: $outside"
}
check_resolved "$AGENT_BUNDLE" ctxsel-agent
check_resolved "$T/root/ctxsel-cli-$version" ctxsel-cli
run_alone() { env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$@"; }
run_alone "$AGENT" --print --json --backends=cpu >"$T/cpu.json" 2>"$T/cpu.err" ||
  fail "bundled agent: $(cat "$T/cpu.err")"
grep -q '"backend": "cpu"' "$T/cpu.json" || fail "no CPU in $(cat "$T/cpu.json")"
run_alone "$CLI" --version >"$T/cli.out" 2>&1 || fail "bundled cli: $(cat "$T/cli.out")"
grep -q "$version" "$T/cli.out" || fail "ctxsel-cli --version: $(cat "$T/cli.out")"
# Through a symlink, as from /usr/local/bin.
ln -s "$AGENT" "$T/ctxsel-agent"
"$T/ctxsel-agent" --print --backends=cpu >/dev/null || fail "the agent does not run through a symlink"

# --- the node's GPU libraries are still found ------------------------------
# Where the node's LD_LIBRARY_PATH puts libnvidia-ml.so.1 (after the bundle).
mkdir "$T/nodelib"
ln -s "$FAKE_NVML" "$T/nodelib/libnvidia-ml.so.1"
LD_LIBRARY_PATH="$T/nodelib" "$AGENT" --print --json --backends=nvml >"$T/nvml.json" ||
  fail "agent with LD_LIBRARY_PATH"
grep -q '"uuid": "GPU-2222"' "$T/nvml.json" ||
  fail "the node's LD_LIBRARY_PATH was not searched: $(cat "$T/nvml.json")"
# Where /etc/ld.so.cache names it: a library the cache has and the bundle does
# not (sqlite, which only the server links) stands for libnvidia-ml.so.1; the
# agent finds it and says it is no NVML.
cached=libsqlite3.so.0
if /sbin/ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$cached " && [[ ! -e "$AGENT_BUNDLE/lib/$cached" ]]; then
  env -i PATH=/usr/bin:/bin "$AGENT" --print --backends=nvml --nvml_library="$cached" \
    >/dev/null 2>"$T/cache.err" || true
  grep -q "nvml: $cached lacks an NVML entry point" "$T/cache.err" ||
    fail "dlopen($cached) through the bundled loader missed /etc/ld.so.cache: $(cat "$T/cache.err")"
  echo "ld.so.cache: the bundled agent's dlopen found the node's $cached"
else
  echo "SKIP: $cached is not in /etc/ld.so.cache here"
fi

# --- an empty root: nothing but the bundle, /proc, /sys and /dev ------------
# Where this test may chroot (root, in a new mount namespace): the loader,
# started directly, as there is no /bin/sh there.
chroot_agent() {
  unshare --mount --fork sh -ec '
    root="$1"; shift
    mkdir -p "$root/proc" "$root/sys" "$root/dev"
    mount --rbind /proc "$root/proc"; mount --rbind /sys "$root/sys"; mount --rbind /dev "$root/dev"
    exec chroot "$root" "$@"' chroot_agent "$@"
}
b="/ctxsel-agent-$version"
if chroot_agent "$T/root" "$b/lib/ld-linux-x86-64.so.2" --library-path "$b/lib" \
  "$b/libexec/ctxsel-agent" --print --json --backends=cpu >"$T/chroot.json" 2>"$T/chroot.err"; then
  grep -q '"backend": "cpu"' "$T/chroot.json" || fail "chroot: $(cat "$T/chroot.json")"
  echo "chroot: the bundled agent ran in an empty root"
  # From the empty root to a real server outside it, over loopback: the
  # agent reports and beats, the bundled CLI pings.
  "$R/server/ctxsel-server" --insecure --listen=127.0.0.1:0 --port_file="$T/port" \
    --data_dir="$T/data" 2>"$T/server.err" &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [[ -s "$T/port" ]] && break; sleep 0.1; done
  [[ -s "$T/port" ]] || fail "the server did not start: $(cat "$T/server.err")"
  server="127.0.0.1:$(cat "$T/port")"
  chroot_agent "$T/root" "$b/lib/ld-linux-x86-64.so.2" --library-path "$b/lib" \
    "$b/libexec/ctxsel-agent" --server="$server" --insecure --backends=cpu \
    --node_id=chrooted --heartbeat=1s 2>"$T/chroot_agent.err" &
  agent_pid=$!
  trap 'kill "$server_pid" "$agent_pid" 2>/dev/null || true' EXIT
  reported=""
  for _ in $(seq 100); do
    if "$R/client/cli/ctxsel-cli" --insecure --server="$server" nodes ls 2>/dev/null |
      grep -q chrooted; then
      reported=yes
      break
    fi
    sleep 0.1
  done
  [[ -n "$reported" ]] || fail "the chrooted agent's node never reached the server: $(cat "$T/chroot_agent.err")"
  c="/ctxsel-cli-$version"
  chroot_agent "$T/root" "$c/lib/ld-linux-x86-64.so.2" --library-path "$c/lib" \
    "$c/libexec/ctxsel-cli" --insecure --server="$server" ping >"$T/ping.out" 2>&1 ||
    fail "the chrooted ctxsel-cli ping: $(cat "$T/ping.out")"
  kill "$agent_pid" "$server_pid" 2>/dev/null || true
  wait "$agent_pid" "$server_pid" 2>/dev/null || true
  trap - EXIT
  echo "chroot: the bundled agent reported to a server outside its root, the bundled CLI pinged it"
else
  echo "SKIP: cannot chroot here: $(tail -1 "$T/chroot.err")"
fi

# --- tools/gpu_check.sh ----------------------------------------------------
# nvidia-smi as it answers on the fake library's three GPUs; SMI_EDIT (a sed
# script) makes it disagree. Like the real one it names no SM count in
# --help-query-gpu (its "Streaming Multiprocessor" is a clock); SMI_SMS ("132
# 108 148") makes it list a stand-in field, fake.sm_count, that gives them.
mkdir "$T/bin"
cat >"$T/bin/nvidia-smi" <<'EOF'
#!/bin/sh
want="--query-gpu=index,uuid,pci.bus_id,name,memory.total,compute_cap,mig.mode.current --format=csv,noheader,nounits"
case "$*" in
  --help-query-gpu)
    printf '%s\n' 'List of valid properties to query for the switch "--query-gpu=":' '' \
      '"index"' 'Zero based index of the GPU. Can change at each boot.' '' \
      '"clocks.current.sm" or "clocks.sm"' 'Current frequency of SM (Streaming Multiprocessor) clock.' ''
    [ -z "${SMI_SMS:-}" ] || printf '%s\n' '"fake.sm_count"' 'Number of streaming multiprocessors (SMs) on the GPU.' ''
    exit 0 ;;
  "--query-gpu=index,fake.sm_count --format=csv,noheader,nounits")
    [ -n "${SMI_SMS:-}" ] || { echo 'Field "fake.sm_count" is not a valid field to query.' >&2; exit 2; }
    i=0
    for n in $SMI_SMS; do echo "$i, $n"; i=$((i + 1)); done
    exit 0 ;;
  "$want") ;;
  "--query-gpu=index,ecc.errors.uncorrected.volatile.total,retired_pages.pending --format=csv,noheader,nounits")
    printf '%s\n' "${SMI_HEALTH:-0, 0, No
1, 0, No
2, [N/A], [N/A]}"
    exit 0 ;;
  -L)
    printf '%s\n' 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0000)'
    for m in ${SMI_MIGS:-}; do echo "  MIG 1g.10gb     Device  0: (UUID: $m)"; done
    printf '%s\n' 'GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-1111)' 'GPU 2: NVIDIA B200 (UUID: GPU-2222)'
    exit 0 ;;
  *) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
sed -e "${SMI_EDIT:-}" <<'END'
0, GPU-0000, 00000000:17:00.0, NVIDIA H100 80GB HBM3, 81559, 9.0, Disabled
1, GPU-1111, 00000000:2A:00.0, NVIDIA A100-SXM4-40GB, 40536, 8.0, [N/A]
2, GPU-2222, 00000001:C3:00.0, NVIDIA B200, 40536, 10.0, [N/A]
END
EOF
chmod +x "$T/bin/nvidia-smi"
gpu_check() {  # gpu_check SMI_EDIT: gpu_check.sh's output in $T/check.out
  SMI_EDIT="$1" NVIDIA_SMI="$T/bin/nvidia-smi" ROCM_SMI='' SYCL_LS='' CLINFO='' \
    "$R/tools/gpu_check.sh" "$T/dist/ctxsel-agent-$version-x86_64-linux.tar.gz" \
    --backends=nvml --nvml_library="${NVML_LIB:-$FAKE_NVML}" >"$T/check.out" 2>&1
}
gpu_check "" || fail "gpu_check.sh against matching output: $(cat "$T/check.out")"
cat "$T/check.out"
for dev in nvidia0 nvidia1 nvidia2; do
  for field in vendor_index uuid pci_bus_id name memory compute_capability architecture; do
    grep -q "^PASS $dev $field: " "$T/check.out" || fail "no PASS $dev $field"
  done
done
grep -q "^PASS nvidia count: agent 3, nvidia-smi 3$" "$T/check.out" || fail "no count"
grep -q "^PASS nvidia0 mig_mode: agent 'disabled', nvidia-smi 'disabled'$" "$T/check.out" ||
  fail "nvidia0 mig_mode not compared"
grep -q "^PASS nvidia1 mig_mode: agent none, nvidia-smi '\[N/A\]'" "$T/check.out" || fail "nvidia1 mig_mode"
for dev in nvidia0 nvidia1; do
  for field in ecc_volatile retired_pages health; do
    grep -q "^PASS $dev $field: " "$T/check.out" || fail "no PASS $dev $field"
  done
done
grep -q "^SKIP nvidia2 ecc_volatile: agent '0', nvidia-smi '\[N/A\]'$" "$T/check.out" || fail "nvidia2 ecc"
grep -q "^PASS nvidia mig_instances: agent '', nvidia-smi -L ''$" "$T/check.out" || fail "mig_instances"
grep -q "^PASS nvidia2 architecture: agent isa 'sm_100'" "$T/check.out" || fail "nvidia2 architecture"
# The SM counts are shown: nvidia-smi has none to compare with.
for sms in nvidia0:132 nvidia1:108 nvidia2:148; do
  grep -q "^SKIP ${sms%:*} compute_units: agent '${sms#*:}', nvidia-smi --help-query-gpu names no SM count$" \
    "$T/check.out" || fail "no SKIP of $sms compute_units"
done
grep -q "^gpu_check: 33 PASS, 0 FAIL, 8 SKIP$" "$T/check.out" || fail "summary: $(tail -1 "$T/check.out")"

# Where nvidia-smi can tell the SM count, it is compared.
SMI_SMS="132 108 148" gpu_check "" || fail "gpu_check.sh with nvidia-smi's SM counts: $(cat "$T/check.out")"
for sms in nvidia0:132 nvidia1:108 nvidia2:148; do
  grep -q "^PASS ${sms%:*} compute_units: agent '${sms#*:}', nvidia-smi fake.sm_count '${sms#*:}'$" \
    "$T/check.out" || fail "no PASS of $sms compute_units: $(cat "$T/check.out")"
done
grep -q "^gpu_check: 36 PASS, 0 FAIL, 5 SKIP$" "$T/check.out" || fail "summary: $(tail -1 "$T/check.out")"
if SMI_SMS="132 107 148" gpu_check ""; then fail "gpu_check.sh passed a wrong SM count"; fi
[[ "$(grep '^FAIL' "$T/check.out")" == "FAIL nvidia1 compute_units: agent '108', nvidia-smi fake.sm_count '107'" ]] ||
  fail "nvidia-smi's SM count off by one: $(cat "$T/check.out")"
grep '^FAIL' "$T/check.out"

# An agent that reports no SMs fails, though nvidia-smi cannot tell the count.
if NVML_LIB="$FAKE_NVML_NO_GPU_CORES" gpu_check ""; then fail "gpu_check.sh passed GPUs without SMs"; fi
fails="$(grep '^FAIL' "$T/check.out" || true)"
[[ "$(wc -l <<<"$fails")" -eq 3 &&
  "$(grep -c "^FAIL nvidia[012] compute_units: agent '0': no SM count, but a GPU has SMs" <<<"$fails")" -eq 3 ]] ||
  fail "agent without SM counts: want 3 FAILs of compute_units, got: $(cat "$T/check.out")"
echo "$fails"

# One field wrong at a time: exactly that field fails.
while read -r dev field edit; do
  if gpu_check "$edit"; then fail "gpu_check.sh passed with nvidia-smi edited by '$edit'"; fi
  fails="$(grep '^FAIL' "$T/check.out" || true)"
  [[ "$(wc -l <<<"$fails")" -eq 1 && "$fails" == "FAIL $dev $field: "* ]] ||
    fail "nvidia-smi edited by '$edit': want one FAIL of $dev $field, got: $(cat "$T/check.out")"
  echo "$fails"
done <<'EOF'
nvidia1 uuid s/GPU-1111/GPU-1112/
nvidia0 pci_bus_id s/00000000:17:00.0/00000000:18:00.0/
nvidia1 memory 2s/40536/40000/
nvidia2 name s/B200/B100/
nvidia0 mig_mode s/Disabled/Enabled/
nvidia count 3d
EOF

# MIG and health from the fake NVML's state file: the H100 in MIG mode with
# two instances, the A100 with ECC errors (degraded). A matching nvidia-smi
# passes; one that lists one instance fewer, or no ECC errors, fails there.
printf 'mig 0 2\necc 1 3\n' >"$T/nvml_state"
smi_migs="MIG-0000-0000 MIG-0000-0001"
mig_check() {  # mig_check SMI_MIGS SMI_HEALTH
  FAKE_NVML_STATE="$T/nvml_state" SMI_MIGS="$1" SMI_HEALTH="$2" gpu_check s/Disabled/Enabled/
}
health="0, 0, No
1, 3, No
2, [N/A], [N/A]"
mig_check "$smi_migs" "$health" || fail "gpu_check.sh with MIG and ECC errors: $(cat "$T/check.out")"
grep -q "^PASS nvidia count: agent 3, nvidia-smi 3$" "$T/check.out" || fail "MIG instances counted as GPUs"
grep -q "^PASS nvidia0 mig_mode: agent 'enabled', nvidia-smi 'enabled'$" "$T/check.out" || fail "mig enabled"
grep -q "^PASS nvidia mig_instances: agent '$smi_migs', nvidia-smi -L '$smi_migs'$" "$T/check.out" ||
  fail "mig_instances: $(cat "$T/check.out")"
grep -q "^PASS nvidia1 health: agent 'degraded (3 volatile uncorrected ECC errors)'" "$T/check.out" ||
  fail "nvidia1 health: $(cat "$T/check.out")"
if mig_check "MIG-0000-0000" "$health"; then fail "gpu_check.sh passed a missing MIG instance"; fi
[[ "$(grep '^FAIL' "$T/check.out")" == "FAIL nvidia mig_instances: "* ]] || fail "one MIG instance fewer: $(cat "$T/check.out")"
grep '^FAIL' "$T/check.out"
if mig_check "$smi_migs" "$(sed 's/^1, 3,/1, 0,/' <<<"$health")"; then fail "gpu_check.sh passed wrong ECC counts"; fi
[[ "$(grep -c '^FAIL' "$T/check.out")" -eq 2 && "$(grep '^FAIL' "$T/check.out" | head -1)" == "FAIL nvidia1 ecc_volatile: "* ]] ||
  fail "ECC errors nvidia-smi does not see: $(cat "$T/check.out")"
grep '^FAIL' "$T/check.out"

# A driver without the MIG and health calls: the GPUs are still described.
NVML_LIB="$R/agent/testdata/libfake_nvml_no_mig.so" FAKE_NVML_STATE="$T/nvml_state" \
  gpu_check "" || true
grep -q "^PASS nvidia count: agent 3, nvidia-smi 3$" "$T/check.out" || fail "no-MIG driver: $(cat "$T/check.out")"
grep -q "^PASS nvidia0 uuid: " "$T/check.out" || fail "no-MIG driver: $(cat "$T/check.out")"

# AMD: rocm-smi over the AMD fixture's three GPUs, then one bus id off.
cat >"$T/bin/rocm-smi" <<'EOF'
#!/bin/sh
[ "$*" = "--showbus --csv" ] || { echo "fake rocm-smi: unexpected arguments: $*" >&2; exit 2; }
printf 'device,PCI Bus\ncard0,0000:03:00.0\ncard1,0000:0C:00.0\ncard2,%s\n' "${ROCM_BUS:-0000:C1:00.0}"
EOF
chmod +x "$T/bin/rocm-smi"
amd_check() {
  NVIDIA_SMI='' ROCM_SMI="$T/bin/rocm-smi" SYCL_LS='' CLINFO='' \
    "$R/tools/gpu_check.sh" "$AGENT_BUNDLE" --backends=kfd \
    --sysfs_root="$R/agent/testdata/sysfs_amd" >"$T/amd.out" 2>&1
}
amd_check || fail "gpu_check.sh with rocm-smi: $(cat "$T/amd.out")"
grep -q "^PASS amd count: agent 3, rocm-smi 3$" "$T/amd.out" || fail "amd: $(cat "$T/amd.out")"
grep -q "^PASS amd pci_bus_ids: " "$T/amd.out" || fail "amd: $(cat "$T/amd.out")"
if ROCM_BUS=0000:C2:00.0 amd_check; then fail "gpu_check.sh passed a wrong AMD bus id"; fi
grep -q "^FAIL amd pci_bus_ids: " "$T/amd.out" || fail "amd bus id: $(cat "$T/amd.out")"
echo PASS
