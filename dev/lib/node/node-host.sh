#!/usr/bin/env bash
# The real node's share of this machine, held for as long as this script lives (node-host.ts
# starts it under the usual watchdog, so it gets TERM when its owner dies):
#   - cgroup <NODE_CGROUP> in every hierarchy: every process of the node runs in it, kubelet
#     puts its kubepods below it (cgroupRoot), containerd's shims inherit it;
#   - network namespace <NODE_NETNS>, a veth pair to the host, the node's routes and sysctls;
#   - a mount namespace (the "anchor" process) with private tmpfs over the paths containerd,
#     the CNI plugins and kubelet hard-code (/run/containerd, /var/lib/cni,
#     /var/log/containers), so every mount of the node lives and dies in it.
# On TERM/INT it kills every process of the cgroup (Pods, shims, daemons), after which the
# mount namespace, the Pods' network namespaces, the bridge and all iptables rules have
# nothing left holding them; then it removes the cgroups, the namespace and the link.
#
# Usage: node-host.sh hold | clean      (settings in the environment, see node-host.ts)
# `clean` removes what a holder killed outright left behind; `hold` runs it first.
set -u
mode=${1:?usage: node-host.sh hold|clean}
: "${NODE_NETNS:?}" "${NODE_CGROUP:?}" "${NODE_RUN_DIR:?}" "${HOST_IF:?}" "${HOST_ADDR:?}"
: "${NODE_ADDR:?}" "${NODE_IP:?}" "${POD_SUBNET:?}" "${SERVICE_CIDR:?}"
anchor_paths="/run/containerd /var/lib/cni /var/log/containers"

# Setting up failed: say what and how to fix it, undo the rest.
fail() {
  echo "$*"
  clean
  exit 1
}

# The node's directory in every mounted cgroup hierarchy (v1 controllers, name=systemd, v2).
cgroup_dirs() {
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^cgroup2?$/) print $5; break } }' \
    /proc/self/mountinfo | while read -r mount; do echo "$mount/$NODE_CGROUP"; done
}

node_pids() {
  for dir in $(cgroup_dirs); do
    [ -d "$dir" ] && find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}

