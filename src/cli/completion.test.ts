import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('main.ts', import.meta.url));
let script = '';

beforeAll(async () => {
  script = (await execa(process.execPath, [main, 'completion', 'bash'])).stdout;
}, 30_000);

/** What bash offers after typing `line` (the last word is the one being completed). */
async function complete(line: string): Promise<string[]> {
  const words = line.split(' ');
  const program = [
    script,
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    '_haptic_complete',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const { stdout } = await execa('bash', ['--norc', '-c', program]);
  return stdout.split('\n').filter((word) => word !== '');
}

describe('haptic completion bash, in a real bash', () => {
  it('completes the commands, then the subcommands and options of the command typed', async () => {
    expect(await complete('haptic ')).toEqual(
      expect.arrayContaining(['run', 'certificates', 'preflight', 'completion', '--version']),
    );
    expect(await complete('haptic cert')).toEqual(['certificates']);
    expect(await complete('haptic certificates ')).toEqual(
      expect.arrayContaining(['renew', 'check', 'status', 'rotate-ca']),
    );
    expect(await complete('haptic certificates status --')).toEqual(
      expect.arrayContaining(['--namespace', '--release', '--within', '--output', '--kubeconfig']),
    );
    expect(await complete('haptic certificates status --')).not.toContain('--issuer-secret');
  });

  it('skips an option value while finding the command, and leaves a value to file completion', async () => {
    expect(await complete('haptic certificates -n haptic status --rel')).toEqual(['--release']);
    expect(await complete('haptic crds apply --kubeconfig ')).toEqual([]);
    expect(await complete('haptic nonsense ')).toEqual(
      expect.arrayContaining(['run', 'certificates']),
    );
  });
});

describe('haptic completion', () => {
  it('prints a zsh script that loads bashcompinit first', async () => {
    const zsh = (await execa(process.execPath, [main, 'completion', 'zsh'])).stdout;
    expect(zsh.split('\n').slice(0, 2)).toEqual([
      '# zsh completion for haptic: source <(haptic completion zsh)',
      'autoload -U +X bashcompinit && bashcompinit',
    ]);
    expect(zsh).toContain('complete -o default -F _haptic_complete haptic');
  });

  it('refuses a shell it has no script for, naming the ones it has (exit 2)', async () => {
    const refused = await execa(process.execPath, [main, 'completion', 'fish'], { reject: false });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      "value 'fish' is invalid for argument 'shell'. choose bash or zsh.",
    );
  });

  it('prints the version for --version and -V; haptic version adds HAProxy and Node.js', async () => {
    const version = (await execa(process.execPath, [main, '--version'])).stdout;
    expect(version).toMatch(/^\d+\.\d+\.\d+\S*$/);
    expect((await execa(process.execPath, [main, '-V'])).stdout).toBe(version);
    const haproxy = (await execa('haproxy', ['-v'])).stdout.split(' ')[2];
    expect((await execa(process.execPath, [main, 'version'])).stdout.split('\n')).toEqual([
      `haptic ${version}`,
      expect.stringMatching(
        new RegExp(`^HAProxy ${(haproxy ?? '').replace(/[.+]/g, '\\$&')} \\(/.+/haproxy\\)$`),
      ),
      `Node.js ${process.version}`,
    ]);
  });
});
