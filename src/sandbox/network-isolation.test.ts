import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type NetworkIsolation,
  isolationCandidates,
  isolationFailed,
  namespaceCommand,
  noNetworkHelper,
  selectNetworkIsolation,
} from './network-isolation.ts';

/** A PATH whose second directory holds an executable helper. */
function pathWithHelper(): { path: string; helper: string } {
  const empty = mkdtempSync(join(tmpdir(), 'isolation-empty-'));
  const bin = mkdtempSync(join(tmpdir(), 'isolation-bin-'));
  const helper = join(bin, noNetworkHelper);
  writeFileSync(helper, '#!/bin/sh\n');
  chmodSync(helper, 0o755);
  return { path: `${empty}:relative/dir:${bin}`, helper };
}

describe('isolationCandidates', () => {
  it('tries the seccomp helper found on PATH first, then a network namespace', () => {
    const { path, helper } = pathWithHelper();
    expect(isolationCandidates('auto', path)).toEqual([
      { kind: 'seccomp', command: [helper, '--'] },
      { kind: 'namespace', command: namespaceCommand },
    ]);
    expect(isolationCandidates('seccomp', path)).toEqual([
      { kind: 'seccomp', command: [helper, '--'] },
    ]);
    expect(isolationCandidates('namespace', path)).toEqual([
      { kind: 'namespace', command: namespaceCommand },
    ]);
  });

  it('says why seccomp cannot be tried when the helper is not on PATH', () => {
    const empty = mkdtempSync(join(tmpdir(), 'isolation-empty-'));
    expect(isolationCandidates('seccomp', empty)).toEqual([
      {
        kind: 'seccomp',
        problem: expect.stringContaining('haptic-no-network is not on PATH') as unknown,
      },
    ]);
  });
});

describe('selectNetworkIsolation', () => {
  it('takes the first candidate under which the trial succeeds', async () => {
    const { path, helper } = pathWithHelper();
    const tried: string[] = [];
    const chosen = await selectNetworkIsolation('auto', path, (isolation: NetworkIsolation) => {
      tried.push(isolation.kind);
      return Promise.resolve(
        isolation.kind === 'seccomp'
          ? { exitCode: 126, message: 'haptic-no-network: cannot cut the command off' }
          : { exitCode: 0, message: '' },
      );
    });
    expect(tried).toEqual(['seccomp', 'namespace']);
    expect(chosen).toEqual({ kind: 'namespace', command: namespaceCommand });
    expect(helper).toContain(noNetworkHelper);
  });

  it('refuses to start, naming every reason, when no candidate works', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'isolation-empty-'));
    const chosen = await selectNetworkIsolation('auto', empty, () =>
      Promise.resolve({
        exitCode: 1,
        message: 'unshare: unshare failed: Operation not permitted\n',
      }),
    );
    expect(chosen).toEqual({
      problem:
        'haproxy -c cannot be cut off from the network, so the check sandbox does not start (seccomp: haptic-no-network is not on PATH (the image has it; make setup builds it into .tools/bin); namespace: unshare: unshare failed: Operation not permitted)',
    });
  });
});

describe('isolationFailed', () => {
  it("tells the isolation's own complaints from HAProxy's output", () => {
    expect(isolationFailed('haptic-no-network: failed to execute prlimit: …')).toBe(true);
    expect(isolationFailed('unshare: unshare failed: Operation not permitted')).toBe(true);
    expect(isolationFailed('[ALERT]    (1) : config : parsing [haproxy.cfg:2]')).toBe(false);
  });
});
