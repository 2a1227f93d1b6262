#!/bin/sh
# RUSTC_WORKSPACE_WRAPPER for coverage-guided campaigns (see README.md):
# compiles the dpopt library, and only it, with SanitizerCoverage inline
# 8-bit counters. These are stable `-C` flags; no nightly needed.
rustc="$1"
shift
prev=""
name=""
kind=""
for arg in "$@"; do
  [ "$prev" = "--crate-name" ] && name="$arg"
  [ "$prev" = "--crate-type" ] && kind="$arg"
  prev="$arg"
done
if [ "$name" = "dpopt" ] && [ "$kind" = "lib" ]; then
  exec "$rustc" "$@" -C passes=sancov-module \
    -C llvm-args=-sanitizer-coverage-level=3 \
    -C llvm-args=-sanitizer-coverage-inline-8bit-counters
fi
exec "$rustc" "$@"
