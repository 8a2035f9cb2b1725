import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseServerAddress } from './server-lines.ts';
import { rewriteServerSlots } from './slot-rewrite.ts';
import {
  type FileSetText,
  type ServerChange,
  rewrittenPlan,
  runtimePlan,
  serverCommands,
  slotLineFindings,
} from './runtime-changes.ts';

const base = [
  'global',
  '  default-path config',
  'frontend http',
  '  bind :8080',
  '  use_backend %[var(txn.backend)]',
  'backend team:web:80',
  '  balance roundrobin',
  '  server s1 10.0.0.1:8080',
  '  server s2 127.0.0.1:1 disabled',
  'listen stats',
  '  server s1 [fd00::1]:9000 weight 5',
];

function set(lines: readonly string[], maps = 'sha256:aa'): FileSetText {
  return {
    files: [
      { path: 'haproxy.cfg', digest: `sha256:${lines.join('|').length}` },
      { path: 'maps/exact.map', digest: maps },
    ],
    config: lines.join('\n'),
  };
}

function edited(index: number, line: string): string[] {
  return base.map((text, i) => (i === index ? line : text));
}

describe('runtimePlan', () => {
  it('fills a spare slot: address, port and ready', () => {
    expect(runtimePlan(set(base), set(edited(8, '  server s2 10.0.0.2:8080')))).toEqual({
      runtime: true,
      changes: [
        { backend: 'team:web:80', server: 's2', address: '10.0.0.2', port: 8080, state: 'ready' },
      ],
      lines: ['  server s2 10.0.0.2:8080'],
    });
  });

  it('empties a slot: maint at the placeholder', () => {
    expect(runtimePlan(set(base), set(edited(7, '  server s1 127.0.0.1:1 disabled')))).toEqual({
      runtime: true,
      changes: [
        { backend: 'team:web:80', server: 's1', address: '127.0.0.1', port: 1, state: 'maint' },
      ],
      lines: ['  server s1 127.0.0.1:1 disabled'],
    });
  });

  it('re-addresses an IPv6 server of a listen section and keeps its settings', () => {
    const plan = runtimePlan(set(base), set(edited(10, '  server s1 [fd00::2]:9001 weight 5')));
    expect(plan).toEqual({
      runtime: true,
      changes: [{ backend: 'stats', server: 's1', address: 'fd00::2', port: 9001, state: 'ready' }],
      lines: ['  server s1 [fd00::2]:9001 weight 5'],
    });
  });

  it('has no changes for the same text', () => {
    expect(runtimePlan(set(base), set(base))).toEqual({ runtime: true, changes: [], lines: [] });
  });

  it.each([
    ['another file changed', set(base), set(edited(8, '  server s2 10.0.0.2:8080'), 'sha256:bb')],
    ['a line was added', set(base), set([...base, '  server s3 10.0.0.3:80'])],
    ['a setting changed', set(base), set(edited(7, '  server s1 10.0.0.1:8080 weight 2'))],
    ['a server was renamed', set(base), set(edited(7, '  server s9 10.0.0.1:8080'))],
    ['a host name', set(base), set(edited(7, '  server s1 web.example.com:8080'))],
    ['an environment variable', set(base), set(edited(7, '  server s1 ${ADDR}:8080'))],
    ['an address without a port', set(base), set(edited(7, '  server s1 10.0.0.9'))],
    ['a port out of range', set(base), set(edited(7, '  server s1 10.0.0.9:70000'))],
    ['another directive', set(base), set(edited(6, '  balance leastconn'))],
    [
      'a server in a frontend',
      set(edited(4, '  server s1 10.0.0.1:80')),
      set(edited(4, '  server s1 10.0.0.2:80')),
    ],
    ['disabled not last', set(base), set(edited(8, '  server s2 10.0.0.2:8080 disabled weight 1'))],
  ])('reloads when %s', (_, previous, next) => {
    expect(runtimePlan(previous, next)).toMatchObject({ runtime: false });
  });

  it('says which line needs the reload', () => {
    expect(runtimePlan(set(base), set(edited(6, '  balance leastconn')))).toEqual({
      runtime: false,
      reason: 'haproxy.cfg line 7 changed and is not a server slot',
    });
  });

  it.each([
    ['a quoted', '"backend" other'],
    ['an escaped', String.raw`\x62ackend other`],
    ['a partly quoted', "back'end' other"],
  ])('reads %s section keyword as HAProxy does: the slot is of its backend', (_, header) => {
    // A server line under it belongs to `other`, not to the backend above it.
    const previous = [...base.slice(0, 9), header, '  server s1 10.0.0.5:80'];
    const plan = runtimePlan(
      set(previous),
      set([...previous.slice(0, 10), '  server s1 10.0.0.6:80']),
    );
    expect(plan).toEqual({
      runtime: true,
      changes: [{ backend: 'other', server: 's1', address: '10.0.0.6', port: 80, state: 'ready' }],
      lines: ['  server s1 10.0.0.6:80'],
    });
    const rewrite = rewriteServerSlots(previous.join('\n'), plan.runtime ? plan.changes : []);
    expect(rewrite?.config.split('\n').at(-1)).toBe('  server s1 10.0.0.6:80');
    expect(rewrite?.config.split('\n').slice(0, 10)).toEqual(previous.slice(0, 10));
  });

  it('reloads when a line above a slot starts with a word HAProxy reads from the environment', () => {
    const previous = [...base.slice(0, 9), '"${SECTION}" other', '  server s1 10.0.0.5:80'];
    const next = [...previous.slice(0, 10), '  server s1 10.0.0.6:80'];
    expect(runtimePlan(set(previous), set(next))).toEqual({
      runtime: false,
      reason: 'the first word of line 10 is known only when HAProxy reads it',
    });
    expect(
      rewriteServerSlots(previous.join('\n'), [
        { backend: 'team:web:80', server: 's2', address: '10.0.0.2', port: 8080, state: 'ready' },
      ]),
    ).toBeUndefined();
  });

  it.each([
    ['a conditional block', '.if defined(HAPTIC_SLOT)'],
    ['a quoted conditional block', '".if" defined(HAPTIC_SLOT)'],
  ])('reloads a slot change when the configuration has %s', (_, opening) => {
    // HAProxy reads one of the two s1 lines; a runtime change would go to the one it reads.
    const previous = [
      ...base.slice(0, 9),
      'backend other',
      opening,
      '  server s1 10.0.0.1:80',
      '.else',
      '  server s1 10.0.0.2:80',
      '.endif',
    ];
    const next = previous.map((line, i) => (i === 11 ? '  server s1 10.0.0.9:80' : line));
    expect(runtimePlan(set(previous), set(next))).toEqual({
      runtime: false,
      reason: `line 11 is a conditional block (.if), which runtime changes do not follow`,
    });
  });

  it('refuses a backend name that cannot go into a runtime command', () => {
    const previous = edited(5, 'backend "a b"');
    expect(
      runtimePlan(
        set(previous),
        set(previous.map((line, i) => (i === 7 ? '  server s1 10.0.0.2:8080' : line))),
      ),
    ).toMatchObject({ runtime: false });
  });
});

