#!/usr/bin/env bash
# Checks what a bundled ctxsel-agent (tools/package.sh agent) reports about
# this machine's GPUs against the vendors' own tools. docs/operations.md,
# "Checking the agent on a GPU node".
#
#   tools/gpu_check.sh dist/ctxsel-agent-0.1.0-x86_64-linux.tar.gz
#   tools/gpu_check.sh /opt/ctxsel-agent-0.1.0 [AGENT_FLAG...]
#
# Runs the bundle's `ctxsel-agent --print --json [AGENT_FLAG...]` and compares
# each NVIDIA GPU with `nvidia-smi --query-gpu=...`, field by field:
#   vendor_index        the agent's = the GPU's rank in PCI bus order (as CUDA
#                       with CUDA_DEVICE_ORDER=PCI_BUS_ID numbers it) = nvidia-smi's index
#   uuid, name          equal
#   pci_bus_id          equal once both are written 0000:17:00.0 (NVML writes
#                       an 8-digit domain, upper case)
#   compute_capability  the agent's attribute = nvidia-smi's compute_cap
#   architecture        compute_cap X.Y = sycl_architecture nvidia_gpu_sm_XY
#                       (or, for one not in the SYCL catalog, isa sm_XY)
#   memory              agent bytes vs nvidia-smi MiB, within
#                       MEMORY_TOLERANCE_MIB (default 64: both read NVML's
#                       total, nvidia-smi rounds it down to MiB; 64 MiB also
#                       absorbs drivers that round differently, and still
#                       tells one GPU model from another)
#   mig_mode            the agent's attribute (enabled, disabled; none for a
#                       GPU without MIG) = nvidia-smi's mig.mode.current
#   ecc_volatile        the agent's attribute ecc_uncorrected_volatile =
#                       nvidia-smi's ecc.errors.uncorrected.volatile.total
#   retired_pages       the agent's attribute retired_pages_pending =
#                       nvidia-smi's retired_pages.pending
#   health              the agent's health = degraded when nvidia-smi counts
#                       volatile uncorrected ECC errors or retired pages
#                       pending, else healthy (an Xid or a row-remapping
#                       failure, which nvidia-smi does not show here: SKIP)
# (the last three from a second nvidia-smi query, SKIP where it fails or a
# field is [N/A]), then the GPUs' MIG instances: the agent's partitions'
# UUIDs = the MIG devices `nvidia-smi -L` lists (mig_instances).
#   compute_units       the agent's SM count: FAIL if 0 or missing (a GPU
#                       has SMs); equal to nvidia-smi's where it can tell one
#                       (a --query-gpu field that --help-query-gpu describes
#                       as a "number of [streaming] multiprocessors", "number
#                       of SMs" or "multiprocessor count"; nvidia-smi has had
#                       none), else SKIP
# then the number of AMD GPUs and their PCI bus ids with rocm-smi, and the
# number of GPUs per vendor with sycl-ls and clinfo, each where present.
#
# Prints one line per device and field, "PASS|FAIL|SKIP <device> <field>:
# <both values>", a line per tool it could not run, and a summary; exits 1 on
# any FAIL, 2 when the agent cannot run. Needs bash, awk, sed, grep and
# coreutils (sort, cut, paste, tr, mktemp; tar and gzip for a tarball): no
# jq, no python.
#
# NVIDIA_SMI, ROCM_SMI, SYCL_LS, CLINFO name the tools (tests give fakes);
# one that is empty or not found is skipped with a line.
set -uo pipefail

NVIDIA_SMI="${NVIDIA_SMI-nvidia-smi}"
ROCM_SMI="${ROCM_SMI-rocm-smi}"
SYCL_LS="${SYCL_LS-sycl-ls}"
CLINFO="${CLINFO-clinfo}"
MEMORY_TOLERANCE_MIB="${MEMORY_TOLERANCE_MIB:-64}"
SEP=$'\037'  # between fields: keeps empty ones, unlike a tab

passed=0 failed=0 skipped=0
verdict() {  # verdict PASS|FAIL|SKIP DEVICE FIELD DETAIL
  echo "$1 $2 $3: $4"
  case "$1" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
  esac
}
same() {  # same DEVICE FIELD AGENT TOOL TOOL_VALUE
  local status=FAIL
  [[ "$3" == "$5" ]] && status=PASS
  verdict "$status" "$1" "$2" "agent '$3', $4 '$5'"
}
die() { echo "gpu_check: $*" >&2; exit 2; }
# The tool named by $1's value, if it can be run.
have() { [[ -n "$1" ]] && command -v "${1%% *}" >/dev/null 2>&1; }

