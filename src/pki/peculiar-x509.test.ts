/**
 * @peculiar/x509 is loaded on first use: importing src/pki loads none of the @peculiar
 * packages (a real Node process records every module it resolves), and the stand-ins then
 * behave as the package's classes (new, extends, instanceof, static members, enumerations).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeCertificateFacts } from './certificate-facts.ts';
import { deferredCertificate } from './deferred-certificate.ts';
import { issueCa } from './generate.ts';
import { peculiarX509 } from './peculiar-loader.ts';
import { x509 } from './x509.ts';

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

describe('@peculiar/x509 on first use', () => {
  it('is not loaded by importing src/pki, and is once a certificate is issued', () => {
    expect(peculiarModulesResolved('')).toEqual([]);
    const issued = peculiarModulesResolved(
      `await pki.issueCa({ commonName: 'lazy', validityDays: 1, now: new Date() });`,
    );
    expect(issued.some((url) => url.includes('/@peculiar/x509/'))).toBe(true);
  }, 30_000);

  it('offers stand-ins that behave as the classes and constants of the package', async () => {
    const { certificate } = await issueCa({
      commonName: 'stand-in',
      validityDays: 1,
      now: new Date(),
    });
    const real = peculiarX509();
    expect(certificate).toBeInstanceOf(x509.X509Certificate);
    expect(certificate).toBeInstanceOf(real.X509Certificate);
    const decoded = deferredCertificate(
      decodeCertificateFacts(new Uint8Array(certificate.rawData)),
    );
    expect(decoded).toBeInstanceOf(x509.X509Certificate);
    expect(decoded.subject).toBe('CN=stand-in');
    expect(new x509.X509Certificate(certificate.rawData).subject).toBe('CN=stand-in');
    expect(x509.KeyUsageFlags.keyCertSign).toBe(real.KeyUsageFlags.keyCertSign);
    expect(x509.ExtendedKeyUsage.serverAuth).toBe('1.3.6.1.5.5.7.3.1');
    expect(certificate.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(true);
    expect({} instanceof x509.X509Certificate).toBe(false);
  });
});
