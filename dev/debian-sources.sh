#!/usr/bin/env bash
# Prints apt sources (deb822) for a Debian release, its updates and its security suite, on the
# mirrors this machine uses: the URIs of /etc/apt/sources.list.d/debian.sources or
# /etc/apt/sources.list (security: the one naming debian-security), or the environment's.
#
# Usage: dev/debian-sources.sh SUITE   (e.g. trixie)
# Environment:
#   HAPTIC_DEBIAN_MIRROR           Debian mirror URI (default: this machine's, else deb.debian.org)
#   HAPTIC_DEBIAN_SECURITY_MIRROR  Debian security mirror URI (default: likewise)
set -euo pipefail
[ $# -eq 1 ] && [[ "$1" =~ ^[a-z]+$ ]] || {
  echo "usage: dev/debian-sources.sh SUITE (a Debian release name such as trixie)" >&2
  exit 2
}
suite=$1
uris=$(
  {
    sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true
    sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' /etc/apt/sources.list 2>/dev/null || true
  } | tr ' ' '\n' | sed '/^$/d'
)
mirror=${HAPTIC_DEBIAN_MIRROR:-$(grep -v security <<<"$uris" | head -n1 || true)}
security=${HAPTIC_DEBIAN_SECURITY_MIRROR:-$(grep security <<<"$uris" | head -n1 || true)}
cat <<SOURCES
Types: deb
URIs: ${mirror:-http://deb.debian.org/debian}
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${security:-http://deb.debian.org/debian-security}
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
