import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { startSupervised, type SupervisedProcess } from './supervised-process.ts';

/**
 * Routes ranges of the local cluster (cluster-network.ts) `unreachable` for as long as the returned process lives.
 * Every holder registers its PID under /run/haptic-local-routes/<ranges>; the last live holder
 * of the same ranges to stop removes the routes, so concurrent control planes (a test run beside `make cluster-up`) share
 * them. A holder killed outright leaves the routes for the next holder to clean up, which is
 * the safe side: unreachable, never out through the default route. The holder traps TERM
 * before it takes the lock and says it is registered only once it is, so a holder stopped at
 * any point releases its share, and a second holder is not counted on before it counts.
 */
const holder = `
set -u
dir=/run/haptic-local-routes/$(printf '%s' "$*" | tr -c 'A-Za-z0-9.' '_')
mkdir -p "$dir"
exec 9>"$dir/.lock"
live_others() {
  for f in "$dir"/*; do
    [ -e "$f" ] || continue
    pid=\${f##*/}
    [ "$pid" = $$ ] && continue
    if kill -0 "$pid" 2>/dev/null; then return 0; fi
    rm -f "$f"
  done
  return 1
}
release() {
  flock 9
  rm -f "$dir/$$"
  if ! live_others; then
    for cidr in "$@"; do ip route del unreachable "$cidr" 2>/dev/null; done
  fi
  flock -u 9
  exit 0
}
trap 'release "$@"' TERM INT
flock 9
for cidr in "$@"; do
  if ! ip route replace unreachable "$cidr"; then
    echo "cannot route $cidr unreachable (ip route needs root or CAP_NET_ADMIN)"
    live_others || true
    flock -u 9
    exit 1
  fi
done
touch "$dir/$$"
flock -u 9
echo "routes unreachable, holder $$ registered: $*"
while :; do sleep 1 & wait $!; done
`;

/** True when the holder started at `offset` of its log says it has registered. */
function registered(logFile: string, offset: number): boolean {
  return readFileSync(logFile).subarray(offset).toString('utf8').includes('registered:');
}

/** True when every range has an `unreachable` route. */
function routesInPlace(cidrs: readonly string[]): boolean {
  const result = spawnSync('ip', ['-o', 'route', 'show', 'type', 'unreachable'], {
    encoding: 'utf8',
  });
  if (result.status !== 0) return false;
  const routes = result.stdout.split('\n').map((line) => line.trim().split(/\s+/)[1]);
  return cidrs.every((cidr) => routes.includes(cidr));
}

/**
 * Starts a route holder for `cidrs` and waits until it has registered and the routes are in place (the control
 * plane does this before kube-apiserver starts, so not even its first Service call can leave
 * the machine). `ownerPid` as in StartOptions.
 */
export async function holdUnreachableRoutes(
  cidrs: readonly string[],
  logFile: string,
  ownerPid: number | null | undefined,
): Promise<SupervisedProcess> {
  const offset = statSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  const process = startSupervised({
    name: 'unreachable-routes',
    command: 'bash',
    args: ['-c', holder, 'cluster-routes', ...cidrs],
    logFile,
    ...(ownerPid === undefined ? {} : { ownerPid }),
  });
  const state = { exited: false };
  void process.exited.then(() => {
    state.exited = true;
  });
  const deadline = Date.now() + 10_000;
  while (!registered(logFile, offset) || !routesInPlace(cidrs)) {
    if (state.exited || Date.now() > deadline) {
      await process.stop();
      const log = readFileSync(logFile, 'utf8').trim().split('\n').at(-1) ?? '';
      throw new Error(
        `The local cluster routes ${cidrs.join(' and ')} unreachable so that nothing it does leaves this machine, and that failed: ${log || 'no route appeared within 10 s'}. Run it as root (or with CAP_NET_ADMIN) on Linux with iproute2.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process;
}
