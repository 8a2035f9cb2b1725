// The hook-Job runner as a process: node dev/job-runner.ts <kubeconfig> <dir>
import { startJobRunner } from './lib/job-runner.ts';

const [kubeconfigPath, dir] = process.argv.slice(2);
if (kubeconfigPath === undefined || dir === undefined) {
  process.stderr.write('usage: node dev/job-runner.ts <kubeconfig> <dir>\n');
  process.exit(2);
}
const runner = startJobRunner({ kubeconfigPath, dir });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void runner.stop().then(() => process.exit(0));
  });
}
