/**
 * @peculiar/x509 is loaded on first use, to issue: importing src/pki, and decoding and
 * verifying certificates, load none of the @peculiar packages (a real Node process records
 * every module it resolves).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const index = fileURLToPath(new URL('./index.ts', import.meta.url));

/** The @peculiar modules a fresh Node process resolves while running `steps` after importing src/pki. */
function peculiarModulesResolved(steps: string): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({
      resolve(specifier, context, next) {
        const result = next(specifier, context);
        if (result.url.includes('/@peculiar/')) seen.push(result.url);
        return result;
      },
    });
    const pki = await import(${JSON.stringify(index)});
    ${steps}
    console.log(JSON.stringify(seen));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const seen: unknown = JSON.parse(run.stdout);
  if (!Array.isArray(seen)) throw new Error(`unexpected output ${run.stdout}`);
  return seen.map(String);
}

/** A self-signed CA made by openssl, as PEM: no @peculiar code involved. */
function opensslCa(): string {
  const run = spawnSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', '/dev/null', '-subj', '/CN=lazy', '-days', '1'],
      ...['-addext', 'basicConstraints=critical,CA:TRUE'],
    ],
    { encoding: 'utf8' },
  );
  expect(run.status).toBe(0);
  return run.stdout;
}

describe('@peculiar/x509 on first use', () => {
  it('is not loaded by importing src/pki, and is once a certificate is issued', () => {
    expect(peculiarModulesResolved('')).toEqual([]);
    const issued = peculiarModulesResolved(
      `await pki.issueCa({ commonName: 'lazy', validityDays: 1, now: new Date() });`,
    );
    expect(issued.some((url) => url.includes('/@peculiar/x509/'))).toBe(true);
  }, 30_000);

  it('is not loaded by decoding, verifying and encoding certificates', () => {
    const steps = `
      const [ca] = pki.decodeCertificateChain(${JSON.stringify(opensslCa())});
      const verified = pki.verifyChain({ chain: [ca], anchors: [ca], now: new Date() });
      if (!verified.ok) throw new Error(verified.message);
      pki.encodeCertificateChain([ca]);
      pki.certificateFingerprint(ca);
    `;
    expect(peculiarModulesResolved(steps)).toEqual([]);
  }, 30_000);
});
