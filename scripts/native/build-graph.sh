#!/usr/bin/env bash
# Builds vecsync's usearch binding (native/graph) and refreshes the prebuilt copy the service
# loads (native/prebuilt/<platform>-<arch>/vecsync-graph.node). Needs a C++17 compiler, make,
# Python 3 and Node's headers; the service itself needs none of them (native/README.md).
#
#   bash scripts/native/build-graph.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root/native/graph"

# node-gyp ships inside npm; Node's headers come from the local install (no download).
gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
[ -f "$nodedir/include/node/node_api.h" ] || { echo "build-graph: no Node headers under $nodedir/include/node" >&2; exit 1; }
node "$gyp" rebuild --nodedir="$nodedir"

platform="$(node -p 'process.platform + "-" + process.arch')"
mkdir -p "$root/native/prebuilt/$platform"
strip --strip-unneeded -o "$root/native/prebuilt/$platform/vecsync-graph.node" build/Release/vecsync_graph.node
# What it was built from: test/foundation/native-prebuilt.test.ts fails when these sources change
# and the binary is not rebuilt with them.
{
  for f in graph.cpp binding.gyp; do echo "$f $(sha256sum "$f" | cut -d' ' -f1)"; done
  echo "usearch $(node -p 'require(process.argv[1]).version' "$root/node_modules/usearch/package.json")"
} > "$root/native/prebuilt/$platform/vecsync-graph.sources"
ls -l "$root/native/prebuilt/$platform/vecsync-graph.node"
