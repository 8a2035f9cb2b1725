import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { lastingItem } from './context-transfer.ts';
import { readTemplateConfig } from '../../api/template-config.ts';
import { createTemplateEngine, parseTemplates, renderTemplates } from './template-engine.ts';
import { TemplateRenderer } from './template-renderer.ts';
import { spareNiceness, startRenderProcess } from './spare-render-process.ts';

// Liquid's own memory count is set out of the way: the hard limits are what stops these. The
// heap is roomy, so the time limit is what a CPU-bound case meets first on any machine; the
// heap limit has a test of its own below.
const limits = {
  parseLimit: 1024 * 1024,
  renderLimitMs: 1_500,
  memoryLimit: 1024 * 1024 * 1024,
  heapMb: 768,
};
const renderer = new TemplateRenderer(limits);
afterAll(() => renderer.close());

function config(template: string, maps: Record<string, string> = {}) {
  const read = readTemplateConfig({
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic' },
    spec: {
      haproxyConfig: { template },
      maps: Object.fromEntries(Object.entries(maps).map(([name, t]) => [name, { template: t }])),
    },
  });
  if ('message' in read) throw new Error(read.message);
  return read;
}

const context = {
  backends: [
    { name: 'app:web:http', servers: [{ endpoint: '10.0.0.1:8080' }] },
    { name: 'app:api:80', servers: [] },
  ],
};
const template =
  '{% for b in backends %}backend {{ b.name }}\n{% for s in b.servers %}  server s {{ s.endpoint }}\n{% endfor %}{% endfor %}';

describe('the render process', () => {
  it('renders byte for byte what the engine renders in-process, and reuses a kept parse', async () => {
    const read = config(template, {
      'hosts.map': '{% for b in backends %}{{ b.name }}\n{% endfor %}',
    });
    const engine = createTemplateEngine(limits);
    const parsed = parseTemplates(engine, read);
    if ('message' in parsed) throw new Error(parsed.message);
    const local = renderTemplates(engine, parsed, context);
    const first = await renderer.render({ key: 'uid/1', config: read, context });
    const again = await renderer.render({ key: 'uid/1', config: read, context });
    expect(first).toEqual(local);
    expect(again).toEqual(local);
    expect(first.ok && first.files.map((file) => file.path)).toEqual([
      'haproxy.cfg',
      'maps/hosts.map',
    ]);
  });

  it.each([
    [
      'a 20,000,000 range (the issue 12 reproduction)',
      '{% for i in (1..20000000) %}{% endfor %}',
      /needed more than the 768 MB|did not finish within 1500 ms|limit exceeded/,
    ],
    [
      'one filter allocating beyond the heap',
      '{{ (1..60000000) | join: "," | size }}',
      /needed more than the 768 MB|did not finish within 1500 ms/,
    ],
    [
      'one filter computing past the time limit, where Liquid never checks its clock',
      '{{ (1..5000000) | join: "," | split: "," | sort | join: "," | size }}',
      /did not finish within 1500 ms \(the render time limit\) and was stopped/,
    ],
    [
      'loops writing output that Liquid does not count',
      '{% for i in (1..3000) %}{% for j in (1..3000) %}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}{% endfor %}',
      /needed more than the 768 MB|did not finish within 1500 ms|limit exceeded/,
    ],
  ])('stops %s within the limit, and renders again afterwards', async (_what, hostile, message) => {
    // How soon it stops, and how late the event loop runs meanwhile: bench/controller-render.ts.
    const outcome = await renderer.render({ key: undefined, config: config(hostile), context: {} });
    expect(outcome).toMatchObject({
      ok: false,
      stage: 'template',
      field: 'spec.haproxyConfig.template',
    });
    expect(outcome.ok ? '' : outcome.message).toMatch(message);
    expect(outcome.ok ? '' : outcome.message).toContain('HAProxyTemplateConfig haptic/haptic');
    const next = await renderer.render({ key: 'uid/1', config: config(template), context });
    expect(next.ok).toBe(true);
  });

  it('stops a process out of heap, where a worker thread would abort the whole controller', async () => {
    // Time is out of the way here: only the heap limit can stop it.
    const patient = new TemplateRenderer({ ...limits, heapMb: 128, renderLimitMs: 60_000 });
    try {
      const outcome = await patient.render({
        key: undefined,
        config: config('{{ (1..8000000) | join: "," | size }}'),
        context,
      });
      expect(outcome.ok ? '' : outcome.message).toMatch(
        /needed more than the 128 MB the render process may use and was stopped/,
      );
      expect((await patient.render({ key: undefined, config: config(template), context })).ok).toBe(
        true,
      );
    } finally {
      await patient.close();
    }
  });

  it('names the file whose template was rendering when it was stopped', async () => {
    const outcome = await renderer.render({
      key: undefined,
      config: config('global\n', {
        'slow.map': '{{ (1..5000000) | join: "," | split: "," | sort | size }}',
      }),
      context: {},
    });
    expect(outcome).toMatchObject({ ok: false, field: 'spec.maps.slow.map.template' });
  });

  it('stops at what is left of a deadline, and starts nothing after it passed', async () => {
    const hostile = config(
      '{{ (1..1500000) | join: "," | split: "," | sort_natural | join: "," | size }}',
    );
    const late = await renderer.render({
      key: undefined,
      config: hostile,
      context: {},
      deadline: performance.now() + 400,
    });
    expect(late.ok ? '' : late.message).toMatch(/ms left before the request's deadline/);
    const none = await renderer.render({
      key: undefined,
      config: config(template),
      context,
      deadline: performance.now() - 1,
    });
    expect(none.ok ? '' : none.message).toMatch(/did not start before the deadline/);
  });

  it('renders lasting items sent by id, and sends their texts again to a restarted process', async () => {
    const lasting = { backends: context.backends.map((backend) => lastingItem({ ...backend })) };
    const read = config(template);
    const parsed = parseTemplates(createTemplateEngine(limits), read);
    if ('message' in parsed) throw new Error(parsed.message);
    const local = renderTemplates(createTemplateEngine(limits), parsed, lasting);
    // The second render names the items by id only; the same files come out.
    expect(await renderer.render({ key: 'uid/ids', config: read, context: lasting })).toEqual(
      local,
    );
    expect(await renderer.render({ key: 'uid/ids', config: read, context: lasting })).toEqual(
      local,
    );
    // A deadline kills the process; the next one knows no ids and is sent every text.
    const killed = await renderer.render({
      key: undefined,
      config: config(
        '{{ (1..1500000) | join: "," | split: "," | sort_natural | join: "," | size }}',
      ),
      context: lasting,
      deadline: performance.now() + 300,
    });
    expect(killed.ok ? '' : killed.message).toMatch(/ms left before the request's deadline/);
    expect(await renderer.render({ key: 'uid/ids', config: read, context: lasting })).toEqual(
      local,
    );
  });

  it("reports Liquid's own memory count with the fix", async () => {
    const counted = new TemplateRenderer({ ...limits, memoryLimit: 1_000_000 });
    try {
      const outcome = await counted.render({
        key: undefined,
        config: config('{% for i in (1..2000000) %}{% endfor %}'),
        context,
      });
      expect(outcome.ok ? '' : outcome.message).toMatch(
        /memory alloc limit exceeded.*Ranges and filter results count against Liquid's memory limit/,
      );
    } finally {
      await counted.close();
    }
  });

  it('reports a template that does not parse as a configuration problem', async () => {
    const outcome = await renderer.render({ key: undefined, config: config('{% if %}'), context });
    expect(outcome).toMatchObject({
      ok: false,
      stage: 'config',
      field: 'spec.haproxyConfig.template',
    });
  });

  it('refuses a file larger than an agent accepts', async () => {
    const outcome = await renderer.render({
      key: undefined,
      config: config(`{% for i in (1..20) %}${'x'.repeat(900 * 1024)}{% endfor %}`),
      context,
    });
    expect(outcome.ok ? '' : outcome.message).toMatch(/more than an agent accepts in one file/);
  });
});

/** The live (not zombie) render processes whose parent is `parent`, from /proc. */
function renderProcessesOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === String(parent) && state !== 'Z' && cmdline.includes('render-worker'))
        found.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return found;
}

