/**
 * The annotation value parsers: the forms each accepts and the typed value it gives, the forms
 * it refuses, and, for the text that reaches haproxy.cfg or a map file, what no accepted value
 * may hold (whitespace, quotes, `#`, control characters) across every ASCII character and
 * generated strings, and that `haproxy -c` loads what they give as the default template
 * writes it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Parsed,
  haproxyDuration,
  isExpected,
  parseBackendProtocol,
  parseBoolean,
  parseDuration,
  parseHostName,
  parsePathRegex,
  parseRanges,
  parseRedirectCode,
  parseRedirectUrl,
  parseRewriteTarget,
  parseSize,
  parseUrlPath,
  regexLiteral,
} from './annotation-values.ts';

/** The value, or `refused` with the expected form checked to be a phrase. */
function outcome<T>(parsed: Parsed<T>): T | 'refused' {
  if (!isExpected(parsed)) return parsed;
  expect(parsed.expected.length).toBeGreaterThan(10);
  return 'refused';
}

/** The value of a parse that must succeed. */
function accepted<T>(parsed: Parsed<T>): T {
  if (isExpected(parsed)) throw new Error(`refused: expected ${parsed.expected}`);
  return parsed;
}

const dir = mkdtempSync(join(tmpdir(), 'annotation-values-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * `haproxy -c` on a configuration that writes the values as the default template does: path
 * regexes as regex.map keys after a host literal and in `replace-path`, redirect locations
 * and app roots in single quotes, ranges in `src` ACLs, host names in `set-header Host`.
 */
function haproxyLoads(
  name: string,
  values: {
    readonly regexes?: readonly string[];
    readonly locations?: readonly string[];
    readonly ranges?: readonly (readonly string[])[];
    readonly hosts?: readonly string[];
  },
): { ok: boolean; output: string } {
  const map = join(dir, `${name}.map`);
  writeFileSync(
    map,
    (values.regexes ?? [])
      .map((source) => `(?i)^a\\.example\\.com(?:${source}) app:web:http\n`)
      .join(''),
  );
  const lines = [
    'defaults',
    '  mode http',
    '  timeout client 1s',
    '  timeout server 1s',
    '  timeout connect 1s',
    'frontend http',
    '  bind 127.0.0.1:8080',
    `  http-request set-var(txn.backend) path,map_reg(${map})`,
    '  default_backend web',
    'backend web',
    ...(values.regexes ?? []).map(
      (source, i) => `  http-request replace-path '(?i)^(?:${source})' '/' if { path /r${i} }`,
    ),
    ...(values.locations ?? []).map(
      (location, i) => `  http-request redirect location '${location}' code 302 if { path /l${i} }`,
    ),
    ...(values.ranges ?? []).map(
      (ranges, i) =>
        `  http-request deny deny_status 403 if { src ${ranges.join(' ')} } { path /s${i} }`,
    ),
    ...(values.hosts ?? []).map(
      (host, i) => `  http-request set-header Host ${host} if { path /h${i} }`,
    ),
    '',
  ];
  writeFileSync(join(dir, `${name}.cfg`), lines.join('\n'));
  const result = spawnSync('haproxy', ['-c', '-f', join(dir, `${name}.cfg`)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin' },
  });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

describe('parseBoolean', () => {
  it.each([
    ['true', true],
    ['false', false],
    [' TRUE ', true],
    ['False', false],
    ['yes', 'refused'],
    ['1', 'refused'],
    ['', 'refused'],
    ['true false', 'refused'],
  ])('reads %j as %s', (text, value) => {
    expect(outcome(parseBoolean(text))).toBe(value);
  });
});

describe('parseDuration', () => {
  it.each([
    ['60', 60_000],
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1ms', 1],
    ['86400', 86_400_000],
    ['24h', 86_400_000],
    ['1440m', 86_400_000],
    [' 60 ', 60_000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(outcome(parseDuration(text))).toBe(ms);
  });

  it.each([
    ['0', 'zero'],
    ['0ms', 'zero'],
    ['86401', 'over a day'],
    ['25h', 'over a day'],
    ['1441m', 'over a day'],
    ['86400001ms', 'over a day'],
    ['1234567890', 'ten digits'],
    ['1.5s', 'a fraction'],
    ['-1', 'a sign'],
    ['+1', 'a sign'],
    ['5 m', 'a space before the unit'],
    ['5M', 'an upper-case unit'],
    ['1d', 'an unknown unit'],
    ['1e3', 'an exponent'],
    ['0x10', 'hexadecimal'],
    ['Infinity', 'a word'],
    ['', 'nothing'],
    ['5s timeout server 0', 'more words'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parseDuration(text))).toBe('refused');
  });

  it.each([
    [60_000, '60s'],
    [500, '500ms'],
    [1_500, '1500ms'],
    [86_400_000, '86400s'],
  ])('writes %d ms for HAProxy as %s', (ms, text) => {
    expect(haproxyDuration(ms)).toBe(text);
  });
});

describe('parseSize', () => {
  it.each([
    ['1m', 1024 ** 2],
    ['512K', 512 * 1024],
    ['512k', 512 * 1024],
    ['10', 10],
    ['1G', 1024 ** 3],
    ['64g', 64 * 1024 ** 3],
    [String(64 * 1024 ** 3), 64 * 1024 ** 3],
    ['0', null],
    ['0m', null],
    [' 8m ', 8 * 1024 ** 2],
  ])('reads %j as %s bytes (null: no limit)', (text, bytes) => {
    expect(outcome(parseSize(text))).toBe(bytes);
  });

  it.each([
    ['65g', 'over 64 GiB'],
    [String(64 * 1024 ** 3 + 1), 'one byte over 64 GiB'],
    ['1234567890123', 'thirteen digits'],
    ['1.5m', 'a fraction'],
    ['1mb', 'a two-letter unit'],
    ['1t', 'terabytes'],
    ['-1', 'a sign'],
    ['1 m', 'a space before the unit'],
    ['', 'nothing'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parseSize(text))).toBe('refused');
  });
});

describe('parseRanges', () => {
  it.each([
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['192.0.2.7', ['192.0.2.7']],
    ['2001:DB8::/32', ['2001:db8::/32']],
    ['::1/128', ['::1/128']],
    ['0.0.0.0/0,::/0', ['0.0.0.0/0', '::/0']],
    [' 10.0.0.0/08 , 192.0.2.7 ,', ['10.0.0.0/8', '192.0.2.7']],
    ['FD00::1', ['fd00::1']],
    ['::ffff:10.0.0.1', ['::ffff:10.0.0.1']],
  ])('reads %j as %j', (text, ranges) => {
    expect(outcome(parseRanges(text))).toEqual(ranges);
  });

  it.each([
    ['10.0.0.0/33', 'an IPv4 prefix over 32'],
    ['::/129', 'an IPv6 prefix over 128'],
    ['10.0.0.0/-1', 'a negative prefix'],
    ['10.0.0.0/', 'an empty prefix'],
    ['10.0.0.0/1234', 'a four-digit prefix'],
    ['10.0.0.0/8/1', 'two prefixes'],
    ['10.0.0.0/0x8', 'a hexadecimal prefix'],
    ['10.0.0.256', 'an octet over 255'],
    ['010.0.0.1', 'a leading zero'],
    ['10.0.0', 'three octets'],
    ['example.com', 'a name'],
    ['10.0.0.0/8 10.1.0.0/16', 'a space as separator'],
    ['10.0.0.1 }', 'a brace'],
    ['', 'nothing'],
    [' , ,', 'empty entries only'],
    ['10.0.0.1,bad', 'one bad entry among good ones'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parseRanges(text))).toBe('refused');
  });

  it('accepts 50 entries and refuses 51 (one line of the template, under the word limit of the lint)', () => {
    const list = (n: number) =>
      Array.from({ length: n }, (_, i) => `10.0.${String(i >> 8)}.${String(i & 255)}`).join(',');
    expect(outcome(parseRanges(list(50)))).toHaveLength(50);
    expect(outcome(parseRanges(list(51)))).toBe('refused');
  });
});

describe('parseRedirectCode', () => {
  it.each([
    ['301', 301],
    ['302', 302],
    ['303', 303],
    ['307', 307],
    ['308', 308],
    [' 308 ', 308],
  ])('reads %j as %d', (text, code) => {
    expect(outcome(parseRedirectCode(text))).toBe(code);
  });

  it.each(['300', '304', '200', '0301', '301.0', '3e2', '', '308 if TRUE'])(
    'refuses %j',
    (text) => {
      expect(outcome(parseRedirectCode(text))).toBe('refused');
    },
  );
});

describe('parseRedirectUrl', () => {
  it.each([
    ['https://example.com/new', 'https://example.com/new'],
    ['http://example.com', 'http://example.com'],
    ['HTTPS://EXAMPLE.COM/A', 'HTTPS://EXAMPLE.COM/A'],
    [' https://example.com/ ', 'https://example.com/'],
    ['https://example.com/a%20b', 'https://example.com/a%%20b'],
    ['https://example.com/%[src]', 'https://example.com/%%[src]'],
    ['https://example.com:8443/p?q=1&r=$x', 'https://example.com:8443/p?q=1&r=$x'],
    ['https://[2001:db8::1]/', 'https://[2001:db8::1]/'],
  ])('reads %j as %j, every "%" doubled for log-format', (text, location) => {
    expect(outcome(parseRedirectUrl(text))).toBe(location);
  });

  it.each([
    ['ftp://example.com/', 'another scheme'],
    ['//example.com/', 'no scheme'],
    ['/relative', 'a path'],
    ['javascript:alert(1)', 'javascript:'],
    ['https://', 'no host'],
    ['https:///path', 'an empty host'],
    ['https://ex ample.com/', 'a space'],
    ["https://example.com/'", 'a single quote'],
    ["https://example.com/' code 301 if TRUE", 'a quote closing the location'],
    ['https://example.com/"', 'a double quote'],
    ['https://example.com/a\nb', 'a newline'],
    ['https://example.com/a\tb', 'a tab'],
    ['https://example.com/a\\b', 'a backslash'],
    ['https://example.com/<script>', 'angle brackets'],
    ['https://example.com/{x}', 'braces'],
    ['https://example.com/a`b', 'a backtick'],
    ['https://example.com/é', 'a character beyond ASCII'],
    [`https://example.com/${'a'.repeat(2048)}`, 'over 2,048 characters'],
    ['', 'nothing'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parseRedirectUrl(text))).toBe('refused');
  });

  it('accepts a fragment: the template writes the location in single quotes, where HAProxy reads "#" as it is', () => {
    const location = parseRedirectUrl('https://example.com/a#top');
    expect(location).toBe('https://example.com/a#top');
    expect(haproxyLoads('fragment', { locations: [accepted(location)] })).toMatchObject({
      ok: true,
    });
  });
});

