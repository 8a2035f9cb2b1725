/**
 * How fast certificates are read, in process: decoding PEM bundles of certificates never seen
 * before (the strict DER reader), verifying a chain of new certificates (decoding, signature
 * checks) and the same chain again (everything cached), and the time bounds the unit tests
 * held before they moved here (wall-clock bounds are flaky on a loaded machine):
 * - a nearly 1 MiB PEM text of BEGIN lines without END lines is refused in under a second;
 * - a chain of twelve self-issued copies of one CA, all signing each other, is given up on in
 *   under a second;
 * - a cached chain verifies in under 0.1 ms;
 * - the mounted-material watcher takes a `..data` swap in under a second, without polling.
 *
 * Prints one line per measure and, last, one JSON object of them all. Exits 1 when a bound
 * is exceeded.
 *
 *   node bench/certificate-reading.ts [certificates=400] [rounds=5]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { writeAtomicProjection } from '../dev/lib/atomic-writer.ts';
import {
  type CertificateAuthority,
  backdateMs,
  crossSignCa,
  decodeCertificateChain,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
  verifyChain,
} from '../src/pki/index.ts';
import { TlsMaterialWatcher } from '../src/tls/material-watcher.ts';

const certificateCount = Number(process.argv[2] ?? 400);
const rounds = Number(process.argv[3] ?? 5);
const now = new Date();
const hourMs = 3_600_000;

interface Measure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** Upper bound the value must stay under, if any. */
  readonly limit?: number;
}

const measures: Measure[] = [];

function report(measure: Measure): void {
  measures.push(measure);
  const bound = measure.limit === undefined ? '' : ` (limit ${measure.limit} ${measure.unit})`;
  console.log(`${measure.name}: ${measure.value.toFixed(3)} ${measure.unit}${bound}`);
}

/** The timings of `run` in `rounds` rounds, in milliseconds. */
function timings(run: (round: number) => void): number[] {
  return Array.from({ length: rounds }, (_, round) => {
    const started = performance.now();
    run(round);
    return performance.now() - started;
  });
}

/** The best (lowest) timing of `run`: for throughput. */
const best = (run: (round: number) => void): number => Math.min(...timings(run));

/** The slowest timing of `run`, the first (cold) included: for a bound. */
const slowest = (run: (round: number) => void): number => Math.max(...timings(run));

async function authority(commonName: string): Promise<CertificateAuthority> {
  const { certificate, keys } = await issueCa({ commonName, validityDays: 365, now });
  return { certificate, privateKey: keys.privateKey };
}

const ca = await authority('bench-reading-ca');
const leaves = await Promise.all(
  Array.from({ length: certificateCount * rounds }, (_, i) =>
    issueLeaf({
      role: 'agent',
      dnsName: `agent-${i}.example.internal`,
      issuer: ca,
      validityDays: 30,
      now,
    }),
  ),
);
const leafPems = leaves.map((leaf) => encodeCertificateChain([leaf.certificate]));
const caPem = encodeCertificateChain([ca.certificate]);

/** The PEM texts of round `round`: certificates no earlier round decoded. */
const roundOf = (round: number): readonly string[] =>
  leafPems.slice(round * certificateCount, (round + 1) * certificateCount);

report({
  name: 'decode a new certificate',
  value:
    (best((round) => {
      for (const pem of roundOf(round)) decodeCertificateChain(pem);
    }) *
      1000) /
    certificateCount,
  unit: 'µs',
});

// New certificate bytes each round, so nothing is cached: fresh leaves under a fresh CA.
const coldRounds = await Promise.all(
  Array.from({ length: rounds }, async (_, round) => {
    const issuer = await authority(`bench-cold-ca-${round}`);
    const issued = await Promise.all(
      Array.from({ length: certificateCount }, (_, i) =>
        issueLeaf({
          role: 'agent',
          dnsName: `cold-${i}.example.internal`,
          issuer,
          validityDays: 30,
          now,
        }),
      ),
    );
    return {
      anchors: encodeCertificateChain([issuer.certificate]),
      chains: issued.map((leaf) => encodeCertificateChain([leaf.certificate])),
    };
  }),
);
report({
  name: 'decode and verify a new chain',
  value:
    (best((round) => {
      const cold = coldRounds[round];
      if (cold === undefined) return;
      const anchors = decodeCertificateChain(cold.anchors);
      for (const pem of cold.chains) {
        const result = verifyChain({ chain: decodeCertificateChain(pem), anchors, now });
        if (!result.ok) throw new Error(result.message);
      }
    }) *
      1000) /
    certificateCount,
  unit: 'µs',
});

