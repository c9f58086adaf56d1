#!/usr/bin/env bash
# Builds vecsync's usearch binding (native/graph) from source: vecsync-graph.node (stripped) and
# vecsync-graph.sources (what it was built from) into the prebuilt folder the service loads,
# native/prebuilt/<platform>-<arch>/, or with --out into DIR instead (scripts/native/check-graph.sh
# builds into a temporary folder and leaves the committed copy alone). Needs a C++17 compiler,
# make, Python 3 and Node's headers; the service itself needs none of them (native/README.md).
#
#   bash scripts/native/build-graph.sh [--out DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
platform="$(node -p 'process.platform + "-" + process.arch')"
out="$root/native/prebuilt/$platform"
if [ "${1:-}" = --out ]; then
  [ -n "${2:-}" ] || { echo "build-graph: --out needs a folder" >&2; exit 2; }
  out="$2"
elif [ $# -gt 0 ]; then
  echo "usage: bash scripts/native/build-graph.sh [--out DIR]" >&2
  exit 2
fi

# node-gyp ships inside npm; Node's headers come from the local install (no download).
gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
[ -f "$nodedir/include/node/node_api.h" ] || { echo "build-graph: no Node headers under $nodedir/include/node" >&2; exit 1; }

# A scratch tree shaped like the repository (binding.gyp reaches usearch through
# ../../node_modules), so node-gyp's build/ lands there and goes with it.
work="$(mktemp -d "${TMPDIR:-/tmp}/vecsync-graph-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/native/graph"
cp "$root/native/graph/graph.cpp" "$root/native/graph/binding.gyp" "$work/native/graph/"
ln -s "$root/node_modules" "$work/node_modules"
(cd "$work/native/graph" && node "$gyp" rebuild --jobs max --nodedir="$nodedir")

mkdir -p "$out"
strip --strip-unneeded -o "$out/vecsync-graph.node" "$work/native/graph/build/Release/vecsync_graph.node"
# What it was built from: test/foundation/native-prebuilt.test.ts fails when these sources change
# and the committed binary is not rebuilt with them.
{
  for f in graph.cpp binding.gyp; do echo "$f $(sha256sum "$root/native/graph/$f" | cut -d' ' -f1)"; done
  echo "usearch $(node -p 'require(process.argv[1]).version' "$root/node_modules/usearch/package.json")"
} > "$out/vecsync-graph.sources"
ls -l "$out/vecsync-graph.node"
