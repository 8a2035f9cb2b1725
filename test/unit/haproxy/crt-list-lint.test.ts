import { describe, expect, it } from 'vitest';
import { inspectCrtList } from '../../../src/haproxy/crt-list-lint.ts';
import { haproxyLintReasons as reasons } from '../../../src/haproxy/lint-finding.ts';

describe('linting crt-list files', () => {
  it('accepts certificates in the directory, allowed settings and SNI filters', () => {
    const list = [
      '# comment',
      'ssl/a.pem a.example.com *.a.example.com',
      'ssl/b.pem [alpn h2 ca-file ssl/ca.pem verify optional] b.example.com !c.example.com',
      '',
    ].join('\n');
    expect(inspectCrtList(list)).toEqual([]);
  });

  it.each([
    [
      'an absolute certificate',
      '/etc/haptic/agent-tls/tls.crt x',
      '/etc/haptic/agent-tls/tls.crt',
      reasons.FileOutsideDirectory,
    ],
    ['a certificate with ..', '../x.pem', '../x.pem', reasons.FileOutsideDirectory],
    [
      'a CA file outside the directory',
      'ssl/a.pem [ca-file /etc/ssl/ca.pem] a',
      'ca-file /etc/ssl/ca.pem',
      reasons.FileOutsideDirectory,
    ],
    [
      'a setting off the list',
      'ssl/a.pem [crt-ignore-err all] a',
      'crt-ignore-err',
      reasons.KeywordNotAllowed,
    ],
    ['a NUL byte', 'ssl/a.pem\0', 'NUL', reasons.NulByte],
  ])('refuses %s', (_name, list, directive, reason) => {
    expect(inspectCrtList(list)[0]).toMatchObject({ line: 1, directive, reason });
  });

  it('refuses PEM data read as a crt-list without quoting any of it', () => {
    const key = 'C6qLORma6JJGJZR+0ryXeT8=';
    const pem = [
      '-----BEGIN CERTIFICATE-----',
      'MIIBszCCAVmgAwIBAgIUX2',
      '-----END CERTIFICATE-----',
      '  -----BEGIN PRIVATE KEY-----',
      'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg',
      key,
      '-----END PRIVATE KEY-----',
      '',
    ].join('\n');
    const findings = inspectCrtList(pem);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ line: 1, reason: reasons.PemInCrtList });
    const onlyKey = pem.split('\n').slice(3).join('\n');
    expect(inspectCrtList(onlyKey)[0]).toMatchObject({ line: 1, reason: reasons.PemInCrtList });
    for (const finding of [...findings, ...inspectCrtList(onlyKey)]) {
      expect(finding.message).not.toContain(key);
      expect(finding.message).not.toContain('MII');
    }
  });

  it('reads a line that starts with a space as HAProxy does: not a comment', () => {
    expect(inspectCrtList(' #/etc/x.pem')[0]?.directive).toBe('#/etc/x.pem');
  });
});