const cachedChain = decodeCertificateChain(leafPems[0] ?? '');
const cachedAnchors = decodeCertificateChain(caPem);
const cachedOptions = {
  chain: cachedChain,
  anchors: cachedAnchors,
  now,
  purpose: 'serverAuth',
} as const;
verifyChain(cachedOptions);
const cachedCalls = 1000;
report({
  name: 'verify a cached chain',
  value:
    slowest(() => {
      for (let call = 0; call < cachedCalls; call += 1) verifyChain(cachedOptions);
    }) / cachedCalls,
  unit: 'ms',
  limit: 0.1,
});

// Nearly 1 MiB of BEGIN lines, no END: a whole-block pattern searched to the end of the text
// from each of them (about 87,000) before it gave up, 19 s.
const hostile = '-----BEGIN A'.repeat(Math.floor((1024 * 1024 - caPem.length) / 12));
report({
  name: 'refuse BEGIN lines without END lines',
  value: slowest(() => {
    for (const text of [hostile, caPem + hostile]) {
      try {
        decodeCertificateChain(text);
      } catch {
        continue;
      }
      throw new Error('The hostile PEM text decoded.');
    }
  }),
  unit: 'ms',
  limit: 1_000,
});

// Self-issued copies of one CA (one subject, one key): each signs the leaf and every other,
// so the paths through them are the orderings of the chain, minutes of CPU if all were tried.
const attacker = await authority('attacker-ca');
const copies = await Promise.all(
  Array.from({ length: 12 }, () =>
    crossSignCa({
      certificate: attacker.certificate,
      issuer: attacker,
      notBefore: new Date(now.getTime() - backdateMs),
      notAfter: new Date(now.getTime() + hourMs),
    }),
  ),
);
const attackerLeaf = await issueLeaf({
  role: 'agent',
  dnsName: 'agent.example.internal',
  issuer: attacker,
  validityDays: 30,
  now,
});
report({
  name: 'give up on CAs that all sign each other',
  value: slowest(() => {
    const result = verifyChain({
      chain: [attackerLeaf.certificate, ...copies],
      anchors: [ca.certificate],
      now,
    });
    if (result.ok) throw new Error('The self-signing CAs verified.');
  }),
  unit: 'ms',
  limit: 1_000,
});

async function identity(): Promise<Record<string, Uint8Array>> {
  const issued = await issueLeaf({
    role: 'agent',
    dnsName: 'haptic-agent',
    issuer: ca,
    validityDays: 10,
    now,
  });
  return {
    'tls.crt': Buffer.from(encodeCertificateChain([issued.certificate])),
    'tls.key': Buffer.from(encodePrivateKey(issued.keys.privateKey)),
    'ca.crt': Buffer.from(caPem),
  };
}

/** Milliseconds from writing a new `..data` revision to the watcher's change callback. */
async function swapLatency(): Promise<number> {
  const root = await mkdtemp(join(tmpdir(), 'haptic-bench-watcher-'));
  try {
    const dir = join(root, 'identity');
    await writeAtomicProjection(dir, await identity());
    const logger = pino({ level: 'silent' });
    const watcher = await TlsMaterialWatcher.start({ dir, logger, pollIntervalMs: 3_600_000 });
    try {
      const files = await identity();
      const changed = new Promise<void>((resolve) => {
        const stop = watcher.onChange(() => {
          stop();
          resolve();
        });
      });
      const swapped = performance.now();
      await writeAtomicProjection(dir, files);
      await changed;
      return performance.now() - swapped;
    } finally {
      watcher.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

let slowestSwap = 0;
for (let round = 0; round < rounds; round += 1) {
  slowestSwap = Math.max(slowestSwap, await swapLatency());
}

report({ name: 'take a ..data swap (slowest)', value: slowestSwap, unit: 'ms', limit: 1_000 });

const exceeded = measures.filter(
  (measure) => measure.limit !== undefined && measure.value >= measure.limit,
);
console.log(
  JSON.stringify(Object.fromEntries(measures.map((measure) => [measure.name, measure.value]))),
);
if (exceeded.length > 0) {
  console.error(`Over the limit: ${exceeded.map((measure) => measure.name).join(', ')}.`);
  process.exitCode = 1;
}
