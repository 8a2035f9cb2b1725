/**
 * kubectl and helm (the pinned ones) bound to one cluster's kubeconfig. A failing command
 * throws with its arguments and its own message, so a phase's failure says what was asked.
 */
import { execa } from 'execa';
import { toolPath } from '../lib/tools.ts';

export interface ClusterCli {
  readonly kubeconfig: string;
  /** stdout of a kubectl command that must succeed. */
  kubectl(args: readonly string[], input?: string): Promise<string>;
  /** A kubectl `-o json` read, parsed. */
  kubectlJson<T>(args: readonly string[]): Promise<T>;
  /** kubectl without throwing: exit code, stdout and stderr. */
  kubectlTry(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** stdout of a helm command that must succeed. */
  helm(args: readonly string[]): Promise<string>;
}

export function clusterCli(kubeconfig: string): ClusterCli {
  const env = { KUBECONFIG: kubeconfig };
  const must = async (tool: 'kubectl' | 'helm', args: readonly string[], input?: string) => {
    const result = await execa(toolPath(tool), args, {
      env,
      reject: false,
      ...(input === undefined ? {} : { input }),
    });
    if (result.exitCode !== 0) {
      throw new Error(`${tool} ${args.join(' ')} failed: ${result.stderr.trim() || result.stdout}`);
    }
    return result.stdout;
  };
  return {
    kubeconfig,
    kubectl: (args, input) => must('kubectl', args, input),
    async kubectlJson<T>(args: readonly string[]): Promise<T> {
      return JSON.parse(await must('kubectl', [...args, '-o', 'json'])) as T;
    },
    async kubectlTry(args) {
      const result = await execa(toolPath('kubectl'), args, { env, reject: false });
      return { code: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
    },
    helm: (args) => must('helm', args),
  };
}
