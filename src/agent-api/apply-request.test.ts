import { describe, expect, it } from 'vitest';
import {
  type ApplyLimits,
  defaultApplyLimits,
  digestOf,
  parseApplyRequest,
  pathProblem,
} from './apply-request.ts';

function file(path: string, text: string, digest = digestOf(Buffer.from(text))) {
  return { path, digest, content: Buffer.from(text).toString('base64') };
}

const config = file('haproxy.cfg', 'global\n');

describe('paths an apply may write', () => {
  it.each([['haproxy.cfg'], ['maps/hosts.map'], ['ssl/default_example.pem'], ['a/b/c/d/e/f/g/h']])(
    'accepts %s',
    (path) => {
      expect(pathProblem(path)).toBeUndefined();
    },
  );

  it.each([
    ['an absolute path', '/etc/passwd', /absolute/],
    ['a .. segment', 'maps/../../etc/passwd', /"\.\."/],
    ['a leading ..', '../x', /"\.\."/],
    ['a . segment', 'maps/./x', /"\."/],
    ['an empty segment', 'maps//x', /empty/],
    ['a trailing slash', 'maps/', /empty/],
    ['a hidden file (the agent work directory)', '.haptic/journal.json', /segment/],
    ['a backslash', 'maps\\x', /segment/],
    ['a NUL byte', 'maps/x\0', /segment/],
    ['too deep', 'a/b/c/d/e/f/g/h/i', /at most 8/],
    ['too long', 'a'.repeat(600), /1 to 512/],
    ['empty', '', /1 to 512/],
  ])('refuses %s', (_name, path, message) => {
    expect(pathProblem(path)).toMatch(message);
  });
});

describe('parsing an apply request', () => {
  it('decodes files and keeps their digests', () => {
    const parsed = parseApplyRequest(
      { files: [config, file('maps/a.map', 'x be\n')] },
      defaultApplyLimits,
    );
    expect(parsed.ok).toBe(true);
    if (parsed.ok)
      expect(parsed.files.map((f) => f.content.toString())).toEqual(['global\n', 'x be\n']);
  });

  const limits: ApplyLimits = { maxFiles: 3, maxFileBytes: 16, maxTotalBytes: 24 };

  it.each([
    ['a body that is not an object', [], 'RequestInvalid', 'files'],
    ['no files array', { files: 'x' }, 'RequestInvalid', 'files'],
    ['a set without haproxy.cfg', { files: [file('maps/a.map', 'x')] }, 'RequestInvalid', 'files'],
    ['a file that is not an object', { files: [config, 3] }, 'RequestInvalid', 'files[1]'],
    [
      'a path that is not a string',
      { files: [{ ...config, path: 1 }] },
      'RequestInvalid',
      'files[0].path',
    ],
    [
      'an absolute path',
      { files: [config, file('/etc/passwd', 'x')] },
      'PathInvalid',
      'files[1].path',
    ],
    ['a path with ..', { files: [config, file('../x', 'x')] }, 'PathInvalid', 'files[1].path'],
    ['a repeated path', { files: [config, config] }, 'PathInvalid', 'files[1].path'],
    [
      'a file under a file',
      { files: [config, file('a', 'x'), file('a/b', 'y')] },
      'PathInvalid',
      'files[2].path',
    ],
    [
      'a malformed digest',
      { files: [{ ...config, digest: 'md5:00' }] },
      'RequestInvalid',
      'files[0].digest',
    ],
    [
      'a wrong digest',
      { files: [file('haproxy.cfg', 'global\n', digestOf(Buffer.from('other')))] },
      'DigestMismatch',
      'files[0].digest',
    ],
    [
      'content that is not base64',
      { files: [{ ...config, content: 'not base64!' }] },
      'RequestInvalid',
      'files[0].content',
    ],
    [
      'a file over the size limit',
      { files: [file('haproxy.cfg', 'x'.repeat(17))] },
      'TooLarge',
      'files[0].content',
    ],
    [
      'files over the total limit',
      { files: [config, file('a', 'x'.repeat(16)), file('b', 'y'.repeat(16))] },
      'TooLarge',
      'files',
    ],
    [
      'too many files',
      { files: [config, file('a', '1'), file('b', '2'), file('c', '3')] },
      'TooLarge',
      'files',
    ],
  ])('refuses %s, naming the field', (_name, body, reason, field) => {
    const parsed = parseApplyRequest(body, limits);
    expect(parsed).toMatchObject({ ok: false, reason, field });
  });
});