describe('parseUrlPath', () => {
  it.each([
    ['/app', '/app'],
    [' /app/ ', '/app/'],
    ['/a-b_c.d~e!$&()*+,;=:@', '/a-b_c.d~e!$&()*+,;=:@'],
  ])('reads %j as %j', (text, path) => {
    expect(outcome(parseUrlPath(text))).toBe(path);
  });

  it.each([
    'app',
    '/a b',
    '/%41',
    "/a'",
    '/a"',
    '/a#b',
    '/a?b',
    '/a\\b',
    '',
    `/${'a'.repeat(1024)}`,
  ])('refuses %j', (text) => {
    expect(outcome(parseUrlPath(text))).toBe('refused');
  });
});

describe('parseHostName', () => {
  it.each([
    ['api.internal', 'api.internal'],
    ['API.Internal', 'api.internal'],
    ['api.internal:8080', 'api.internal:8080'],
    ['localhost', 'localhost'],
    [`${'a'.repeat(63)}.example`, `${'a'.repeat(63)}.example`],
  ])('reads %j as %j', (text, host) => {
    expect(outcome(parseHostName(text))).toBe(host);
  });

  it.each([
    ['-api.internal', 'a label starting with "-"'],
    ['api-.internal', 'a label ending with "-"'],
    ['api..internal', 'an empty label'],
    ['api.internal.', 'a trailing dot'],
    ['api_x.internal', 'an underscore'],
    ['a b', 'a space'],
    ['api\nx', 'a newline'],
    [`${'a'.repeat(64)}.example`, 'a label of 64 characters'],
    [`${'a.'.repeat(127)}ab`, 'over 253 characters'],
    ['api:', 'an empty port'],
    ['api:123456', 'a six-digit port'],
    ['*.example.com', 'a wildcard'],
    ['[::1]', 'an IPv6 literal'],
    ['', 'nothing'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parseHostName(text))).toBe('refused');
  });
});