async function until<T>(read: () => T, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a render process started in advance', () => {
  it('is the process the next renderer with its limits renders in', async () => {
    // The shared renderer's process (earlier tests) is left out of the counts.
    const before = new Set(renderProcessesOf(process.pid));
    // A time limit out of the way: the nicer process starts within it on a busy machine.
    const roomy = { ...limits, renderLimitMs: 60_000 };
    const stop = startRenderProcess(roomy);
    const [spare] = renderProcessesOf(process.pid).filter((pid) => !before.has(pid));
    expect(spare).toBeDefined();
    // Nicer than this process, so it boots on what the command's own work leaves.
    expect(getPriority(spare)).toBe(Math.min(19, getPriority() + spareNiceness));
    const taker = new TemplateRenderer(roomy);
    try {
      const outcome = await taker.render({ key: undefined, config: config(template), context });
      expect(outcome.ok).toBe(true);
      stop(); // the renderer took it: the stop leaves it alone
      expect(renderProcessesOf(process.pid)).toContain(spare);
      expect(renderProcessesOf(process.pid).filter((pid) => !before.has(pid))).toEqual([spare]);
    } finally {
      await taker.close();
    }
    await until(
      () => renderProcessesOf(process.pid),
      (pids) => !pids.includes(spare ?? 0),
      'the close',
    );
  });

  it('is stopped by its stop when no renderer took it, and a renderer with other limits starts its own', async () => {
    const before = new Set(renderProcessesOf(process.pid));
    const stop = startRenderProcess(limits);
    const [spare] = renderProcessesOf(process.pid).filter((pid) => !before.has(pid));
    // A time limit out of the way: a fresh process starts within it on a busy machine.
    const other = new TemplateRenderer({ ...limits, heapMb: 256, renderLimitMs: 60_000 });
    try {
      const outcome = await other.render({ key: undefined, config: config(template), context });
      expect(outcome.ok ? '' : outcome.message).toBe('');
      expect(renderProcessesOf(process.pid).filter((pid) => !before.has(pid))).toHaveLength(2);
    } finally {
      await other.close();
    }
    stop();
    await until(
      () => renderProcessesOf(process.pid),
      (pids) => !pids.includes(spare ?? 0),
      'the stop',
    );
  });

  it('ends when the process that started it is killed by a signal', async () => {
    const module = fileURLToPath(new URL('./spare-render-process.ts', import.meta.url));
    const starter = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { startRenderProcess } from ${JSON.stringify(module)}; startRenderProcess(); setInterval(() => {}, 1000);`,
      ],
      { stdio: 'ignore' },
    );
    const starterPid = starter.pid ?? 0;
    const exited = new Promise((resolve) => starter.once('exit', resolve));
    const [spare] = await until(
      () => renderProcessesOf(starterPid),
      (pids) => pids.length === 1,
      'the render process of the starter',
    );
    starter.kill('SIGTERM');
    await exited;
    await until(
      () => {
        try {
          return readFileSync(`/proc/${String(spare)}/stat`, 'utf8').includes(') Z ');
        } catch {
          return true;
        }
      },
      (gone) => gone,
      'the orphaned render process to end',
    );
  });
});
