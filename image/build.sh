#!/usr/bin/env bash
# make image: the haptic image as an OCI archive (a tar of an OCI image layout), built without
# Docker from the package registries, reproducible: the same inputs (sources, pins, the apt
# mirror's packages, SOURCE_DATE_EPOCH) give the same bytes.
#
# Usage: image/build.sh [OUTPUT]   (default .image/haptic-<appVersion>.oci.tar)
# Environment:
#   SOURCE_DATE_EPOCH  the time the image and every file in it carry (default: the last commit's)
#   and those of image/assemble.sh.
#
# The archive holds one image, tagged with the chart's appVersion (org.opencontainers.image.ref.name)
# and named as the chart's defaults name it (io.containerd.image.name, e.g.
# localhost/haptic:<appVersion>), so `ctr images import` gives what a default `helm install` runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fail() {
  echo "image/build.sh: $*" >&2
  exit 2
}

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null) ||
    fail "SOURCE_DATE_EPOCH is unset and there is no git commit to take it from; set it to a Unix time in seconds"
fi
[[ "$SOURCE_DATE_EPOCH" =~ ^[0-9]+$ ]] ||
  fail "SOURCE_DATE_EPOCH must be a Unix time in seconds (got '$SOURCE_DATE_EPOCH')"
export SOURCE_DATE_EPOCH
umoci=$root/.tools/bin/umoci
[ -x "$umoci" ] || fail "$umoci is missing; run dev/install-tools.sh umoci"
command -v jq >/dev/null || fail "jq is missing; run dev/install-system-packages.sh"
name=$(node dev/image-reference.ts)
tag=${name##*:}
if [ $# -eq 0 ]; then
  output=.image/haptic-$tag.oci.tar
  mkdir -p .image && echo '*' >.image/.gitignore # build output, never committed
else
  output=$1
fi
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

start=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/haptic-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
image/assemble.sh "$work/layers"

# Deterministic tar: sorted names, no atime/ctime, every mtime clamped to SOURCE_DATE_EPOCH,
# numeric owners, pax headers named without the process id.
pack() { # pack DIR TAR [NAME...]
  local dir=$1 tar=$2
  shift 2
  tar --create --file="$tar" --directory="$dir" --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner "$@"
}
layout=$work/oci
"$umoci" init --layout "$layout"
"$umoci" new --image "$layout:$tag"
for layer in base runtime app; do
  mapfile -t names < <(cd "$work/layers/$layer" && LC_ALL=C ls -A)
  pack "$work/layers/$layer" "$work/$layer.tar" "${names[@]}"
  "$umoci" raw add-layer --image "$layout:$tag" --compress=gzip \
    --history.created_by="image/assemble.sh ($layer)" "$work/$layer.tar"
  rm "$work/$layer.tar"
done
# The Dockerfile declares the same configuration (a test compares them).
"$umoci" config --image "$layout:$tag" --no-history \
  --config.user=65532:65532 \
  --config.entrypoint=/usr/local/bin/haptic \
  --config.env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env=NODE_ENV=production \
  --config.workingdir=/ \
  --config.label=org.opencontainers.image.title=haptic \
  --config.label=org.opencontainers.image.licenses=Apache-2.0 \
  --config.label="org.opencontainers.image.version=$tag" \
  --manifest.annotation="org.opencontainers.image.created=$created" \
  --manifest.annotation="org.opencontainers.image.version=$tag"
"$umoci" gc --layout "$layout"
jq --arg name "$name" --compact-output \
  '.manifests[0].annotations["io.containerd.image.name"] = $name' \
  "$layout/index.json" >"$work/index.json"
mv "$work/index.json" "$layout/index.json"

pack "$layout" "$output.tmp" oci-layout index.json blobs
mv -f "$output.tmp" "$output"

manifest=$(jq -r '.manifests[0].digest' "$layout/index.json")
compressed=$(jq '[.layers[].size] | add' "$layout/blobs/sha256/${manifest#sha256:}")
unpacked=$(du -sb --apparent-size "$work/layers" | cut -f1)
echo "image: $output ($name, manifest $manifest)" >&2
echo "image: layers $((compressed / 1000000)) MB compressed, $((unpacked / 1000000)) MB unpacked; built in $((SECONDS - start)) s" >&2