describe('parseBackendProtocol', () => {
  it.each([
    ['HTTP', 'HTTP'],
    ['https', 'HTTPS'],
    ['grpc', 'GRPC'],
    [' GRPCS ', 'GRPCS'],
    ['h2c', 'H2C'],
  ])('reads %j as %s', (text, protocol) => {
    expect(outcome(parseBackendProtocol(text))).toBe(protocol);
  });

  it.each(['AJP', 'FCGI', 'HTTP2', 'HTTP HTTPS', ''])('refuses %j', (text) => {
    expect(outcome(parseBackendProtocol(text))).toBe('refused');
  });
});

describe('parsePathRegex', () => {
  it.each([
    ['/app(/|$)(.*)', 2],
    ['/api', 0],
    ['/(?:a|b)/(\\d+)', 1],
    ['/a|/b', 0],
    ['/x{2,3}', 0],
    ['/[\\w-]+', 0],
    ['/\\.well-known/(.*)', 1],
    ['/[^/]+/(\\w+)$', 1],
    ['/((a)(b))(c)', 4],
    ['/\\(literal\\)', 0],
  ])('reads %j with %d capture group(s)', (text, groups) => {
    expect(outcome(parsePathRegex(text))).toEqual({ source: text, groups });
  });

  it.each([
    ['/(?<=x)y', 'a lookbehind'],
    ['/(?=x)', 'a lookahead'],
    ['/(?i)x', 'inline options'],
    ['(?i)/x', 'inline options before the "/"'],
    ['/(?<name>x)', 'a named group'],
    ['/(?#x)', 'a comment group'],
    ['/[]', 'an empty class'],
    ['/[^]', 'an empty negated class'],
    ['/\\Qx\\E', 'a quoted sequence'],
    ['/\\1', 'a backreference'],
    ['/\\x41', 'a hexadecimal escape'],
    ['/\\p{L}', 'a property escape'],
    ['/(a', 'an unclosed group'],
    ['/a)', 'an unopened group'],
    ['/a)|(.*', 'a group closed early, reopened after an alternative'],
    ['/[a', 'an unclosed class'],
    ['/a**', 'a quantifier on nothing'],
    ['/a b', 'a space'],
    ['/a\tb', 'a tab'],
    ['/a\nb', 'a newline'],
    ['/a#b', 'a "#"'],
    ['/a%20', 'a "%"'],
    ["/a'", 'a single quote'],
    ['/a"', 'a double quote'],
    ['/a`b', 'a backtick'],
    ['app', 'no leading "/"'],
    ['.*', 'no leading "/", matching any path'],
    [`/${'a'.repeat(1024)}`, 'over 1,024 characters'],
    ['', 'nothing'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parsePathRegex(text))).toBe('refused');
  });

  it('says why a regex is refused', () => {
    expect(parsePathRegex('/(?=x)y')).toEqual({
      expected: expect.stringContaining('it has a "(?" construct other than "(?:"') as unknown,
    });
    expect(parsePathRegex('/(a')).toEqual({
      expected: expect.stringContaining('it does not compile') as unknown,
    });
    expect(parsePathRegex('/a b')).toEqual({
      expected: expect.stringContaining('no space, quote, "#" or "%"') as unknown,
    });
  });

  it('gives regexes that haproxy -c loads as regex.map keys and replace-path patterns', () => {
    const sources = [
      '/app(/|$)(.*)',
      '/(?:a|b)/(\\d+)',
      '/a|/b',
      '/x{2,3}',
      '/[\\w-]+',
      '/\\.well-known/(.*)',
      '/[^/]+/(\\w+)$',
      '/\\(literal\\)',
      '/[-a]',
      '/[a-]',
      '/\\d\\D\\s\\S\\w\\W\\/\\.\\\\.',
    ];
    const regexes = sources.map((source) => outcome(parsePathRegex(source)));
    expect(regexes).not.toContain('refused');
    const loaded = haproxyLoads('regexes', { regexes: sources });
    expect(loaded.output).not.toMatch(/ALERT/);
    expect(loaded.ok).toBe(true);
  });
});

