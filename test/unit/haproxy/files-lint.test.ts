import { describe, expect, it } from 'vitest';
import { inspectConfigFiles } from '../../../src/haproxy/files-lint.ts';

const config = (crtList: string) =>
  [
    'global',
    '  default-path config',
    'defaults',
    '  mode http',
    'frontend https',
    `  bind :8443 ssl crt-list ${crtList}`,
    '',
  ].join('\n');

/** A crt-list line naming a key outside the configuration's directory. */
const evilList = '/etc/haptic/agent-tls/tls.crt\n';

function lint(files: Record<string, string>) {
  return inspectConfigFiles((path) => files[path]).findings.map(
    (finding) => `${finding.file} ${finding.reason}`,
  );
}

describe('inspectConfigFiles', () => {
  it.each(['ssl/evil.list', './ssl/evil.list', 'ssl//evil.list', 'ssl/./evil.list'])(
    'lints the crt-list a bind line names as %s, whatever the spelling',
    (name) => {
      expect(lint({ 'haproxy.cfg': config(name), 'ssl/evil.list': evilList })).toEqual([
        'ssl/evil.list FileOutsideDirectory',
      ]);
    },
  );

  it('accepts a crt-list whose certificates are in the directory', () => {
    expect(lint({ 'haproxy.cfg': config('ssl/ok.list'), 'ssl/ok.list': 'ssl/site.pem\n' })).toEqual(
      [],
    );
  });

  it('names haproxy.cfg for its own findings', () => {
    expect(lint({ 'haproxy.cfg': config('/etc/evil.list') })).toEqual([
      'haproxy.cfg FileOutsideDirectory',
    ]);
  });
});
