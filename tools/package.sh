#!/usr/bin/env bash
# Packages ctxsel for machines that do not build it. docs/operations.md,
# "A self-contained agent and CLI".
#
#   tools/package.sh agent   # dist/ctxsel-agent-VERSION-x86_64-linux.tar.gz
#   tools/package.sh cli     # dist/ctxsel-cli-VERSION-x86_64-linux.tar.gz
#   tools/package.sh deb     # dist/ctxsel-{server,agent,cli}_VERSION_amd64.deb
#   tools/package.sh perf    # dist/ctxsel-perf-VERSION-x86_64-linux.tar.gz:
#                            # tools/perf.sh's binaries, for PERF_BIN
#
# A bundle holds the stripped `-c opt` binary, every shared library `ldd`
# lists for it and the dynamic loader, so that it runs on any x86-64 Linux
# with nothing installed:
#
#   ctxsel-agent-VERSION/bin/ctxsel-agent      a POSIX sh wrapper: runs
#   ctxsel-agent-VERSION/libexec/ctxsel-agent  this binary with
#   ctxsel-agent-VERSION/lib/ld-linux-x86-64.so.2   this loader and
#   ctxsel-agent-VERSION/lib/lib*.so*                these libraries
#
# The GPU vendors' libraries (libnvidia-ml.so.1, ...) are not bundled: the
# agent dlopen()s the node's own at run time, and the bundled loader still
# searches the node's LD_LIBRARY_PATH (after the bundle), /usr/lib64, /lib64,
# /etc/ld.so.cache and the standard directories for them.
#
# The .deb packages are for Debian 12 machines (the server side): the
# stripped binaries in /usr/bin, linked against Debian's libraries (their
# Depends from dpkg-shlibdeps), the systemd units of tools/systemd running as
# the `ctxsel` system user that postinst creates, /etc/ctxsel (0750
# root:ctxsel) and /var/lib/ctxsel (0700 ctxsel:ctxsel). Removing a package
# keeps /etc/ctxsel and the store in /var/lib/ctxsel, and says so; purging
# the last of server and agent deletes them. The maintainer scripts honour
# DPKG_ROOT, so the packages install into a scratch root
# (dpkg --root --force-script-chrootless).
#
# OUT_DIR (default dist/) receives the tarballs and packages; BIN_DIR (binaries already
# built there, laid out as bazel-bin; no build) is for tests.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT_DIR="${OUT_DIR:-dist}"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT

# Libraries a bundle must never carry: they belong to the node's driver, and
# the agent finds them at run time.
VENDOR_LIBRARIES='^lib(nvidia-|cuda\.|amdhip|hsa-runtime|rocm_smi|amd_smi|drm_amdgpu|ze_|igdrcl|OpenCL\.)'

usage() {
  echo "usage: tools/package.sh agent|cli|deb|perf..." >&2
  exit 2
}

# The one version of ctxsel's programs (base/version.h).
version() {
  sed -n 's/.*kVersion\[\] = "\(.*\)";.*/\1/p' base/version.h
}

# `ldd BINARY` as "NAME PATH" lines, the loader included, the vDSO left out.
shared_libraries() {
  ldd "$1" | awk '
    $2 == "=>" && $3 ~ /^\// { print $1, $3; next }
    $2 == "=>" { print "unresolved " $1 > "/dev/stderr"; bad = 1; next }
    $1 ~ /^\// { n = split($1, p, "/"); print p[n], $1 }
    END { exit bad }'
}

# The wrapper that runs the bundled binary NAME with the bundled loader.
# `readlink -f` follows a symlink to it (e.g. from /usr/local/bin);
# --argv0 keeps the program's own name in its messages. The loader (Debian's)
# searches /etc/ld.so.cache and /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu,
# /lib and /usr/lib by itself, after --library-path; /usr/lib64 and /lib64,
# where RHEL's and SUSE's loaders look by default and their NVIDIA drivers
# install, close the path, so a library ldconfig never saw is found there too.
write_wrapper() {
  local name="$1" path="$2"
  cat >"$path" <<EOF
#!/bin/sh
# $name from a self-contained bundle: the bundled loader runs the bundled
# binary on the bundled libraries, then on the node's (LD_LIBRARY_PATH,
# /usr/lib64, /lib64, /etc/ld.so.cache, the standard directories), where
# its GPU driver's are.
self=\$(readlink -f "\$0" 2>/dev/null) || self=\$0
here=\$(cd "\$(dirname "\$self")/.." && pwd -P) || exit 127
exec "\$here/lib/ld-linux-x86-64.so.2" --argv0 "\$0" \\
  --library-path "\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}:/usr/lib64:/lib64" \\
  "\$here/libexec/$name" "\$@"
EOF
  chmod 0755 "$path"
}

