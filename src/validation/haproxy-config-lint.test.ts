import { describe, expect, it } from 'vitest';
import { inspectHaproxyConfig } from './haproxy-config-lint.ts';

const lintHaproxyConfig = (config: string) => inspectHaproxyConfig(config).findings;
const declaredBackends = (config: string) => inspectHaproxyConfig(config).backends;
import { splitConfigLine } from './haproxy-config-words.ts';

const safe = `global
  log stderr format raw local0
  stats socket /var/run/haproxy/admin.sock level admin
  tune.lua.maxmem 0
defaults
  mode http
  no option external-check
frontend fe
  bind :8080
  http-request set-header X-Note "lua-load is only text here"
  # lua-load /tmp/commented.lua
  use_backend %[req.hdr(host),lower,map(/etc/haproxy/haptic/maps/hosts.map)]
backend be_one
  option httpchk
  server s1 10.0.0.1:80 check
`;

describe('splitting configuration lines as HAProxy does', () => {
  it.each([
    ['plain words', 'bind :8080 ssl', ['bind', ':8080', 'ssl']],
    ['a comment ends the line', 'mode http # comment', ['mode', 'http']],
    ['double quotes join words', 'string "a b"', ['string', 'a b']],
    ['single quotes are literal', "string 'a\\x41 $HOME'", ['string', 'a\\x41 $HOME']],
    ['a backslash escapes a space', 'a\\ b c', ['a b', 'c']],
    ['\\xHH is a byte', 'lua\\x2dload', ['lua-load']],
    ['quotes inside a word', 'lua-"lo"ad x', ['lua-load', 'x']],
    ['a quoted # is text', 'x "#not a comment"', ['x', '#not a comment']],
  ])('%s', (_name, line, words) => {
    expect(splitConfigLine(line).map((word) => word.text)).toEqual(words);
  });

  it('marks words with environment variables inside double quotes only', () => {
    const [first, second] = splitConfigLine(`"\${KEYWORD}" '$LITERAL'`);
    expect(first?.fromEnvironment).toBe(true);
    expect(second?.fromEnvironment).toBe(false);
  });
});

describe('linting haproxy.cfg for code-loading directives', () => {
  it('accepts an ordinary configuration', () => {
    expect(lintHaproxyConfig(safe)).toEqual([]);
  });

  it.each([
    ['lua-load', 'global\n  lua-load /tmp/x.lua\n', 'lua-load /tmp/x.lua'],
    ['lua-load-per-thread', 'global\n lua-load-per-thread /x.lua', 'lua-load-per-thread /x.lua'],
    ['lua-prepend-path', 'global\n lua-prepend-path /tmp/?.lua', 'lua-prepend-path /tmp/?.lua'],
    ['any other lua- keyword', 'global\n lua-future-thing x', 'lua-future-thing x'],
    ['ssl-engine', 'global\n ssl-engine rdrand', 'ssl-engine rdrand'],
    ['ssl-provider', 'global\n ssl-provider legacy', 'ssl-provider legacy'],
    ['ssl-provider-path', 'global\n ssl-provider-path /tmp', 'ssl-provider-path /tmp'],
    ['external-check in global', 'global\n external-check', 'external-check'],
    [
      'external-check command',
      'backend b\n external-check command /bin/sh',
      'external-check command',
    ],
    ['option external-check', 'backend b\n option external-check', 'option external-check'],
    [
      'default option external-check',
      'defaults\n default option external-check',
      'option external-check',
    ],
    ['insecure-fork-wanted', 'global\n insecure-fork-wanted', 'insecure-fork-wanted'],
    ['insecure-setuid-wanted', 'global\n insecure-setuid-wanted', 'insecure-setuid-wanted'],
    ['setenv', 'global\n setenv LD_PRELOAD /tmp/x.so', 'setenv LD_PRELOAD'],
    ['presetenv', 'global\n presetenv A b', 'presetenv A'],
    ['resetenv', 'global\n resetenv', 'resetenv'],
    ['unsetenv', 'global\n unsetenv PATH', 'unsetenv PATH'],
    ['a program section', 'program evil\n  command /bin/sh -c id', 'program evil'],
    ['a quoted keyword', 'global\n "lua-load" /x.lua', 'lua-load /x.lua'],
    ['an escaped keyword', 'global\n lua\\x2dload /x.lua', 'lua-load /x.lua'],
    ['a keyword split by quotes', 'global\n lua-"load" /x.lua', 'lua-load /x.lua'],
    ['an upper-case keyword', 'global\n LUA-LOAD /x.lua', 'LUA-LOAD /x.lua'],
    ['a keyword from the environment', 'global\n "${KEYWORD}" /x.lua', '${KEYWORD} /x.lua'],
    ['an option from the environment', 'backend b\n option "$OPT"', 'option $OPT'],
  ])('refuses %s', (_name, config, directive) => {
    const findings = lintHaproxyConfig(config);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.directive).toBe(directive);
    expect(findings[0]?.message).toMatch(/^line \d+: /);
  });

  it('reports every forbidden line with its number', () => {
    const findings = lintHaproxyConfig('global\n  lua-load /a\n  ssl-engine x\n');
    expect(findings.map((finding) => finding.line)).toEqual([2, 3]);
  });

  it('refuses a NUL byte', () => {
    expect(lintHaproxyConfig('global\n\0lua-load /a')[0]?.directive).toBe('NUL');
  });
});

describe('backends a configuration declares', () => {
  it('lists backend and listen sections', () => {
    expect(declaredBackends(`${safe}listen stats\n  bind :9000\nbackend "quoted"\n`)).toEqual([
      'be_one',
      'stats',
      'quoted',
    ]);
  });
});
