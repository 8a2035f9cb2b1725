/**
 * A test host: a network namespace of its own, joined to this machine by a veth pair with a
 * /30 from the pod range (cluster-network.ts), running the sample HTTP backend. Its address
 * is an ordinary IPv4 address the API server accepts in an EndpointSlice, and HAProxy (on
 * 127.x addresses) reaches it through the host side of the veth, whose /30 route is more
 * specific than the pod range's `unreachable` route.
 *
 * Allocation: /30 number i of 10.244.0.0/16 (namespace `haptic-h<i>`, veth `hh<i>`/`hn<i>`)
 * is claimed under a lock in /run/haptic-test-hosts, where `<i>.pid` names the holder, so
 * test files running at once never share one. The holder is a shell under the usual
 * watchdog (supervised-process.ts): when the owner dies or stop() is called it stops the
 * server and deletes the namespace (the veth goes with it). A holder killed outright leaves
 * its namespace for the next holder to remove (its PID is gone), never for anyone to reuse
 * while it lives.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomInt } from 'node:crypto';
import { podCidr } from './cluster-network.ts';
import { startSupervised } from './supervised-process.ts';

/** /30 blocks in the pod range (a /16). */
const blocks = 16384;
const [podBase = '10.244.0.0'] = podCidr.split('/');
const [first = 10, second = 244] = podBase.split('.').map(Number);

const holder = `
set -u
i=$1; port=$2; shift 2
dir=/run/haptic-test-hosts
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
# Namespaces whose holders are gone (killed outright) are removed before anything is claimed.
for f in "$dir"/*.pid; do
  [ -e "$f" ] || continue
  kill -0 "$(cat "$f")" 2>/dev/null && continue
  n=\${f##*/}; n=\${n%.pid}
  ip netns del "haptic-h$n" 2>/dev/null; ip link del "hh$n" 2>/dev/null; rm -f "$f"
done
if [ -e "$dir/$i.pid" ] || [ -e "/run/netns/haptic-h$i" ]; then
  echo "test host $i is taken"; exit 3
fi
ip netns add "haptic-h$i" || exit 1
echo $$ > "$dir/$i.pid"
flock -u 9
exec 9>&-
ns=haptic-h$i
cleanup() {
  trap '' TERM INT
  [ -n "\${child:-}" ] && kill -TERM "$child" 2>/dev/null && wait "$child"
  ip netns del "$ns" 2>/dev/null
  ip link del "hh$i" 2>/dev/null
  rm -f "$dir/$i.pid"
  exit 0
}
trap cleanup TERM INT
base=$((i * 4))
net=${String(first)}.${String(second)}.$((base / 256))
ip link add "hh$i" type veth peer name "hn$i" netns "$ns" &&
  ip addr add "$net.$((base % 256 + 1))/30" dev "hh$i" &&
  ip link set "hh$i" up &&
  ip -n "$ns" addr add "$net.$((base % 256 + 2))/30" dev "hn$i" &&
  ip -n "$ns" link set "hn$i" up &&
  ip -n "$ns" link set lo up || { echo "cannot wire test host $i"; cleanup; }
ip netns exec "$ns" "$@" &
child=$!
wait "$child"
cleanup
`;

export interface NetnsHost {
  /** The network namespace. */
  readonly namespace: string;
  /** The backend's address (inside the namespace): put it in an IPv4 EndpointSlice. */
  readonly address: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface NetnsHostOptions {
  /** The server answers `<body> <path>`. */
  readonly body: string;
  /** The holder's and the server's output. */
  readonly logFile: string;
  /** @default 8080 (the namespace is the host's own, so every host can use it) */
  readonly port?: number;
  /** As in StartOptions: the run that owns the host. @default process.pid */
  readonly ownerPid?: number | null;
}

function addressOf(block: number, last: 1 | 2): string {
  const base = block * 4;
  return `${String(first)}.${String(second)}.${String(Math.floor(base / 256))}.${String((base % 256) + last)}`;
}

function answers(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const call = request({ host: address, port, path: '/', timeout: 500, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    call.on('error', () => {
      resolve(false);
    });
    call.on('timeout', () => call.destroy());
    call.end();
  });
}

/** Starts a test host and waits until its backend answers from the host side. */
export async function startNetnsHost(options: NetnsHostOptions): Promise<NetnsHost> {
  const port = options.port ?? 8080;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const block = randomInt(blocks);
    const holderProcess = startSupervised({
      name: `test-host-${String(block)}`,
      command: 'bash',
      args: [
        ...['-c', holder, 'test-host', String(block), String(port)],
        ...[process.execPath, join(import.meta.dirname, 'sample-http-server.ts')],
        ...[options.body, String(port)],
      ],
      logFile: options.logFile,
      ...(options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid }),
    });
    let code: number | null | undefined;
    void holderProcess.exited.then((exit) => {
      code = exit;
    });
    const address = addressOf(block, 2);
    const deadline = Date.now() + 15_000;
    while (code === undefined && Date.now() < deadline) {
      if (await answers(address, port)) {
        return {
          namespace: `haptic-h${String(block)}`,
          address,
          port,
          stop: () => holderProcess.stop(),
        };
      }
      await sleep(50);
    }
    await holderProcess.stop();
    if (code !== 3) {
      throw new Error(
        `The test host ${addressOf(block, 2)} did not come up (see ${options.logFile}); it needs root (ip netns, veth) on Linux.`,
      );
    }
  }
  throw new Error('No free test host address in 20 attempts.');
}