# Builds OUT_DIR/NAME-VERSION-x86_64-linux.tar.gz from BINARY, or from
# several binaries (each with its wrapper in bin/, by its own name) sharing
# one lib/.
bundle() {
  local name="$1"
  shift
  local base root binary program
  base="$name-$(version)"
  root="$STAGE/$base"
  install -d "$root/bin" "$root/libexec" "$root/lib"
  local listing="" library path have_loader=""
  for binary in "$@"; do
    program="$name"
    [[ $# -gt 1 ]] && program="$(basename "$binary")"
    strip --strip-all -o "$root/libexec/$program" "$binary"
    chmod 0755 "$root/libexec/$program"
    write_wrapper "$program" "$root/bin/$program"
    listing+="$(shared_libraries "$binary")"$'\n'
  done
  listing="$(sort -u <<<"$listing" | sed '/^$/d')"
  while read -r library path; do
    if [[ "$library" =~ $VENDOR_LIBRARIES ]]; then
      echo "package.sh: $name links $library, a GPU vendor's library;" \
        "not bundled (the node's is used)" >&2
      continue
    fi
    # By the name the binary asks for (its soname), the content followed
    # through symlinks.
    cp -L "$path" "$root/lib/$library"
    chmod 0644 "$root/lib/$library"
    [[ "$library" == ld-linux-x86-64.so.2 ]] && have_loader=1
  done <<<"$listing"
  [[ -n "$have_loader" ]] || { echo "package.sh: $binary: no loader in ldd" >&2; return 1; }
  chmod 0755 "$root/lib/ld-linux-x86-64.so.2"
  mkdir -p "$OUT_DIR"
  local tarball="$OUT_DIR/$base-x86_64-linux.tar.gz"
  # Reproducible: sorted, owned by root, dated by nothing but the version.
  tar -C "$STAGE" --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime=@0 -cf - "$base" | gzip -9n >"$tarball"
  local packed unpacked libraries
  packed="$(wc -c <"$tarball")"
  unpacked="$(du -sk --apparent-size "$root" | cut -f1)"
  libraries="$(($(ls "$root/lib" | wc -l) - 1))"
  awk -v t="$tarball" -v p="$packed" -v u="$unpacked" -v n="$libraries" \
    'BEGIN { printf "%s: %.1f MiB (%.1f MiB unpacked: the binary, %d libraries and the loader)\n", t, p / 1048576, u / 1024, n }'
}

# --- Debian packages -------------------------------------------------------

# The maintainer scripts of a package with a service (server, agent).
write_scripts() {
  local name="$1" debian="$2"
  cat >"$debian/postinst" <<'EOF'
#!/bin/sh
# Makes the ctxsel system user and the directories the services use.
# DPKG_ROOT: the root dpkg installs into (a scratch root in tests).
set -e
root="${DPKG_ROOT:-}"
if [ "$1" = configure ]; then
  if ! grep -q '^ctxsel:' "$root/etc/passwd"; then
    useradd ${root:+--root "$root"} --system --user-group \
      --home-dir /var/lib/ctxsel --no-create-home \
      --shell /usr/sbin/nologin --comment "ctxsel service" ctxsel
  fi
  uid=$(awk -F: '$1 == "ctxsel" { print $3 }' "$root/etc/passwd")
  gid=$(awk -F: '$1 == "ctxsel" { print $3 }' "$root/etc/group")
  mkdir -p "$root/etc/ctxsel" "$root/var/lib/ctxsel"
  chown "0:$gid" "$root/etc/ctxsel"
  chmod 0750 "$root/etc/ctxsel"
  chown "$uid:$gid" "$root/var/lib/ctxsel"
  chmod 0700 "$root/var/lib/ctxsel"
  if [ -z "$root" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
  fi
fi
EOF
  cat >"$debian/prerm" <<EOF
#!/bin/sh
set -e
if [ -z "\${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl stop $name.service || true
fi
EOF
  cat >"$debian/postrm" <<EOF
#!/bin/sh
# remove keeps the configuration and the store, and says where they are;
# purge of the last service package deletes them (the user stays, as
# Debian's policy asks).
set -e
root="\${DPKG_ROOT:-}"
case "\$1" in
  remove)
    echo "$name removed; /etc/ctxsel and /var/lib/ctxsel are kept" \\
      "(apt purge $name deletes them)" >&2 ;;
  purge)
    if [ ! -e "\$root/usr/bin/ctxsel-server" ] && [ ! -e "\$root/usr/bin/ctxsel-agent" ]; then
      rm -rf "\$root/var/lib/ctxsel" "\$root/etc/ctxsel"
    fi ;;
esac
if [ -z "\$root" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload || true
fi
EOF
  chmod 0755 "$debian/postinst" "$debian/prerm" "$debian/postrm"
}

# Builds OUT_DIR/NAME_VERSION_amd64.deb from BINARY (DESCRIPTION: one line).
debian_package() {
  local name="$1" binary="$2" description="$3"
  local root="$STAGE/deb/$name"
  install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/doc/$name"
  strip --strip-all -o "$root/usr/bin/$name" "$binary"
  chmod 0755 "$root/usr/bin/$name"
  local depends extra=""
  # dpkg-shlibdeps wants a source tree around it; an empty one will do.
  install -d "$STAGE/shlibs/debian"
  printf 'Source: ctxsel\n\nPackage: %s\nArchitecture: amd64\n' "$name" \
    >"$STAGE/shlibs/debian/control"
  depends="$(cd "$STAGE/shlibs" &&
    dpkg-shlibdeps -O -e "$root/usr/bin/$name" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')"
  [[ -n "$depends" ]] || { echo "package.sh: no Depends for $name" >&2; return 1; }
  if [[ -f "tools/systemd/$name.service" ]]; then
    install -d -m 0755 "$root/lib/systemd/system"
    # The unit of tools/systemd, with the package's paths and its user.
    sed -e 's|/usr/local/bin/|/usr/bin/|g' \
      -e 's|^DynamicUser=yes$|User=ctxsel\nGroup=ctxsel|' \
      "tools/systemd/$name.service" >"$root/lib/systemd/system/$name.service"
    chmod 0644 "$root/lib/systemd/system/$name.service"
    write_scripts "$name" "$root/DEBIAN"
    extra=", passwd"
  fi
  printf '%s\n' "ctxsel: which kernel variant, on which device of which node." \
    "Built from the ctxsel repository by tools/package.sh deb." \
    >"$root/usr/share/doc/$name/README"
  chmod 0644 "$root/usr/share/doc/$name/README"
  cat >"$root/DEBIAN/control" <<EOF
Package: $name
Version: $(version)
Architecture: amd64
Maintainer: ctxsel developers <ctxsel@localhost>
Section: net
Priority: optional
Depends: $depends$extra
Installed-Size: $(du -sk --apparent-size "$root" | cut -f1)
Description: $description
 ctxsel decides which kernel variant, on which device of which node, a job
 should use (OpenMP context selectors), and claims the device for it.
EOF
  mkdir -p "$OUT_DIR"
  local deb="$OUT_DIR/${name}_$(version)_amd64.deb"
  dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
  awk -v d="$deb" -v s="$(wc -c <"$deb")" \
    'BEGIN { printf "%s: %.1f MiB\n", d, s / 1048576 }'
}

# What tools/perf.sh runs (its build line lists them too), and
# big_kernel_bench for the 40,000-variant first Select, for a machine that
# measures without building (PERF_BIN=<bundle>/bin tools/perf.sh).
PERF_TARGETS=(//bench:select_rpc_bench //bench:placement_bench
  //bench:corpus_bench //bench:report_bench //bench:big_kernel_bench
  //server:ctxsel-server //bench/load:ctxsel-load)

[[ $# -gt 0 ]] || usage
targets=()
for what in "$@"; do
  case "$what" in
    agent) targets+=(//agent:ctxsel-agent) ;;
    cli) targets+=(//client/cli:ctxsel-cli) ;;
    deb) targets+=(//server:ctxsel-server //agent:ctxsel-agent //client/cli:ctxsel-cli) ;;
    perf) targets+=("${PERF_TARGETS[@]}") ;;
    *) usage ;;
  esac
done
if [[ -z "${BIN_DIR:-}" ]]; then
  bazel build -c opt "${targets[@]}"
  BIN_DIR="$(bazel info -c opt bazel-bin)"
fi
for what in "$@"; do
  case "$what" in
    agent) bundle ctxsel-agent "$BIN_DIR/agent/ctxsel-agent" ;;
    cli) bundle ctxsel-cli "$BIN_DIR/client/cli/ctxsel-cli" ;;
    perf)
      perf_binaries=()
      for target in "${PERF_TARGETS[@]}"; do
        target="${target#//}"
        perf_binaries+=("$BIN_DIR/${target%%:*}/${target##*:}")
      done
      bundle ctxsel-perf "${perf_binaries[@]}"
      ;;
    deb)
      debian_package ctxsel-server "$BIN_DIR/server/ctxsel-server" \
        "ctxsel server: kernel variant and device selection"
      debian_package ctxsel-agent "$BIN_DIR/agent/ctxsel-agent" \
        "ctxsel agent: reports a node's devices to ctxsel-server"
      debian_package ctxsel-cli "$BIN_DIR/client/cli/ctxsel-cli" \
        "ctxsel command-line client"
      ;;
  esac
done
