/**
 * What the model budgets bound (src/controller/routing/model-budgets.ts): the memory `haproxy -c`
 * takes for a configuration of n server slots laid out as the default template writes them
 * (backends of 128 slots, a quarter of them spare and disabled), and for n certificate files
 * of one ECDSA P-256 certificate and key each. Peak address space (VmPeak, what the sandbox's
 * RLIMIT_AS limits) and peak resident memory (VmHWM) are sampled from /proc while the check
 * runs. The last line is one JSON object: per size, MiB and seconds, and MiB per 1,000 slots
 * or per MiB of certificates; and `defaults`: the default total budgets of both at once (the
 * largest configuration the defaults let through), against the sandbox's 512 MiB of address space.
 *
 *   node bench/budgets.ts [slots=8192,49152] [certificates=1000,4000]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { tlsData } from './controller-fixture.ts';
import { defaultModelBudgets } from '../src/controller/routing/model-budgets.ts';

const slotSizes = (process.argv[2] ?? '8192,49152').split(',').map(Number);
const certificateCounts = (process.argv[3] ?? '1000,4000').split(',').map(Number);
const mebibyte = 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), 'bench-budgets-'));

const head = [
  'global',
  '  default-path config',
  'defaults',
  '  mode http',
  '  timeout connect 5s',
  '  timeout client 60s',
  '  timeout server 60s',
  '  default-server init-addr libc,none',
  'frontend http',
  '  bind 127.0.0.1:18080',
];

/**
 * A configuration of `slots` server lines in backends of 128, three in four holding an
 * endpoint, with `crtList` bound when given.
 */
function slotConfig(slots: number, crtList?: string): string {
  const lines = [
    ...head,
    ...(crtList === undefined ? [] : [`  bind 127.0.0.1:18443 ssl crt-list ${crtList}`]),
    '  default_backend b0',
  ];
  if (slots === 0) lines.push('backend b0');
  for (let slot = 0; slot < slots; slot += 1) {
    if (slot % 128 === 0) lines.push(`backend b${String(slot / 128)}`, '  balance roundrobin');
    const n = slot % 128;
    lines.push(
      n % 4 === 3
        ? `  server s${String(n + 1)} 127.0.0.1:1 disabled`
        : `  server s${String(n + 1)} 10.${String((slot >> 16) & 255)}.${String((slot >> 8) & 255)}.${String(slot & 255)}:8080`,
    );
  }
  return `${lines.join('\n')}\n`;
}

interface Peak {
  readonly peakMiB: number;
  readonly residentMiB: number;
  readonly seconds: number;
}

/** `haproxy -c` of `file` in `dir`, its peaks sampled every 20 ms. */
async function check(dir: string, file: string): Promise<Peak> {
  const started = performance.now();
  const child = execa('haproxy', ['-c', '-q', '-f', file], { cwd: dir, reject: false });
  let peak = 0;
  let resident = 0;
  const sample = (): void => {
    try {
      const status = readFileSync(`/proc/${String(child.pid)}/status`, 'utf8');
      peak = Math.max(peak, Number(/VmPeak:\s+(\d+)/.exec(status)?.[1] ?? 0));
      resident = Math.max(resident, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    } catch {
      // Exited between samples.
    }
  };
  const state = { running: true };
  const done = child.then((result) => {
    state.running = false;
    return result;
  });
  while (state.running) {
    sample();
    await sleep(20);
  }
  const result = await done;
  if (result.exitCode !== 0) throw new Error(`haproxy -c failed: ${result.stderr}`);
  return {
    peakMiB: Math.round(peak / 1024),
    residentMiB: Math.round(resident / 1024),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

/** A directory with `slots` server slots and `count` certificate files. */
function configDir(name: string, slots: number, count: number): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'ssl'), { recursive: true });
  const list: string[] = [];
  for (let i = 0; i < count; i += 1) {
    writeFileSync(join(dir, 'ssl', `c${String(i)}.pem`), pemText);
    list.push(`ssl/c${String(i)}.pem h${String(i)}.example.com`);
  }
  writeFileSync(join(dir, 'ssl', 'certificates.list'), `${list.join('\n')}\n`);
  writeFileSync(
    join(dir, 'haproxy.cfg'),
    slotConfig(slots, count === 0 ? undefined : 'ssl/certificates.list'),
  );
  return dir;
}

const pem = await tlsData('bench.example.com');
const pemText =
  Buffer.from(pem['tls.crt'] ?? '', 'base64').toString() +
  Buffer.from(pem['tls.key'] ?? '', 'base64').toString();
const baseline = await check(configDir('empty', 0, 0), 'haproxy.cfg');

const slots: Record<string, Peak & { readonly miBPerThousand: number }> = {};
for (const size of slotSizes) {
  const peak = await check(configDir(`slots-${String(size)}`, size, 0), 'haproxy.cfg');
  slots[String(size)] = {
    ...peak,
    miBPerThousand:
      Math.round(((peak.residentMiB - baseline.residentMiB) / size) * 1000 * 100) / 100,
  };
  process.stderr.write(`${String(size)} slots: ${JSON.stringify(slots[String(size)])}\n`);
}

const certificates: Record<string, Peak & { readonly miBPerCertificateMiB: number }> = {};
for (const count of certificateCounts) {
  const peak = await check(configDir(`certificates-${String(count)}`, 0, count), 'haproxy.cfg');
  const bytes = (count * Buffer.byteLength(pemText)) / mebibyte;
  certificates[String(count)] = {
    ...peak,
    miBPerCertificateMiB: Math.round(((peak.residentMiB - baseline.residentMiB) / bytes) * 10) / 10,
  };
  process.stderr.write(
    `${String(count)} certificates: ${JSON.stringify(certificates[String(count)])}\n`,
  );
}

const defaultCount = Math.floor(defaultModelBudgets.certificateBytes / Buffer.byteLength(pemText));
const defaults = {
  slots: defaultModelBudgets.serverSlots,
  certificates: defaultCount,
  ...(await check(
    configDir('defaults', defaultModelBudgets.serverSlots, defaultCount),
    'haproxy.cfg',
  )),
};
process.stderr.write(`defaults: ${JSON.stringify(defaults)}\n`);
rmSync(work, { recursive: true, force: true });

const version = (await execa('haproxy', ['-v'])).stdout.split('\n')[0] ?? '';
console.log(
  JSON.stringify({
    haproxy: version,
    budgets: defaultModelBudgets,
    certificateBytes: Buffer.byteLength(pemText),
    baseline,
    slots,
    certificates,
    defaults,
  }),
);
