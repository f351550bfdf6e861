#!/bin/bash
# Real binaries from Debian's clang 14 (tools/setup.sh installs clang-14 and
# libomp-14-dev): their device images as images/binary_images.h reads them.
set -euo pipefail
tool="$(pwd)/images/image_fixtures_tool"
cd "${TEST_TMPDIR:-$(mktemp -d)}"
expect() {  # FILE, then the image ids expected, in order
  local file="$1"; shift
  local got
  got="$("$tool" list "$file" | tr '\n' ' ')"
  if [[ "$got" != "$* " ]]; then
    echo "FAIL $file: got '$got', want '$* '"; exit 1
  fi
  echo "ok $file: $got"
}
cat >offload.c <<'C'
#include <stdio.h>
int main(void) {
  int x = 0;
#pragma omp target map(tofrom: x)
  x = 42;
  printf("%d\n", x);
  return x == 42 ? 0 : 1;
}
C
# Host offload: an object file (one section per bundle entry) and the
# linked program (the device ELF embedded by clang-offload-wrapper).
clang-14 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -c offload.c -o offload.o
expect offload.o host:x86_64-pc-linux-gnu
clang-14 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu offload.c -o offload
./offload
expect offload host:x86_64
# Without offload targets a program carries no image.
clang-14 -fopenmp offload.c -o plain
if "$tool" list plain 2>err; then echo "FAIL: plain has images"; exit 1; fi
grep -q "carries no device image" err
# A bundle with several target ids, made by clang-offload-bundler.
printf 'host' >h; printf 'amd a' >a; printf 'amd b' >b; printf '.version 7.0' >p
/usr/lib/llvm-14/bin/clang-offload-bundler -type=o \
  -targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-,hipv4-amdgcn-amd-amdhsa--gfx908,openmp-nvptx64-nvidia-cuda-sm_80 \
  -inputs=h,a,b,p -outputs=bundle
expect bundle amdgcn:gfx90a:xnack- amdgcn:gfx908 ptx:sm_80
# The bundler writes into a host object's sections when it is an ELF.
clang-14 -c -x c /dev/null -o host.o
/usr/lib/llvm-14/bin/clang-offload-bundler -type=o \
  -targets=host-x86_64-unknown-linux-gnu,openmp-amdgcn-amd-amdhsa-gfx90a \
  -inputs=host.o,a -outputs=bundled.o
expect bundled.o amdgcn:gfx90a
echo PASS
