#!/usr/bin/env bash
# tools/package.sh deb on the test's binaries, then the three packages
# installed into a scratch root with Debian's dpkg (--root, maintainer
# scripts chrootless under DPKG_ROOT): files, modes, the ctxsel user, the
# directories, the units; then removed (data kept, and said) and purged
# (data gone).
set -euo pipefail

R="$TEST_SRCDIR/$TEST_WORKSPACE"
T="$(mktemp -d "$TEST_TMPDIR/deb.XXXXXX")"
fail() { echo "FAIL: $*" >&2; exit 1; }
version="$(sed -n 's/.*kVersion\[\] = "\(.*\)";.*/\1/p' "$R/base/version.h")"

grep -qF 'tools/package.sh deb' "$R/docs/operations.md" ||
  fail "docs/operations.md does not show tools/package.sh deb"
(cd "$R" && OUT_DIR="$T/dist" BIN_DIR="$R" tools/package.sh deb) | tee "$T/package.out"
for name in ctxsel-server ctxsel-agent ctxsel-cli; do
  deb="$T/dist/${name}_${version}_amd64.deb"
  [[ -f "$deb" ]] || fail "no $deb"
  dpkg-deb --field "$deb" Depends | grep -q 'libc6' || fail "$name: no Depends on libc6"
  contents="$(dpkg-deb --contents "$deb")"
  grep -q -- "-rwxr-xr-x root/root .* ./usr/bin/$name$" <<<"$contents" ||
    fail "$name: /usr/bin/$name not 0755 root: $contents"
done
dpkg-deb --contents "$T/dist/ctxsel-cli_${version}_amd64.deb" | grep -q systemd &&
  fail "ctxsel-cli carries a unit"

# A scratch root: an empty dpkg database and this machine's accounts.
root="$T/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
cp /etc/passwd /etc/group /etc/shadow /etc/gshadow "$root/etc/"
sed -i '/^ctxsel:/d' "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow"
# --force-depends: the root holds no libraries, only the packages' files.
dpkg_root() { dpkg --root="$root" --force-script-chrootless --force-depends --log=/dev/null "$@"; }
dpkg_root -i "$T"/dist/*.deb >"$T/install.log" 2>&1 || fail "install: $(cat "$T/install.log")"

grep -q '^ctxsel:x:[0-9]*:[0-9]*:ctxsel service:/var/lib/ctxsel:/usr/sbin/nologin$' "$root/etc/passwd" ||
  fail "no ctxsel system user: $(grep ctxsel "$root/etc/passwd" || true)"
uid="$(awk -F: '$1 == "ctxsel" { print $3 }' "$root/etc/passwd")"
gid="$(awk -F: '$1 == "ctxsel" { print $3 }' "$root/etc/group")"
(( uid < 1000 )) || fail "ctxsel is not a system user (uid $uid)"
[[ "$(stat -c '%a %u %g' "$root/etc/ctxsel")" == "750 0 $gid" ]] ||
  fail "/etc/ctxsel: $(stat -c '%a %u %g' "$root/etc/ctxsel")"
[[ "$(stat -c '%a %u %g' "$root/var/lib/ctxsel")" == "700 $uid $gid" ]] ||
  fail "/var/lib/ctxsel: $(stat -c '%a %u %g' "$root/var/lib/ctxsel")"
for name in ctxsel-server ctxsel-agent; do
  unit="$root/lib/systemd/system/$name.service"
  [[ -f "$unit" ]] || fail "no $unit"
  grep -q "^ExecStart=/usr/bin/$name " "$unit" || fail "$name.service does not run /usr/bin/$name"
  grep -q '^User=ctxsel$' "$unit" && grep -q '^Group=ctxsel$' "$unit" ||
    fail "$name.service does not run as ctxsel"
  grep -q '^DynamicUser=' "$unit" && fail "$name.service keeps DynamicUser"
done
"$root/usr/bin/ctxsel-cli" --version | grep -q "$version" || fail "the installed ctxsel-cli does not run"
echo "installed: files, the ctxsel user, /etc/ctxsel 0750, /var/lib/ctxsel 0700, units"

# Installing again (an upgrade to the same version) keeps the one user.
dpkg_root -i "$T"/dist/*.deb >"$T/reinstall.log" 2>&1 || fail "reinstall: $(cat "$T/reinstall.log")"
[[ "$(grep -c '^ctxsel:' "$root/etc/passwd")" == 1 ]] || fail "a second ctxsel user"

# remove keeps the store and says so; purging the last service deletes it.
echo data >"$root/var/lib/ctxsel/ctxsel.db"
dpkg_root --remove ctxsel-server >"$T/remove.log" 2>&1 || fail "remove: $(cat "$T/remove.log")"
grep -q 'ctxsel-server removed; /etc/ctxsel and /var/lib/ctxsel are kept' "$T/remove.log" ||
  fail "remove did not say where the data is: $(cat "$T/remove.log")"
[[ -f "$root/var/lib/ctxsel/ctxsel.db" && ! -e "$root/usr/bin/ctxsel-server" ]] ||
  fail "remove: the store went, or the binary stayed"
dpkg_root --purge ctxsel-server >"$T/purge1.log" 2>&1 || fail "purge: $(cat "$T/purge1.log")"
[[ -f "$root/var/lib/ctxsel/ctxsel.db" ]] || fail "purging the server deleted the agent's directories"
dpkg_root --purge ctxsel-agent ctxsel-cli >"$T/purge2.log" 2>&1 || fail "purge: $(cat "$T/purge2.log")"
[[ ! -e "$root/var/lib/ctxsel" && ! -e "$root/etc/ctxsel" && ! -e "$root/usr/bin/ctxsel-cli" ]] ||
  fail "purge left $(ls -d "$root"/var/lib/ctxsel "$root"/etc/ctxsel "$root"/usr/bin/ctxsel-* 2>/dev/null)"
echo "removed (data kept, and said), purged (data gone)"
echo "PASS"