# --- the agent -------------------------------------------------------------
bundle="${1:-}"
if [[ -z "$bundle" ]]; then
  bundle="$(ls -t "$(dirname "$0")"/../dist/ctxsel-agent-*-x86_64-linux.tar.gz 2>/dev/null | head -1)"
  [[ -n "$bundle" ]] || die "usage: gpu_check.sh BUNDLE_DIR|TARBALL [AGENT_FLAG...]"
fi
shift || true
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -f "$bundle" ]]; then
  tar -C "$tmp" -xzf "$bundle" || die "cannot unpack $bundle"
  bundle="$(ls -d "$tmp"/ctxsel-agent-*/ | head -1)"
fi
agent="${bundle%/}/bin/ctxsel-agent"
[[ -x "$agent" ]] || die "$agent: not found (want a bundle from tools/package.sh agent)"
echo "agent: $agent $* --print --json"
"$agent" "$@" --print --json >"$tmp/agent.json" 2>"$tmp/agent.err"
status=$?
sed 's/^/agent: /' "$tmp/agent.err"
[[ $status -eq 0 ]] || verdict FAIL agent exit "ctxsel-agent --print --json exited $status"
[[ -s "$tmp/agent.json" ]] || die "the agent printed nothing"

# JSON on stdin as "path<TAB>value" lines, one per string, number, boolean or
# null: {"devices": [{"uuid": "GPU-1"}]} -> "devices.0.uuid<TAB>GPU-1".
# Enough JSON for the agent's output: string escapes other than \" \\ \/
# are kept as written.
flatten_json() {
  awk '
    { text = text $0 "\n" }
    function path(   p, d) {
      p = ""
      for (d = 1; d <= depth; d++) p = p (d > 1 ? "." : "") (type[d] == "{" ? key[d] : n[d])
      return p
    }
    END {
      len = length(text); depth = 0; want_key = 0
      for (i = 1; i <= len; i++) {
        c = substr(text, i, 1)
        if (c == "{" || c == "[") { type[++depth] = c; n[depth] = 0; key[depth] = ""; want_key = (c == "{") }
        else if (c == "}" || c == "]") depth--
        else if (c == ",") { if (type[depth] == "[") n[depth]++; else want_key = 1 }
        else if (c == ":") want_key = 0
        else if (c == "\"") {
          s = ""
          for (i++; i <= len; i++) {
            c = substr(text, i, 1)
            if (c == "\"") break
            if (c == "\\") {
              c = substr(text, ++i, 1)
              if (c != "\"" && c != "\\" && c != "/") c = "\\" c
            }
            s = s c
          }
          if (type[depth] == "{" && want_key) key[depth] = s
          else print path() "\t" s
        } else if (c !~ /[ \t\n\r]/) {
          s = c
          while (i < len && substr(text, i + 1, 1) !~ /[],} \t\n\r]/) s = s substr(text, ++i, 1)
          print path() "\t" s
        }
      }
    }'
}

# The agent's devices, one line each in vendor_index order, fields separated
# by SEP: vendor vendor_index uuid pci_bus_id name memory_bytes
# sycl_architecture compute_capability isa mig_mode compute_units kind
# parent health health_reason ecc_uncorrected_volatile retired_pages_pending.
flatten_json <"$tmp/agent.json" | awk -F'\t' -v sep="$SEP" '
  {
    if (split($1, p, ".") < 3 || p[1] != "devices") next
    d = p[2]; if (d + 1 > count) count = d + 1
    rest = substr($1, length(p[1] p[2]) + 3)
    if (rest ~ /^traits\.vendor\.0$/) vendor[d] = $2
    else if (rest ~ /^traits\.kind\./) kind[d] = kind[d] " " $2
    else if (rest ~ /^traits\.isa\./) isa[d] = isa[d] " " $2
    else if (rest ~ /^(vendor_index|uuid|pci_bus_id|memory_bytes|sycl_architecture|compute_units)$/) v[d, rest] = $2
    else if (rest == "agent.name") v[d, "name"] = $2
    else if (rest == "agent.attributes.compute_capability") v[d, "cc"] = $2
    else if (rest == "agent.attributes.mig_mode") v[d, "mig"] = $2
    else if (rest ~ /^(parent|health|health_reason)$/) v[d, rest] = $2
    else if (rest == "agent.attributes.ecc_uncorrected_volatile") v[d, "ecc"] = $2
    else if (rest == "agent.attributes.retired_pages_pending") v[d, "retired"] = $2
  }
  END {
    for (d = 0; d < count; d++)
      print vendor[d] sep v[d, "vendor_index"] sep v[d, "uuid"] sep v[d, "pci_bus_id"] sep \
        v[d, "name"] sep v[d, "memory_bytes"] sep v[d, "sycl_architecture"] sep v[d, "cc"] sep \
        substr(isa[d], 2) sep v[d, "mig"] sep v[d, "compute_units"] sep substr(kind[d], 2) sep \
        v[d, "parent"] sep (v[d, "health"] == "" ? "healthy" : v[d, "health"]) sep \
        v[d, "health_reason"] sep v[d, "ecc"] sep v[d, "retired"]
  }' | sort -t"$SEP" -k1,1 -k2,2n >"$tmp/devices"
