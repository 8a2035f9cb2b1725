#!/usr/bin/env bash
# Builds the pinned Go tools (tools/*/go.mod) into a per-user cache keyed by their pins,
# and links them into .tools/bin. A warm run (cache present) builds nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${HAPTIC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haptic-tools}
bin="$root/.tools/bin"
mkdir -p "$bin" "$cache"

# Usage: dev/install-tools.sh [tool...]   (all tools when none is named)
# tool name  module dir  package
tools=(
  "kube-apiserver kubernetes k8s.io/kubernetes/cmd/kube-apiserver"
  "kubectl kubernetes k8s.io/kubernetes/cmd/kubectl"
  "kube-controller-manager kubernetes k8s.io/kubernetes/cmd/kube-controller-manager"
  "kube-scheduler kubernetes k8s.io/kubernetes/cmd/kube-scheduler"
  "kubelet kubernetes k8s.io/kubernetes/cmd/kubelet"
  "kube-proxy kubernetes k8s.io/kubernetes/cmd/kube-proxy"
  "etcd etcd go.etcd.io/etcd/server/v3"
  "helm helm3 helm.sh/helm/v3/cmd/helm"
  "helm4 helm4 helm.sh/helm/v4/cmd/helm"
  "umoci umoci github.com/opencontainers/umoci/cmd/umoci"
  "registry registry github.com/distribution/distribution/v3/cmd/registry"
  "kube-score kube-score github.com/zegl/kube-score/cmd/kube-score"
  "source-controller flux github.com/fluxcd/source-controller"
  "helm-controller flux github.com/fluxcd/helm-controller"
  "argocd argocd github.com/argoproj/argo-cd/v3/cmd"
  "cert-manager-controller cert-manager haptic.local/tools/cert-manager/cmd/cert-manager-controller"
  "cert-manager-cainjector cert-manager haptic.local/tools/cert-manager/cmd/cert-manager-cainjector"
  "haptic-no-network no-network haptic.local/tools/no-network"
)

goversion=$(go env GOVERSION)
for entry in "${tools[@]}"; do
  read -r name dir pkg <<<"$entry"
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  ldflags=-s
  if [ "$dir" = kubernetes ]; then
    # Stamp the release the module pins, so `--version` and the API's /version tell the truth.
    release=$(go mod edit -json "$root/tools/$dir/go.mod" | node -e 'const m = JSON.parse(require("fs").readFileSync(0, "utf8")); process.stdout.write(m.Require.find((r) => r.Path === "k8s.io/kubernetes").Version)')
    [ -n "$release" ] || { echo "tools/$dir/go.mod does not require k8s.io/kubernetes" >&2; exit 1; }
    ldflags="-s -X k8s.io/component-base/version.gitVersion=$release -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$release" | cut -d. -f2)"
  fi
  # A wrapper's own Go sources (tools/cert-manager's mains) are part of the key too.
  key=$(cat "$root/tools/$dir/go.mod" "$root/tools/$dir/go.sum" <(echo "$pkg $goversion $ldflags") \
    <(cd "$root/tools/$dir" && find . -name '*.go' -type f | LC_ALL=C sort | xargs -r cat) | sha256sum | cut -c1-16)
  target="$cache/$name-$key"
  if [ ! -x "$target" ]; then
    echo "building $name ($pkg, key $key)" >&2
    start=$SECONDS
    # A wrapper that names a newer toolchain (tools/argocd) gets it from the module proxy.
    (cd "$root/tools/$dir" && GOTOOLCHAIN=auto CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$target.tmp.$$" "$pkg")
    mv -f "$target.tmp.$$" "$target"  # atomic: a concurrent run sees all or nothing
    echo "built $name in $((SECONDS - start))s" >&2
  fi
  if [ "$name" = haptic-no-network ]; then
    # A copy, not a link into this user's cache: the check sandbox runs it after dropping from
    # root to another user (src/sandbox/sandbox-launcher.ts), who may not enter $HOME.
    install -m 0755 "$target" "$bin/$name.tmp.$$"
    mv -f "$bin/$name.tmp.$$" "$bin/$name"
  else
    ln -sfn "$target" "$bin/$name"
  fi
done

# Modules whose files are read at run time, not only built: cert-manager's CRDs (the chart's
# cert-manager tests, the GitOps lifecycle) and Argo CD's install manifests (the lifecycle),
# found through their wrapper (dev/gitops/engine-process.ts moduleDir). A warm binary cache
# builds nothing, so they are fetched here, outside any egress-guarded run, and verified by the
# wrapper's go.sum (no checksum-database lookup); nothing is fetched when they are cached.
if [ $# -eq 0 ]; then
  for entry in "cert-manager github.com/cert-manager/cert-manager" "argocd github.com/argoproj/argo-cd/v3"; do
    read -r dir module <<<"$entry"
    (cd "$root/tools/$dir" && GOTOOLCHAIN=auto go mod download "$module")
  done
fi
