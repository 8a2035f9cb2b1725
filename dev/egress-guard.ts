// node dev/egress-guard.ts -- <command> [args...]
// Runs the command (the test suite) and fails when anything it started sent a packet off this
// machine, naming the destinations (dev/lib/egress-guard.ts). Exit: the command's own code,
// or 1 when it passed but packets left; 2 when the guard cannot be set up.
import { EgressGuard, describeEgress } from './lib/egress-guard.ts';

const separator = process.argv.indexOf('--');
const [command, ...args] = process.argv.slice(separator === -1 ? 2 : separator + 1);
if (command === undefined) {
  process.stderr.write('usage: node dev/egress-guard.ts -- <command> [args...]\n');
  process.exit(2);
}
const guard = new EgressGuard(String(process.pid));
let code: number;
try {
  for (const id of await EgressGuard.removeStale()) {
    process.stderr.write(
      `egress guard: removed the rules and cgroup left by an earlier guarded run (pid ${id}) that was killed before it could remove them\n`,
    );
  }
  guard.install();
} catch (error) {
  await guard.uninstall();
  process.stderr.write(
    `egress guard: ${error instanceof Error ? error.message : String(error)} (it needs root, iptables with the cgroup and recent matches, and cgroup v2; make setup installs iptables)\n`,
  );
  process.exit(2);
}
try {
  code = await guard.run(command, args);
  const report = guard.report();
  if (report.packets > 0) {
    process.stderr.write(`egress guard: ${describeEgress(report)}\n`);
    if (code === 0) code = 1;
  } else {
    process.stderr.write('egress guard: no packet left this machine during the run\n');
  }
} finally {
  await guard.uninstall();
}
process.exit(code);
