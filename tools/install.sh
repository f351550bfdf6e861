#!/usr/bin/env bash
# Installs ctxsel from this checkout: builds the binaries (bazel -c opt),
# copies them to $PREFIX/bin and the systemd units to /etc/systemd/system,
# then, with --enable UNIT..., reloads systemd and enables and (re)starts
# those units. docs/operations.md, "Install" and "Upgrade".
#
#   sudo tools/install.sh --enable ctxsel-server   # the server host
#   sudo tools/install.sh --enable ctxsel-agent    # every node
#
# DESTDIR (a staging root: nothing is started) and BIN_DIR (binaries
# already built there; no build) are for packaging and tests.
set -euo pipefail

cd "$(dirname "$0")/.."
PREFIX="${PREFIX:-/usr/local}"
DESTDIR="${DESTDIR:-}"
enable=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --enable) shift; while [[ $# -gt 0 && "$1" != --* ]]; do enable+=("$1"); shift; done ;;
    *) echo "install.sh: unknown argument $1 (want --enable UNIT...)" >&2; exit 2 ;;
  esac
done

if [[ -z "${BIN_DIR:-}" ]]; then
  bazel build -c opt //server:ctxsel-server //agent:ctxsel-agent //client/cli:ctxsel-cli
  BIN_DIR=bazel-bin
fi
install -d "$DESTDIR$PREFIX/bin" "$DESTDIR/etc/systemd/system"
install -m 0755 "$BIN_DIR/server/ctxsel-server" "$BIN_DIR/agent/ctxsel-agent" \
  "$BIN_DIR/client/cli/ctxsel-cli" "$DESTDIR$PREFIX/bin/"
for unit in tools/systemd/ctxsel-server.service tools/systemd/ctxsel-agent.service; do
  # The units name /usr/local/bin; follow PREFIX.
  sed "s|/usr/local/bin/|$PREFIX/bin/|g" "$unit" >"$DESTDIR/etc/systemd/system/$(basename "$unit")"
  chmod 0644 "$DESTDIR/etc/systemd/system/$(basename "$unit")"
done
echo "installed ctxsel-server, ctxsel-agent and ctxsel-cli in $DESTDIR$PREFIX/bin"

[[ ${#enable[@]} -eq 0 ]] && exit 0
if [[ -n "$DESTDIR" || ! -d /run/systemd/system ]]; then
  echo "not starting ${enable[*]}: DESTDIR is set or systemd is not running"
  exit 0
fi
systemctl daemon-reload
for unit in "${enable[@]}"; do
  systemctl enable "$unit"
  systemctl restart "$unit"  # an upgrade restarts the running one
done