describe('parseServerAddress', () => {
  it.each([
    ['10.0.0.1:80', { address: '10.0.0.1', port: 80 }],
    ['[fd00::1]:443', { address: 'fd00::1', port: 443 }],
    ['10.0.0.1', undefined],
    ['[10.0.0.1]:80', undefined],
    ['fd00::1:80', undefined],
    ['10.0.0.1:0', undefined],
    ['999.0.0.1:80', undefined],
  ])('%s', (text, expected) => {
    expect(parseServerAddress(text)).toEqual(expected);
  });
});

describe('serverCommands', () => {
  it('gives a filled slot its address before it serves', () => {
    expect(
      serverCommands({ backend: 'b', server: 's1', address: '10.0.0.1', port: 80, state: 'ready' }),
    ).toEqual(['set server b/s1 addr 10.0.0.1 port 80', 'set server b/s1 state ready']);
  });

  it('takes an emptied slot out of service before its address changes', () => {
    expect(
      serverCommands({ backend: 'b', server: 's1', address: '127.0.0.1', port: 1, state: 'maint' }),
    ).toEqual(['set server b/s1 state maint', 'set server b/s1 addr 127.0.0.1 port 1']);
  });
});

describe('rewriteServerSlots', () => {
  it('writes each change into its slot line, and runtimePlan reads the same changes back', () => {
    const changes = [
      { backend: 'team:web:80', server: 's1', address: '127.0.0.1', port: 1, state: 'maint' },
      { backend: 'team:web:80', server: 's2', address: '10.0.0.7', port: 8080, state: 'ready' },
      { backend: 'stats', server: 's1', address: 'fd00::9', port: 9000, state: 'ready' },
    ] as const;
    const rewritten = rewriteServerSlots(base.join('\n'), changes);
    expect(rewritten?.config.split('\n')).toEqual(
      base.map((line, i) =>
        i === 7
          ? '  server s1 127.0.0.1:1 disabled'
          : i === 8
            ? '  server s2 10.0.0.7:8080'
            : i === 10
              ? '  server s1 [fd00::9]:9000 weight 5'
              : line,
      ),
    );
    const plan = runtimePlan(set(base), set(rewritten?.config.split('\n') ?? []));
    expect(plan).toMatchObject({ runtime: true, changes });
  });

  it('reports the lines it changed: its plan is runtimePlan over the whole texts', () => {
    const slots = [
      { backend: 'team:web:80', server: 's1' },
      { backend: 'team:web:80', server: 's2' },
      { backend: 'stats', server: 's1' },
    ];
    const change = fc.record({
      slot: fc.constantFrom(...slots),
      address: fc.oneof(fc.ipV4(), fc.constantFrom('fd00::1', 'fd00::9', '10.0.0.1', '127.0.0.1')),
      port: fc.integer({ min: 1, max: 65535 }),
      state: fc.constantFrom('ready' as const, 'maint' as const),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(change, { selector: (c) => `${c.slot.backend}/${c.slot.server}` }),
        (picked) => {
          const changes: ServerChange[] = picked.map(({ slot, ...rest }) => ({ ...slot, ...rest }));
          const rewrite = rewriteServerSlots(base.join('\n'), changes);
          if (rewrite === undefined) throw new Error('every slot of base can be rewritten');
          expect(rewrite.before).toEqual(base);
          expect(rewrite.after).toEqual(rewrite.config.split('\n'));
          base.forEach((line, i) => {
            if (!rewrite.changed.includes(i)) expect(rewrite.after[i]).toBe(line);
          });
          const next = set(rewrite.after);
          expect(rewrittenPlan(set(base).files, next.files, rewrite)).toEqual(
            runtimePlan(set(base), next),
          );
        },
      ),
    );
  });

  it('refuses an address that does not read back as one', () => {
    const rewrite = rewriteServerSlots(base.join('\n'), [
      {
        backend: 'team:web:80',
        server: 's1',
        address: '10.0.0.1\nbackend x',
        port: 80,
        state: 'ready',
      },
    ]);
    expect(rewrite).toBeUndefined();
  });

  it.each([
    ['a server no backend has', { backend: 'team:web:80', server: 's9' }],
    ['a backend that does not exist', { backend: 'nope', server: 's1' }],
    ['a server of a frontend', { backend: 'http', server: 's1' }],
  ])('gives nothing for %s', (_, target) => {
    expect(
      rewriteServerSlots(base.join('\n'), [
        { ...target, address: '10.0.0.1', port: 80, state: 'ready' },
      ]),
    ).toBeUndefined();
  });
});

