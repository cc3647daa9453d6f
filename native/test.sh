#!/usr/bin/env bash
# Build the native recorder and run its tests: a normal build in native/build,
# then an ASan/UBSan build in native/build-asan (skip it with TICKWISE_NO_ASAN=1).
#   native/test.sh            both builds
#   native/test.sh --quick    the normal build only
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
command -v cmake >/dev/null 2>&1 || { echo "native/test.sh: cmake not found" >&2; exit 2; }

build_and_test() {
  local dir="$1"; shift
  cmake -S "$here" -B "$here/$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$here/$dir" -j "$jobs"
  (cd "$here/$dir" && ctest --output-on-failure -j "$jobs")
}

echo "== native/build"
build_and_test build -DTICKWISE_SANITIZE=OFF
if [[ "${1:-}" != "--quick" && "${TICKWISE_NO_ASAN:-0}" != 1 ]]; then
  echo "== native/build-asan (AddressSanitizer + UndefinedBehaviorSanitizer)"
  # Leaks: the recorder keeps its state for the whole process on purpose.
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    build_and_test build-asan -DTICKWISE_SANITIZE=ON
fi
