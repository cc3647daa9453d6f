#!/usr/bin/env bash
# Builds native/jsonscan/build/tw-jsonscan (the C++ scanner the JSON trace
# readers use when it is there; see json-records.ts). --if-stale: only when
# the source is newer than the binary. Needs g++; zlib's header is optional
# (without it, gzip input goes to the TypeScript scanner).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/tw-jsonscan.cpp"
out="$here/build/tw-jsonscan"
if [ "${1:-}" = "--if-stale" ] && [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$here/build.sh" ]; then exit 0; fi
command -v g++ >/dev/null || { echo "native/jsonscan: no g++, the TypeScript scanner is used" >&2; exit 0; }
mkdir -p "$here/build"
zlib=()
if echo '#include <zlib.h>' | g++ -x c++ -fsyntax-only - 2>/dev/null; then zlib=(-DTW_HAVE_ZLIB); fi
libs=(); [ ${#zlib[@]} -gt 0 ] && libs=(-lz)
trap 'rm -f "$out.tmp.$$"' EXIT
g++ -std=c++17 -O2 -Wall -Wextra "${zlib[@]}" -o "$out.tmp.$$" "$src" "${libs[@]}"
mv "$out.tmp.$$" "$out"   # a rename: a build running beside this one (scripts/tickwise) never sees half a binary