clean() {
  local pids
  for _ in $(seq 30); do
    pids=$(node_pids)
    [ -z "$pids" ] && break
    # shellcheck disable=SC2086 # one PID per word
    kill -KILL $pids 2>/dev/null
    sleep 0.1
  done
  [ -n "$(node_pids)" ] && echo "node clean-up: processes $(node_pids | tr '\n' ' ')did not exit"
  for _ in $(seq 10); do
    for dir in $(cgroup_dirs); do
      [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    [ -z "$(for dir in $(cgroup_dirs); do [ -d "$dir" ] && echo "$dir"; done)" ] && break
    sleep 0.1
  done
  ip netns del "$NODE_NETNS" 2>/dev/null
  ip link del "$HOST_IF" 2>/dev/null
  rm -f "$NODE_RUN_DIR"/containerd.sock* "$NODE_RUN_DIR"/{anchor.pid,holder.pid,cgroups}
  # The anchor's mount points, unless something else has put files there since.
  # shellcheck disable=SC2086 # one path per word
  rmdir $anchor_paths 2>/dev/null
}

mkdir -p "$NODE_RUN_DIR"
exec 9>"$NODE_RUN_DIR/lock"
flock -n 9 || {
  echo "another node is running on this machine (holder $(cat "$NODE_RUN_DIR/holder.pid" 2>/dev/null)); stop it first (make node-down)"
  exit 3
}
clean
[ "$mode" = clean ] && exit 0
echo $$ >"$NODE_RUN_DIR/holder.pid"
trap 'trap "" TERM INT; clean; exit 0' TERM INT

for dir in $(cgroup_dirs); do
  mkdir -p "$dir" || fail "cannot create cgroup $dir (the node needs root and writable cgroup hierarchies)"
  if [ -e "$dir/cpuset.cpus" ]; then
    cat "$dir/../cpuset.cpus" >"$dir/cpuset.cpus" && cat "$dir/../cpuset.mems" >"$dir/cpuset.mems" ||
      fail "cannot configure cgroup $dir (cpuset)"
  fi
done
cgroup_dirs >"$NODE_RUN_DIR/cgroups"

ns="nsenter --net=/run/netns/$NODE_NETNS"
ip netns add "$NODE_NETNS" || fail "cannot create network namespace $NODE_NETNS (the kernel needs CONFIG_NET_NS; run as root)"
ip link add "$HOST_IF" type veth peer name eth0 netns "$NODE_NETNS" ||
  fail "cannot create veth pair $HOST_IF (the kernel needs veth: modprobe veth)"
ip addr add "$HOST_ADDR" dev "$HOST_IF" && ip link set "$HOST_IF" up &&
  ip -n "$NODE_NETNS" addr add "$NODE_ADDR" dev eth0 && ip -n "$NODE_NETNS" link set eth0 up &&
  ip -n "$NODE_NETNS" link set lo up ||
  fail "cannot address the node's link $HOST_IF ($HOST_ADDR, $NODE_ADDR)"
# ClusterIPs are local inside the node: kube-proxy's DNAT applies on OUTPUT and PREROUTING, and
# a ClusterIP without endpoints is refused there (never routed anywhere).
ip -n "$NODE_NETNS" route add local "$SERVICE_CIDR" dev lo ||
  fail "cannot route $SERVICE_CIDR local in the node"
ip route replace "$POD_SUBNET" via "$NODE_IP" dev "$HOST_IF" ||
  fail "cannot route the node's Pod subnet $POD_SUBNET to it"
$ns sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward' || fail "cannot enable ip_forward in the node"
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] ||
  fail "bridged Pod traffic cannot pass iptables (the kernel needs br_netfilter: modprobe br_netfilter)"
$ns sh -c 'echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables' ||
  fail "cannot enable bridge-nf-call-iptables in the node"
$ns iptables -w -t nat -S >/dev/null 2>&1 ||
  fail "iptables has no nat table here (kube-proxy needs it: modprobe iptable_nat, or nf_tables with iptables-nft)"

for path in $anchor_paths; do mkdir -p "$path" || fail "cannot create mount point $path"; done
ready="$NODE_RUN_DIR/anchor.ready"
rm -f "$ready"
# The anchor joins the node's cgroup, then the namespaces; it only holds them.
# shellcheck disable=SC2016 # expanded by the anchor's own shell
sh -c 'for dir in $1; do echo $$ > "$dir/cgroup.procs" || exit 1; done; shift; exec "$@"' anchor "$(cgroup_dirs)" \
  $ns unshare --mount --propagation slave sh -c '
    ready=$1; shift
    for path in "$@"; do mount -t tmpfs -o mode=0755 haptic-node "$path" || exit 1; done
    : > "$ready"
    exec sleep infinity' anchor "$ready" $anchor_paths &
anchor=$!
for _ in $(seq 100); do
  [ -e "$ready" ] && break
  kill -0 $anchor 2>/dev/null || fail "cannot create the node's mount namespace (unshare --mount, tmpfs)"
  sleep 0.05
done
[ -e "$ready" ] || fail "the node's mount namespace was not ready within 5 s"
rm -f "$ready"
# With the token of the start that asked for this holder (a stale file names another).
echo "$anchor ${NODE_HOLD_TOKEN:-}" >"$NODE_RUN_DIR/anchor.pid"
echo "node host ready: netns $NODE_NETNS, $NODE_IP, anchor $anchor"
while :; do
  sleep 1 &
  wait $!
  kill -0 $anchor 2>/dev/null || {
    echo "the node's mount namespace anchor ($anchor) died"
    clean
    exit 1
  }
done
