#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.c) into build-fuzz/<target>
# with clang, ASan and UBSan. The engine (every src/**/*.c except the
# server's main.c) is compiled by the Makefile's own rules into
# build-fuzz/lib/libshoal.a (so header dependencies are tracked), then
# linked into each target.
# tests/fuzz/shim is on the include path: it maps mimalloc onto libc malloc
# so that ASan can check engine allocations (mimalloc's heaps are invisible
# to it).
#   bash tests/fuzz/build.sh          # from anywhere
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${FUZZ_BUILD:-build-fuzz}
CC=${FUZZ_CC:-clang}
JOBS=$(nproc)
# UBSan checks stay recoverable so tests/fuzz/ubsan.supp can silence known
# ones; run.sh sets halt_on_error=1, so every other report stops the run.
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer"
# clang's warnings differ from gcc's (the -Werror compiler); show, don't fail.
EXTRA="-Wno-error -Itests/fuzz/shim"

make -s -j"$JOBS" BUILD="$OUT/lib" CC="$CC" OPT=-O1 SAN="$SAN -fsanitize=fuzzer-no-link" \
  EXTRA_CFLAGS="$EXTRA" "$OUT/lib/libshoal.a"

CFLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -Itests/fuzz/shim -Isrc -I/usr/include/lua5.1 -pthread $SAN"
for t in tests/fuzz/fuzz_*.c; do
  name=$(basename "$t" .c)
  echo "  FUZZ $OUT/$name"
  $CC $CFLAGS -fsanitize=fuzzer "$t" "$OUT/lib/libshoal.a" -o "$OUT/$name.tmp" -lmimalloc -llzf -llua5.1-cjson -llua5.1-bitop -llua5.1 -lssl -lcrypto -lm -pthread
  mv -f "$OUT/$name.tmp" "$OUT/$name" # a running fuzzer keeps its old binary
done
