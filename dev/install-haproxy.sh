#!/usr/bin/env bash
# Installs the project's HAProxy on this machine: the Debian trixie haproxy build pinned in
# tools/haproxy/debian-version (the one the image runs), unpacked with the shared libraries it
# needs from trixie, kept in the per-user tool cache keyed by that version and copied into
# .tools/haproxy, linked as .tools/bin/haproxy. Every `haproxy -c` of the tests, the benches and
# `haptic config check` runs it (make puts .tools/bin first on PATH); the host's own haproxy is
# never used.
#
# The binary is the package's, with two ELF fields set (patchelf): its loader and library path
# point into .tools/haproxy, so trixie's glibc runs it on an older host; the code is unchanged.
# It lives beside the project, not in the cache under a home directory other users may not
# enter: the check sandbox runs it as nobody. With the cache in place nothing is downloaded.
#
# Environment: HAPTIC_TOOLS_CACHE (default ~/.cache/haptic-tools), and those of
# dev/debian-sources.sh (the mirrors).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fail() {
  echo "dev/install-haproxy.sh: $*" >&2
  exit 2
}
version=$(tr -d '[:space:]' <"$root/tools/haproxy/debian-version")
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+-[0-9A-Za-z.+~]+$ ]] ||
  fail "tools/haproxy/debian-version must hold a Debian version such as 3.0.11-1+deb13u5 (got '$version')"
[ "$(dpkg --print-architecture)" = amd64 ] || fail "the project's HAProxy is amd64 only"
cache=${HAPTIC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haptic-tools}/haproxy/$version
install=$root/.tools/haproxy

# The first line of `haproxy -v` (read whole: a pipe closed early would fail under pipefail).
first_line() { local out; out=$("$install/haproxy" -v 2>&1) || true; printf '%s\n' "${out%%$'\n'*}"; }
runs() { [[ "$(first_line)" == "HAProxy version $version "* ]]; }
if [ "$(cat "$install/debian-version" 2>/dev/null)" = "$version" ] && runs; then
  exit 0
fi

# From the cache to .tools/haproxy (staged, then swapped in), the binary patched there.
place() {
  local staged=$install.partial.$$
  rm -rf "$staged"
  mkdir -p "$staged"
  cp -a "$cache/root" "$staged/root"
  cp "$cache/root/usr/sbin/haproxy" "$staged/haproxy"
  local libs=$install/root/usr/lib/x86_64-linux-gnu
  patchelf --set-interpreter "$libs/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libs" "$staged/haproxy"
  echo "$version" >"$staged/debian-version"
  rm -rf "$install"
  mv -T "$staged" "$install"
  mkdir -p "$root/.tools/bin"
  ln -sfn ../haproxy/haproxy "$root/.tools/bin/haproxy"
  runs || fail "$install/haproxy does not run: $(first_line)"
  first_line >&2
}
command -v patchelf >/dev/null || fail "patchelf is missing; run dev/install-system-packages.sh"
if [ -x "$cache/root/usr/sbin/haproxy" ]; then
  place
  exit 0
fi
for command in apt-get dpkg-deb; do
  command -v "$command" >/dev/null || fail "$command is missing; run dev/install-system-packages.sh"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/haptic-haproxy.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sources.d" "$work/state/lists/partial" "$work/cache/archives/partial" "$work/prefs.d"
"$root/dev/debian-sources.sh" trixie >"$work/sources.d/trixie.sources"
: >"$work/status"
# apt on its own state: trixie's indexes, an empty dpkg status (so the whole dependency
# closure is downloaded), nothing of this machine's apt configuration or locks touched.
apt=(apt-get -qq -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/sources.d"
  -o "Dir::State=$work/state" -o "Dir::State::status=$work/status" -o "Dir::Cache=$work/cache"
  -o "Dir::Etc::PreferencesParts=$work/prefs.d" -o Dir::Etc::Preferences=/dev/null
  -o APT::Architecture=amd64 -o APT::Install-Recommends=false -o Debug::NoLocking=true
  -o APT::Sandbox::User=root)
echo "haproxy: Debian trixie haproxy $version into $cache" >&2
"${apt[@]}" update || fail "could not read trixie's package indexes (see above); check the Debian mirror (dev/debian-sources.sh)"
if ! "${apt[@]}" install --download-only -y "haproxy=$version" >/dev/null; then
  served=$("${apt[@]}" policy haproxy 2>/dev/null | sed -n 's/^ *Candidate: //p')
  fail "the Debian mirror no longer serves haproxy $version (it serves ${served:-none}); put that version in tools/haproxy/debian-version"
fi

staged=$cache.partial.$$
rm -rf "$staged"
mkdir -p "$staged/root"
for deb in "$work/cache/archives"/*.deb; do
  dpkg-deb -x "$deb" "$staged/root"
done
cp "$work/cache/archives/haproxy_${version//:/%3a}_amd64.deb" "$staged/" ||
  fail "apt downloaded no haproxy_${version}_amd64.deb"
rm -rf "$cache"
mkdir -p "$(dirname "$cache")"
mv -T "$staged" "$cache"
place
