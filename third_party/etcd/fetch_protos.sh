#!/usr/bin/env bash
# Refreshes the checked-in etcd v3 API protos from Debian's
# golang-etcd-server-dev (only the package file is downloaded and unpacked
# in a temp dir: its 430 MB of Go dependencies are not installed), with
# the gogoproto and google.api annotations stripped (strip_annotations.py).
# Run it when the etcd version changes; the build uses the checked-in files.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q golang-etcd-server-dev 2>&1 >/dev/null | grep -v unsandboxed >&2 || true)
dpkg -x "$work"/golang-etcd-server-dev_*.deb "$work/root"
src="$work/root/usr/share/gocode/src/go.etcd.io/etcd"
for proto in etcdserver/etcdserverpb/rpc.proto mvcc/mvccpb/kv.proto \
             auth/authpb/auth.proto; do
  mkdir -p "$here/etcd/$(dirname "$proto")"
  python3 "$here/strip_annotations.py" "$src/$proto" "$here/etcd/$proto"
done
echo "fetch_protos: $(ls "$work"/golang-etcd-server-dev_*.deb | xargs basename)" >&2