echo "agent: $(wc -l <"$tmp/devices") devices"

# Whole GPUs the agent found of one vendor (partitions, which name a parent
# in field 13, left out).
agent_gpus() {
  grep "^$1$SEP" "$tmp/devices" | grep "${SEP}gpu\( [^$SEP]*\)\?$SEP" |
    awk -F"$SEP" '$13 == ""' || true
}
# The partitions (MIG instances) of one vendor's GPUs.
agent_partitions() { grep "^$1$SEP" "$tmp/devices" | awk -F"$SEP" '$13 != ""' || true; }
# 0000:17:00.0 from NVML's 00000000:17:00.0 or any case.
pci() { echo "$1" | tr 'A-F' 'a-f' | sed 's/^0000\([0-9a-f]\{4\}:\)/\1/'; }
count_check() {  # count_check DEVICES FIELD AGENT_COUNT TOOL TOOL_COUNT
  local status=FAIL
  [[ "$3" == "$5" ]] && status=PASS
  verdict "$status" "$1" "$2" "agent $3, $4 $5"
}

# --- NVIDIA: nvidia-smi --------------------------------------------------
check_nvidia() {
  if ! have "$NVIDIA_SMI"; then
    verdict SKIP nvidia all "nvidia-smi not found (NVIDIA_SMI='$NVIDIA_SMI')"
    return
  fi
  local fields=index,uuid,pci.bus_id,name,memory.total,compute_cap,mig.mode.current
  # Drivers before 510 know no compute_cap: ask again without the newer two.
  if ! $NVIDIA_SMI --query-gpu=$fields --format=csv,noheader,nounits \
    >"$tmp/smi" 2>"$tmp/smi.err"; then
    echo "nvidia-smi: $(cat "$tmp/smi.err" "$tmp/smi" | head -2 | tr '\n' ' ')"
    fields=index,uuid,pci.bus_id,name,memory.total
    $NVIDIA_SMI --query-gpu=$fields --format=csv,noheader,nounits >"$tmp/smi" 2>"$tmp/smi.err" || {
      verdict FAIL nvidia nvidia-smi "nvidia-smi --query-gpu=$fields failed: $(cat "$tmp/smi.err" "$tmp/smi" | head -3 | tr '\n' ' ')"
      return
    }
  fi
  echo "nvidia-smi --query-gpu=$fields:"
  sed 's/^/nvidia-smi: /' "$tmp/smi"
  nvidia_sm_counts
  nvidia_health
  # index, uuid, bus id, name, MiB, compute_cap, MIG mode; by index.
  awk -F',' -v sep="$SEP" '
    NF >= 5 {
      line = ""
      for (f = 1; f <= 7; f++) { x = $f; gsub(/^ +| +$/, "", x); line = line (f > 1 ? sep : "") x }
      print line
    }' "$tmp/smi" | sort -t"$SEP" -k1,1n >"$tmp/smi.devices"
  agent_gpus nvidia >"$tmp/nvidia.devices"
  count_check nvidia count "$(wc -l <"$tmp/nvidia.devices")" nvidia-smi "$(wc -l <"$tmp/smi.devices")"
  # Each GPU's rank in PCI bus order, by bus id.
  local bus rank=0
  : >"$tmp/pci.rank"
  for bus in $(cut -d"$SEP" -f3 "$tmp/smi.devices" | while read -r b; do pci "$b"; done | sort); do
    echo "$bus $rank" >>"$tmp/pci.rank"
    rank=$((rank + 1))
  done
  # Pair the k-th GPU of each, both in NVML's order.
  local k=0 a s
  exec 3<"$tmp/nvidia.devices" 4<"$tmp/smi.devices"
  while IFS= read -r a <&3 && IFS= read -r s <&4; do
    compare_nvidia "nvidia$k" "$a" "$s"
    k=$((k + 1))
  done
  exec 3<&- 4<&-
  check_nvidia_mig
}