describe('parseRewriteTarget', () => {
  it.each([
    ['/$2', '/\\2', 2],
    ['$2', '\\2', 2],
    ['/api/$1', '/api/\\1', 1],
    ['api/$1', '/api/\\1', 1],
    ['/', '/', 0],
    ['/static', '/static', 0],
    ['/$1/$3', '/\\1/\\3', 3],
    ['/$0', '/\\0', 0],
  ])('reads %j as the format %j naming group %d at most', (text, format, highestGroup) => {
    expect(outcome(parseRewriteTarget(text))).toEqual({ format, highestGroup });
  });

  it.each([
    ['/a b', 'a space'],
    ['/%20', 'a "%"'],
    ["/'", 'a quote'],
    ['/a?b', 'a query'],
    ['/a#b', 'a "#"'],
    ['/\\1', 'a backslash'],
    ['/$', 'a "$" without a digit'],
    ['/$a', 'a "$" before a letter'],
    ['/${1}', 'braces'],
    ['/a\nb', 'a newline'],
    [`/${'a'.repeat(1024)}`, 'over 1,024 characters'],
  ])('refuses %j (%s)', (text) => {
    expect(outcome(parseRewriteTarget(text))).toBe('refused');
  });
});

describe('regexLiteral', () => {
  it.each([
    ['a.example.com', 'a\\.example\\.com'],
    ['*', '\\*'],
    ['*.example.com', '\\*\\.example\\.com'],
    ['a-b.example.com', 'a-b\\.example\\.com'],
    ['(x)[y]{z}|^$?+\\', '\\(x\\)\\[y\\]\\{z\\}\\|\\^\\$\\?\\+\\\\'],
  ])('writes %j as %j', (text, literal) => {
    expect(regexLiteral(text)).toBe(literal);
    expect(new RegExp(`^${literal}$`).test(text)).toBe(true);
  });
});

