#!/usr/bin/env bash
# Installs Debian's haproxy package when no haproxy is on PATH.
set -euo pipefail
command -v haproxy >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends haproxy >/dev/null
# The package starts a system haproxy on :80 we do not want; tests run their own.
$sudo systemctl disable --now haproxy >/dev/null 2>&1 || $sudo service haproxy stop >/dev/null 2>&1 || true
