#!/usr/bin/env bash
# Checks vecsync's usearch binding (native/README.md) the way CI does (.ci/run): builds it from
# source into a temporary folder (the committed prebuilt is left alone), checks what the fresh
# build and the committed prebuilt link against, then runs the graph's contract
# (test/drivers/vector-store/mechanism/graph.test.ts) on the fresh build. Exits non-zero on any failure.
#
#   bash scripts/native/check-graph.sh
#
# What a build may need from the machine it runs on: libc, libm, libpthread, libstdc++ and
# libgcc_s, no glibc newer than GLIBC_FLOOR and no libstdc++ newer than GLIBCXX_FLOOR, and Node's
# N-API (napi_*, resolved from the process that loads it). The floors are what the committed
# prebuilt needs, built on Debian 12 with g++ 12: pthread_rwlock_* moved into libc in glibc 2.34,
# and libstdc++'s 3.4.29 is GCC 11's. A change that needs more raises the floor in native/README.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

GLIBC_FLOOR=2.34
GLIBCXX_FLOOR=3.4.29
ALLOWED_LIBS="libc.so.6 libm.so.6 libpthread.so.0 libstdc++.so.6 libgcc_s.so.1"
platform="$(node -p 'process.platform + "-" + process.arch')"
prebuilt="native/prebuilt/$platform/vecsync-graph.node"
bun="$root/node_modules/.bin/bun"
[ -x "$bun" ] || bun="$(command -v bun)"

for tool in g++ make python3 nm readelf strip; do
  command -v "$tool" >/dev/null || { echo "check-graph: $tool is missing (Debian: apt-get install g++ make python3 binutils)" >&2; exit 1; }
done

# The highest version of `prefix` (GLIBC, GLIBCXX) among the undefined symbols `nm` listed.
highest() { sed -n "s/.*@@\{0,1\}$1_\([0-9.]*\)\$/\1/p" | sort -uV | tail -n 1; }
# Is version $1 at most $2?
at_most() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$2" ]; }

# The checks of one binary; prints what it needs, answers non-zero with the reasons on stderr.
check_links() {
  local file=$1 failed=0 libs undefined stray glibc glibcxx lib
  libs=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $libs; do
    case " $ALLOWED_LIBS " in *" $lib "*) ;; *) echo "   $file: links $lib (allowed: $ALLOWED_LIBS)" >&2; failed=1 ;; esac
  done
  undefined=$(nm -D --undefined-only "$file")
  # Strong undefined symbols must be N-API's or carry a version of the allowed libraries;
  # weak ones (w, v) are optional at load.
  stray=$(awk '$1 == "U" { print $2 }' <<<"$undefined" | grep -Ev '^napi_[A-Za-z0-9_]+$|@@?(GLIBC|GLIBCXX|CXXABI|GCC)_[0-9.]+$' || true)
  if [ -n "$stray" ]; then
    echo "   $file: undefined symbols outside libc, libm, libstdc++, libgcc_s and N-API:" >&2
    sed 's/^/     /' <<<"$stray" >&2
    failed=1
  fi
  glibc=$(awk '{ print $NF }' <<<"$undefined" | highest GLIBC)
  glibcxx=$(awk '{ print $NF }' <<<"$undefined" | highest GLIBCXX)
  at_most "${glibc:-0}" "$GLIBC_FLOOR" || { echo "   $file: needs GLIBC_$glibc, above the floor GLIBC_$GLIBC_FLOOR" >&2; failed=1; }
  at_most "${glibcxx:-0}" "$GLIBCXX_FLOOR" || { echo "   $file: needs GLIBCXX_$glibcxx, above the floor GLIBCXX_$GLIBCXX_FLOOR" >&2; failed=1; }
  echo "   $file: links $(echo $libs); needs GLIBC_${glibc:-none} (floor $GLIBC_FLOOR), GLIBCXX_${glibcxx:-none} (floor $GLIBCXX_FLOOR)"
  return "$failed"
}

out="$(mktemp -d "${TMPDIR:-/tmp}/vecsync-graph-check.XXXXXX")"
trap 'rm -rf "$out"' EXIT
log="$out/build.log"

echo "== building the graph binding from source into $out"
started=$SECONDS
if ! bash scripts/native/build-graph.sh --out "$out" >"$log" 2>&1; then
  echo "check-graph: the build failed; the last lines of its log:" >&2
  tail -n 40 "$log" | sed 's/^/   | /' >&2
  exit 1
fi
echo "   built in $((SECONDS - started)) s"
if ! cmp -s "$out/vecsync-graph.sources" "${prebuilt%.node}.sources"; then
  echo "   note: the committed prebuilt was built from other sources (test/foundation/native-prebuilt.test.ts fails on it):"
  diff "${prebuilt%.node}.sources" "$out/vecsync-graph.sources" | sed 's/^/     /' || true
elif cmp -s "$out/vecsync-graph.node" "$prebuilt"; then
  echo "   byte for byte the committed prebuilt"
fi

echo "== what they link against"
rc=0
[ -f "$prebuilt" ] || { echo "   $prebuilt is missing" >&2; rc=1; }
[ -f "$prebuilt" ] && { check_links "$prebuilt" || rc=1; }
check_links "$out/vecsync-graph.node" || rc=1

echo "== the graph's contract on the fresh build"
VECSYNC_TEST_GRAPH_ADDON="$out/vecsync-graph.node" "$bun" test --timeout 30000 test/drivers/vector-store/mechanism/graph.test.ts || rc=1
exit "$rc"
