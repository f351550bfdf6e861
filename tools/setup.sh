#!/usr/bin/env bash
# Installs the Debian 12 packages ctxsel needs to build, test and run.
# Idempotent: does nothing when everything is present; runs `apt-get update`
# only when something is missing. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  bazel-bootstrap        # Bazel 4.2.3
  bazel-rules-java       # @rules_java for the offline WORKSPACE
  default-jdk-headless   # Bazel's runtime
  build-essential
  pkg-config
  libgrpc++-dev protobuf-compiler-grpc grpc-proto
  libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhwloc-dev           # agent: CPU topology
  libsqlite3-dev         # server: durable variant store
  nlohmann-json3-dev     # CLI and agent: JSON input and output
  libssl-dev openssl     # token hashes (SHA-256); tests and demo make certificates
  python3-grpcio         # tests: independent Python clients (stubs from protoc + grpc_python_plugin)
  python3-venv python3-pip python3-setuptools  # tests: clients/python installed with pip into a venv
  prometheus-cpp-dev     # server and agent: --metrics_listen
  prometheus             # tests: a real Prometheus scrapes the server
  jq                     # docs/coverage.md: the CI check on coverage JSON
  etcd-server            # tests: a real etcd (3.4) for --store=etcd://
  clang-14 libomp-14-dev # tests/compilers: eval --compiler=clang-14 checked against real clang 14 binaries (GCC 12 comes with build-essential)
  haproxy                # tests: the front (tools/front/haproxy.cfg, HAProxy 2.6)
  etcd-client            # tests/etcd/deployment_doc_test: etcdctl, as docs/deployment.md uses it
  # Slurm 22.05 (slurm/, tests/slurm): the SPANK plugin compiles against
  # libslurm-dev's <slurm/spank.h>; the test runs a real one-node Slurm on
  # loopback: munge authenticates its daemons and commands, slurmctld and
  # slurmd are the controller and the node, slurm-client has srun, sbatch,
  # scancel and squeue.
  libslurm-dev slurmctld slurmd slurm-client munge
)

missing=()
for package in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
SUDO=()
[[ $(id -u) -eq 0 ]] || SUDO=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
