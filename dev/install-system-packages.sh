#!/usr/bin/env bash
# Installs the Debian packages the tests use when their command is missing:
# patchelf (dev/install-haproxy.sh points trixie's HAProxy at its own libraries), jq and openssl (the spec's shell procedures), iptables (the
# test run's egress guard), iproute2 (the local cluster's unreachable routes), mmdebstrap (the
# image's Debian base, make image) and runc (runs the image in its tests); containerd, the CNI
# plugins, busybox-static and catatonit (the real node's runtime and its local images, make node-up).
# skopeo copies the product image to the GitOps lifecycle suite's OCI registry; redis-server is
# Argo CD's cache (make test-gitops-lifecycle).
set -euo pipefail
missing=()
for pair in patchelf:patchelf jq:jq openssl:openssl iptables:iptables ip:iproute2 mmdebstrap:mmdebstrap runc:runc \
  containerd:containerd /usr/lib/cni/bridge:containernetworking-plugins busybox:busybox-static catatonit:catatonit skopeo:skopeo \
  redis-server:redis-server; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
# python3-venv: dev/install-checkov.sh makes checkov's venv with python3 -m venv (ensurepip).
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The redis-server package starts a system service (:6379) that we don't want; the suite runs
# its own.
for service in redis-server; do
  if [[ " ${missing[*]} " == *" $service "* ]]; then
    $sudo systemctl disable --now "$service" >/dev/null 2>&1 || $sudo service "$service" stop >/dev/null 2>&1 || true
  fi
done