# Health fields, "index, ecc, retired" lines in $tmp/smi.health, where the
# driver answers the query; empty otherwise (each GPU's fields SKIP).
nvidia_health() {
  local fields=index,ecc.errors.uncorrected.volatile.total,retired_pages.pending
  : >"$tmp/smi.health"
  if ! $NVIDIA_SMI --query-gpu=$fields --format=csv,noheader,nounits >"$tmp/smi.h" 2>&1; then
    echo "nvidia-smi --query-gpu=$fields failed: $(head -2 "$tmp/smi.h" | tr '\n' ' ')"
    return
  fi
  echo "nvidia-smi --query-gpu=$fields:"
  sed 's/^/nvidia-smi: /' "$tmp/smi.h"
  awk -F',' '{ for (f = 1; f <= 3; f++) gsub(/^ +| +$/, "", $f); print $1 "," $2 "," $3 }' \
    "$tmp/smi.h" >"$tmp/smi.health"
}

compare_nvidia_health() {  # DEVICE SMI_INDEX HEALTH REASON ECC RETIRED
  local dev="$1" health="$3" reason="$4" ecc="$5" retired="$6" s_ecc s_retired
  s_ecc="$(awk -F',' -v i="$2" '$1 == i { print $2 }' "$tmp/smi.health")"
  s_retired="$(awk -F',' -v i="$2" '$1 == i { print $3 }' "$tmp/smi.health")"
  local expect=healthy why=""
  if [[ "$s_ecc" =~ ^[0-9]+$ ]]; then
    same "$dev" ecc_volatile "$ecc" nvidia-smi "$s_ecc"
    [[ "$s_ecc" -gt 0 ]] && expect=degraded why="$s_ecc volatile uncorrected ECC errors"
  else
    verdict SKIP "$dev" ecc_volatile "agent '$ecc', nvidia-smi '$s_ecc'"
  fi
  case "$s_retired" in
    Yes | No)
      same "$dev" retired_pages "$retired" nvidia-smi "$(echo "$s_retired" | tr '[:upper:]' '[:lower:]')"
      [[ "$s_retired" == Yes ]] && expect=degraded why="retired pages pending" ;;
    *) verdict SKIP "$dev" retired_pages "agent '$retired', nvidia-smi '$s_retired'" ;;
  esac
  if [[ "$health" == unhealthy && ( "$reason" == Xid* || "$reason" == "row remapping"* ) ]]; then
    verdict SKIP "$dev" health "agent unhealthy ($reason): nvidia-smi's fields here do not show it"
  else
    same "$dev" health "$health${reason:+ ($reason)}" "nvidia-smi ${why:-no ECC error, no retired page pending} ->" \
      "$expect${why:+ ($why)}"
  fi
}

# MIG instances: the agent's partitions' UUIDs against `nvidia-smi -L`'s MIG
# devices ("  MIG 1g.10gb Device 0: (UUID: MIG-...)").
check_nvidia_mig() {
  if ! $NVIDIA_SMI -L >"$tmp/smi.L" 2>&1; then
    verdict SKIP nvidia mig_instances "nvidia-smi -L failed: $(head -2 "$tmp/smi.L" | tr '\n' ' ')"
    return
  fi
  local agent_migs smi_migs
  agent_migs="$(agent_partitions nvidia | cut -d"$SEP" -f3 | sort | paste -sd' ')"
  smi_migs="$(sed -n 's/.*MIG .*(UUID: \(MIG-[^)]*\)).*/\1/p' "$tmp/smi.L" | sort | paste -sd' ')"
  same nvidia mig_instances "$agent_migs" "nvidia-smi -L" "$smi_migs"
}