/**
 * What would end a word of haproxy.cfg or a map line, close the single quotes the template
 * writes, or split a line: no accepted value may hold it. (A backslash is read as it is in
 * single quotes and map keys: regexes and rewrite formats hold some.)
 */
function breakers(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    const c = text.charAt(i);
    if (/[\s'"\u2028\u2029\ufeff]/.test(c) || code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      found.push(c);
    }
  }
  return found;
}

/** Every character of interest: all of ASCII and the non-ASCII spaces and line breaks. */
const characters = [
  ...Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)),
  '\u0085',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u3000',
  '\ufeff',
];

/** The strings each parser gives that reach haproxy.cfg or a map file. */
const writers: readonly (readonly [string, string, (text: string) => readonly string[]])[] = [
  ['path regex', '/a', (text) => strings(parsePathRegex(text), (r) => [r.source])],
  ['redirect URL', 'https://example.com/a', (text) => strings(parseRedirectUrl(text), (u) => [u])],
  ['URL path', '/a', (text) => strings(parseUrlPath(text), (p) => [p])],
  ['host name', 'api.internal', (text) => strings(parseHostName(text), (h) => [h])],
  ['rewrite target', '/a', (text) => strings(parseRewriteTarget(text), (t) => [t.format])],
  ['range list', '10.0.0.1', (text) => strings(parseRanges(text), (r) => r)],
];

function strings<T>(parsed: Parsed<T>, of: (value: T) => readonly string[]): readonly string[] {
  return isExpected(parsed) ? [] : of(parsed);
}

