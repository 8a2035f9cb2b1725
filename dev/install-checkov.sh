#!/usr/bin/env bash
# Installs checkov (the chart's static check, test/unit/chart/static-checks.test.ts) from PyPI
# into a per-user cache venv keyed by its pin, and links it as .tools/bin/checkov. The venv gets
# exactly tools/checkov/requirements.txt: checkov and every dependency, pinned with hashes. A
# warm run (cache present) installs nothing. Needs python3 with venv (Debian's python3-venv,
# dev/install-system-packages.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${HAPTIC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haptic-tools}
bin="$root/.tools/bin"
lock="$root/tools/checkov/requirements.txt"
mkdir -p "$bin" "$cache/checkov"

version=$(sed -n 's/^checkov==\([^ ;]*\).*/\1/p' "$lock")
[ -n "$version" ] || { echo "$lock does not pin checkov==<version>" >&2; exit 1; }
python=$(command -v python3) || { echo "python3 is missing; run dev/install-system-packages.sh" >&2; exit 1; }
# A venv belongs to the interpreter that made it: that interpreter is part of the key too.
interpreter=$("$python" -c 'import sys; print(sys.executable, sys.version)')
key=$(cat "$lock" <(echo "$interpreter") | sha256sum | cut -c1-16)
target="$cache/checkov/$version-$key"

# A venv cannot be moved once made (its scripts name their interpreter by path), so it is made
# in place under a lock, and marked complete last; an incomplete one is made anew.
exec 9>"$target.lock"
flock 9
if [ ! -e "$target/.complete" ]; then
  echo "installing checkov $version (key $key)" >&2
  start=$SECONDS
  rm -rf "$target"
  "$python" -m venv "$target"
  "$target/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-hashes --only-binary=:all: -r "$lock"
  touch "$target/.complete"
  echo "installed checkov $version in $((SECONDS - start))s" >&2
fi
ln -sfn "$target/bin/checkov" "$bin/checkov"