# Each GPU's SM count, "index count" lines in $tmp/smi.sms, where some
# --query-gpu field gives one; $sm_source says which, or why there is none.
nvidia_sm_counts() {
  local field
  : >"$tmp/smi.sms"
  # "name" [or "name"...] lines, each followed by its description.
  field="$($NVIDIA_SMI --help-query-gpu 2>/dev/null | awk '
    /^"/ { split($0, q, "\""); name = q[2]; next }
    name != "" && tolower($0) ~ /number of (streaming )?multiprocessors|number of sms|multiprocessor count/ {
      print name; exit
    }')"
  if [[ -z "$field" ]]; then
    sm_source="nvidia-smi --help-query-gpu names no SM count"
    return
  fi
  if ! $NVIDIA_SMI --query-gpu=index,"$field" --format=csv,noheader,nounits >"$tmp/smi.sm" 2>&1; then
    sm_source="nvidia-smi --query-gpu=index,$field failed: $(head -2 "$tmp/smi.sm" | tr '\n' ' ')"
    return
  fi
  sm_source="nvidia-smi $field"
  echo "nvidia-smi --query-gpu=index,$field:"
  sed 's/^/nvidia-smi: /' "$tmp/smi.sm"
  awk -F',' '{ i = $1; n = $2; gsub(/ /, "", i); gsub(/ /, "", n); print i, n }' "$tmp/smi.sm" >"$tmp/smi.sms"
}

compare_nvidia() {  # compare_nvidia DEVICE AGENT_LINE SMI_LINE
  local dev="$1" vendor index uuid bus name bytes arch cc isa mig sms
  local kind parent health reason ecc retired
  local s_index s_uuid s_bus s_name s_mib s_cc s_mig
  IFS="$SEP" read -r vendor index uuid bus name bytes arch cc isa mig sms kind parent health reason ecc retired <<<"$2"
  IFS="$SEP" read -r s_index s_uuid s_bus s_name s_mib s_cc s_mig <<<"$3"
  local rank
  rank="$(awk -v b="$(pci "$s_bus")" '$1 == b { print $2 }' "$tmp/pci.rank")"
  local status=FAIL
  [[ "$index" == "$rank" && "$index" == "$s_index" ]] && status=PASS
  verdict "$status" "$dev" vendor_index "agent '$index', PCI bus order '$rank' (nvidia-smi index '$s_index')"
  same "$dev" uuid "$uuid" nvidia-smi "$s_uuid"
  same "$dev" pci_bus_id "$bus" "nvidia-smi (normalised from '$s_bus')" "$(pci "$s_bus")"
  same "$dev" name "$name" nvidia-smi "$s_name"
  if [[ ! "$s_mib" =~ ^[0-9]+$ ]]; then
    verdict SKIP "$dev" memory "agent '$bytes' B, nvidia-smi '$s_mib'"
  else
    local mib=$((${bytes:-0} / 1048576))
    local diff=$((mib > s_mib ? mib - s_mib : s_mib - mib))
    status=FAIL
    [[ -n "$bytes" && $diff -le $MEMORY_TOLERANCE_MIB ]] && status=PASS
    verdict "$status" "$dev" memory "agent $mib MiB ($bytes B), nvidia-smi $s_mib MiB: differ by $diff MiB (tolerance $MEMORY_TOLERANCE_MIB)"
  fi
  if [[ ! "$s_cc" =~ ^[0-9]+\.[0-9]+$ ]]; then
    verdict SKIP "$dev" compute_capability "agent '$cc', nvidia-smi '$s_cc'"
    verdict SKIP "$dev" architecture "agent '$arch', nvidia-smi compute_cap '$s_cc'"
  else
    same "$dev" compute_capability "$cc" nvidia-smi "$s_cc"
    local sm="sm_${s_cc%%.*}${s_cc#*.}"
    if [[ -z "$arch" && " $isa " == *" $sm "* ]]; then
      verdict PASS "$dev" architecture "agent isa '$sm' ($sm is not in the SYCL catalog), nvidia-smi compute_cap '$s_cc'"
    else
      same "$dev" architecture "$arch" "nvidia-smi compute_cap '$s_cc' ->" "nvidia_gpu_$sm"
    fi
  fi
  local s_sms
  s_sms="$(awk -v i="$s_index" '$1 == i { print $2 }' "$tmp/smi.sms")"
  if [[ ! "$sms" =~ ^[1-9][0-9]*$ ]]; then
    verdict FAIL "$dev" compute_units "agent '$sms': no SM count, but a GPU has SMs ($sm_source${s_sms:+: '$s_sms'})"
  elif [[ "$s_sms" =~ ^[0-9]+$ ]]; then
    same "$dev" compute_units "$sms" "$sm_source" "$s_sms"
  else
    verdict SKIP "$dev" compute_units "agent '$sms', ${sm_source}${s_sms:+ '$s_sms'}"
  fi
  case "$s_mig" in
    "") verdict SKIP "$dev" mig_mode "agent '$mig', nvidia-smi did not say" ;;
    Enabled | Disabled)
      if [[ -n "$mig" ]]; then
        same "$dev" mig_mode "$mig" nvidia-smi "$(echo "$s_mig" | tr '[:upper:]' '[:lower:]')"
      elif [[ "$s_mig" == Enabled ]]; then
        verdict FAIL "$dev" mig_mode "agent reports no MIG mode (the whole GPU), nvidia-smi 'Enabled'"
      else
        verdict SKIP "$dev" mig_mode "agent reports no MIG mode, nvidia-smi 'Disabled'"
      fi ;;
    *) if [[ -z "$mig" ]]; then
         verdict PASS "$dev" mig_mode "agent none, nvidia-smi '$s_mig' (no MIG on this GPU)"
       else
         verdict FAIL "$dev" mig_mode "agent '$mig', nvidia-smi '$s_mig' (no MIG on this GPU)"
       fi ;;
  esac
  compare_nvidia_health "$dev" "$s_index" "$health" "$reason" "$ecc" "$retired"
}