/**
 * The rewrite as first written, reading every line (kept here as the reference): a server line
 * is rewritten when the section line above it names a changed proxy.
 */
function everyLineRewrite(config: string, changes: readonly ServerChange[]): string | undefined {
  const lines = config.split('\n');
  const wanted = new Map(changes.map((change) => [`${change.backend}/${change.server}`, change]));
  const sections =
    /^\s*(global|defaults|frontend|backend|listen|userlist|peers|resolvers|mailers|program|http-errors|ring|cache|dynamic-update|crt-store)(\s|$)/;
  let proxy: string | undefined;
  let count = 0;
  for (const [i, text] of lines.entries()) {
    const section = sections.exec(text);
    if (section !== null) {
      const words = text.trim().split(/\s+/);
      proxy = section[1] === 'backend' || section[1] === 'listen' ? words[1] : undefined;
      continue;
    }
    const words = text.trim().split(/\s+/);
    if (words[0] !== 'server' || proxy === undefined) continue;
    const change = wanted.get(`${proxy}/${words[1] ?? ''}`);
    if (change === undefined) continue;
    const endpoint = change.address.includes(':')
      ? `[${change.address}]:${change.port}`
      : `${change.address}:${change.port}`;
    const bare = [...words.slice(0, 2), endpoint, ...words.slice(3)].filter(
      (w) => w !== 'disabled',
    );
    lines[i] =
      `${text.slice(0, text.length - text.trimStart().length)}${bare.join(' ')}${change.state === 'maint' ? ' disabled' : ''}`;
    count += 1;
  }
  return count === changes.length ? lines.join('\n') : undefined;
}