describe('what no accepted value holds', () => {
  it.each(writers)(
    'a %s accepted with any one character anywhere holds no whitespace, quote, backslash or control character',
    (_what, valid, parse) => {
      for (const c of characters) {
        for (const text of [`${valid}${c}`, `${c}${valid}`, `${valid}${c}b`, `${valid}/${c}`]) {
          for (const written of parse(text)) {
            expect(breakers(written), JSON.stringify(text)).toEqual([]);
          }
        }
      }
    },
  );

  it('holds for generated strings of every printable ASCII character and the spaces', () => {
    const anyText = fc.string({ unit: fc.constantFrom(...characters), maxLength: 24 });
    fc.assert(
      fc.property(
        fc.constantFrom(...writers),
        fc.constantFrom('', '/', 'https://example.com/', '10.0.0.1,'),
        anyText,
        ([, , parse], start, rest) => {
          for (const written of parse(`${start}${rest}`)) {
            expect(breakers(written)).toEqual([]);
          }
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('no accepted path regex holds "#" or "%", and every "%" of an accepted URL is doubled', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...characters), maxLength: 24 }), (rest) => {
        const regex = parsePathRegex(`/${rest}`);
        if (!isExpected(regex)) expect(regex.source).not.toMatch(/[#%]/);
        const url = parseRedirectUrl(`https://example.com/${rest}`);
        if (!isExpected(url)) expect(url.replace(/%%/g, '')).not.toContain('%');
      }),
      { numRuns: 20_000 },
    );
  });

  it('gives a value read with spaces or line breaks around it without them', () => {
    for (const [, valid, parse] of writers) {
      for (const space of [' ', '\t', '\n', '\r\n', '\u00a0', '\u2028']) {
        const written = parse(`${space}${valid}${space}`);
        for (const value of written) expect(value).toBe(value.trim());
      }
    }
  });

  it('gives redirect URLs, ranges and host names that haproxy -c loads as the default template writes them', () => {
    const locations = [
      'https://example.com/new',
      'https://example.com/a%20b?x=%41&y=$z',
      'http://[2001:db8::1]:8080/p;q=(1)*+,!~',
    ].map((text) => accepted(parseRedirectUrl(text)));
    const ranges = ['10.0.0.0/8,192.0.2.7', '2001:DB8::/32,::1', '0.0.0.0/0'].map((text) =>
      accepted(parseRanges(text)),
    );
    const hosts = ['API.internal', 'api.internal:8080'].map((text) =>
      accepted(parseHostName(text)),
    );
    const loaded = haproxyLoads('values', { locations, ranges, hosts });
    expect(loaded.output).not.toMatch(/ALERT/);
    expect(loaded.ok).toBe(true);
  });
});

describe('path regexes JavaScript and PCRE2 read differently', () => {
  it('refuses a POSIX class: PCRE2 reads "[[:alpha:](]" as one class where JavaScript reads a class, a group and "]", so the path leaves its host\'s group and matches every host', () => {
    // JavaScript: [[:alpha:] ( ] ) | ( [[:alpha:] ) ] .*  — two groups, balanced.
    // PCRE2:      [[:alpha:](]  )  |  ( [[:alpha:])] .* — the ")" closes the map key's (?:.
    const hijack = '/x[[:alpha:](])|([[:alpha:])].*';
    expect(outcome(parsePathRegex(hijack))).toBe('refused');
    expect(outcome(parsePathRegex('/[[:alpha:]]'))).toBe('refused');
  });

  it.each(['/[\\d-z]', '/[a-\\w]', '/[\\s-\\S]'])(
    'refuses %j, a range from a class escape, which PCRE2 does not compile (haproxy -c fails for everyone)',
    (text) => {
      expect(haproxyLoads('range-from-escape', { regexes: [text] }).ok).toBe(false);
      expect(outcome(parsePathRegex(text))).toBe('refused');
    },
  );

  it('gives only regexes haproxy -c loads, for generated regexes of path characters and operators', () => {
    const unit = fc.constantFrom(...'/ab-:,.()[]{}|^$?*+\\dwsDWS12'.split(''), '[:alpha:]', '(?:');
    const generated = fc.sample(fc.string({ unit, minLength: 1, maxLength: 10 }), {
      numRuns: 20_000,
      seed: 33,
    });
    const accepted = [...new Set(generated.map((rest) => `/${rest}`))].filter(
      (text) => !isExpected(parsePathRegex(text)),
    );
    expect(accepted.length).toBeGreaterThan(500);
    const loaded = haproxyLoads('generated', { regexes: accepted });
    expect(loaded.output).not.toMatch(/ALERT/);
    expect(loaded.ok).toBe(true);
  });

  it.each([
    ['/a\\\\b', 'an escaped backslash before a letter'],
    ['/a\\\\', 'an escaped backslash at the end'],
  ])('accepts %j (%s): an escape of an operator', (text) => {
    expect(outcome(parsePathRegex(text))).toEqual({ source: text, groups: 0 });
  });
});

describe('parseRanges, against HAProxy', () => {
  it('refuses an IPv6 zone ("fe80::1%eth0"), which HAProxy does not read as an address (haproxy -c fails for everyone)', () => {
    expect(haproxyLoads('zone', { ranges: [['fe80::1%eth0']] }).ok).toBe(false);
    expect(outcome(parseRanges('fe80::1%eth0'))).toBe('refused');
    expect(outcome(parseRanges('fe80::1%eth0/64'))).toBe('refused');
  });
});

describe('path regex quantifiers PCRE2 reads otherwise or does not compile', () => {
  it.each(['/a{70000}', '/a{,5}', '/a{1000}', '/a{x}', '/a{'])('refuses %s', (text) => {
    expect(outcome(parsePathRegex(text))).toBe('refused');
  });

  it.each(['/a{3}', '/a{2,}', '/a{1,999}'])('accepts %s', (text) => {
    expect(outcome(parsePathRegex(text))).not.toBe('refused');
  });
});