# --- AMD: rocm-smi ---------------------------------------------------------
# Written from rocm-smi's documented CSV ("device,PCI Bus" / "card0,0000:03:00.0");
# not yet run on an AMD GPU.
check_amd() {
  if ! have "$ROCM_SMI"; then
    verdict SKIP amd all "rocm-smi not found (ROCM_SMI='$ROCM_SMI')$(have amd-smi && echo '; amd-smi is present but not compared')"
    return
  fi
  if ! $ROCM_SMI --showbus --csv >"$tmp/rocm" 2>&1; then
    verdict FAIL amd rocm-smi "rocm-smi --showbus --csv failed: $(head -3 "$tmp/rocm" | tr '\n' ' ')"
    return
  fi
  grep -i '^card' "$tmp/rocm" | cut -d, -f2 | while read -r b; do pci "$b"; done | sort >"$tmp/rocm.bus"
  agent_gpus amd | cut -d"$SEP" -f4 | sort >"$tmp/amd.bus"
  count_check amd count "$(wc -l <"$tmp/amd.bus")" rocm-smi "$(wc -l <"$tmp/rocm.bus")"
  same amd pci_bus_ids "$(paste -sd' ' "$tmp/amd.bus")" rocm-smi "$(paste -sd' ' "$tmp/rocm.bus")"
}

# --- every vendor: sycl-ls and clinfo -------------------------------------
check_counts() {
  local vendor
  if have "$SYCL_LS" && $SYCL_LS >"$tmp/sycl" 2>&1; then
    # [cuda:gpu][cuda:0] ... (older: [ext_oneapi_cuda:gpu:0]), hip, level_zero.
    for vendor in nvidia:cuda amd:hip intel:level_zero; do
      count_check "${vendor%%:*}" sycl_gpus "$(agent_gpus "${vendor%%:*}" | wc -l)" sycl-ls \
        "$(grep -c "^\[\(ext_oneapi_\)\?${vendor#*:}:gpu" "$tmp/sycl")"
    done
  else
    verdict SKIP all sycl-ls "not found or failed (SYCL_LS='$SYCL_LS')"
  fi
  if have "$CLINFO" && $CLINFO -l >"$tmp/clinfo" 2>&1; then
    # Platform #0: NVIDIA CUDA / AMD Accelerated Parallel Processing, then its
    # devices; Intel's platforms mix CPUs and GPUs, so Intel is not counted.
    for vendor in "nvidia:NVIDIA CUDA" "amd:AMD Accelerated Parallel Processing"; do
      count_check "${vendor%%:*}" opencl_gpus "$(agent_gpus "${vendor%%:*}" | wc -l)" clinfo \
        "$(awk -v p="${vendor#*:}" '/Platform #/ { on = index($0, p) > 0; next } on && /Device #/ { n++ } END { print n + 0 }' "$tmp/clinfo")"
    done
  else
    verdict SKIP all clinfo "not found or failed (CLINFO='$CLINFO')"
  fi
}

check_nvidia
check_amd
check_counts
echo "gpu_check: $passed PASS, $failed FAIL, $skipped SKIP"
[[ $failed -eq 0 ]]