describe('rewriteServerSlots reads only the sections of the changed proxies', () => {
  // Names that are substrings of each other, of server names and of keywords, so the search
  // for a name finds lines that do not open its section.
  const names = ['a', 'ab', 'b:a', 'server', 'backend', 's1'];
  const line = fc.oneof(
    fc
      .tuple(fc.constantFrom('backend', 'listen', 'frontend'), fc.constantFrom(...names))
      .map(([keyword, name]) => `${keyword} ${name}`),
    fc.constantFrom(
      'global',
      'defaults',
      '# backend a',
      '',
      '  balance roundrobin',
      '  # server s1 10.0.0.1:80',
    ),
    fc
      .tuple(fc.constantFrom('s1', 's2', 'a', 'ab'), fc.boolean())
      .map(([server, spare]) => `  server ${server} 127.0.0.1:1${spare ? ' disabled' : ''}`),
  );
  const target = fc.record({
    address: fc.constantFrom('10.0.0.9', 'fd00::9'),
    port: fc.integer({ min: 1, max: 65535 }),
    state: fc.constantFrom('ready' as const, 'maint' as const),
  });
  /** Every backend/server pair the lines hold, as the reference reads them (and one they do not). */
  function slotsOf(lines: readonly string[]): { backend: string; server: string }[] {
    const slots = [{ backend: 'ab', server: 'a' }];
    let proxy: string | undefined;
    for (const text of lines) {
      const words = text.trim().split(/\s+/);
      if (!text.startsWith(' ') && words[0] !== '' && !text.startsWith('#')) {
        proxy = words[0] === 'backend' || words[0] === 'listen' ? words[1] : undefined;
      } else if (words[0] === 'server' && proxy !== undefined) {
        slots.push({ backend: proxy, server: words[1] ?? '' });
      }
    }
    return slots;
  }
  const configAndChanges = fc.array(line, { maxLength: 40 }).chain((lines) =>
    fc.tuple(
      fc.constant(lines),
      fc
        .uniqueArray(fc.constantFrom(...slotsOf(lines)), {
          selector: (slot) => `${slot.backend}/${slot.server}`,
          maxLength: 4,
        })
        .chain((slots) =>
          fc.tuple(
            ...slots.map((slot) => target.map((rest): ServerChange => ({ ...slot, ...rest }))),
          ),
        ),
    ),
  );
  it('rewrites what reading every line rewrites, and reports every line it changed', () => {
    let rewritten = 0;
    fc.assert(
      fc.property(configAndChanges, ([lines, changes]) => {
        const config = lines.join('\n');
        const rewrite = rewriteServerSlots(config, changes);
        expect(rewrite?.config).toEqual(everyLineRewrite(config, changes));
        if (rewrite === undefined) return;
        if (changes.length > 0) rewritten += 1;
        expect(rewrite.before).toEqual(config.split('\n'));
        expect(rewrite.after).toEqual(rewrite.config.split('\n'));
        expect(rewrite.changed).toEqual([...rewrite.changed].sort((x, y) => x - y));
        rewrite.before.forEach((text, i) => {
          if (!rewrite.changed.includes(i)) expect(rewrite.after[i]).toBe(text);
        });
      }),
      { numRuns: 2000 },
    );
    // The generator reaches rewrites, not only refusals.
    expect(rewritten).toBeGreaterThan(50);
  });
});

describe('slotLineFindings', () => {
  it('accepts slot lines and refuses what the lint refuses in a backend', () => {
    expect(
      slotLineFindings(['  server s1 10.0.0.1:80', '  server s2 127.0.0.1:1 disabled']),
    ).toEqual([]);
    const findings = slotLineFindings([
      '  server s1 10.0.0.1:80',
      '  server s2 unix@/var/run/x.sock',
    ]);
    expect(findings).toEqual([
      expect.objectContaining({
        file: 'haproxy.cfg',
        line: 2,
        message: expect.stringMatching(/^changed server line 2: /) as unknown,
      }),
    ]);
  });

  it('reads file arguments of slot lines as the whole configuration anchored them', () => {
    // The applied configuration, linted whole, starts with `default-path config`.
    expect(
      slotLineFindings(['  server s1 10.0.0.9:443 ssl verify required ca-file ca/web.pem']),
    ).toEqual([]);
    expect(
      slotLineFindings(['  server s1 10.0.0.9:443 ssl verify required ca-file /etc/ssl/ca.pem']),
    ).toEqual([expect.objectContaining({ reason: 'FileOutsideDirectory', line: 1 })]);
  });
});
