import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Paths of the local control plane's key material, all inside one directory. */
export interface ClusterPki {
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPublicKey: string;
}

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Issues `<dir>/<name>.crt` and `.key` (ECDSA P-256, 30 days) from `ca` with openssl. */
export function issue(
  dir: string,
  name: string,
  subject: string,
  extensions: string,
  ca: { cert: string; key: string },
): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const cert = join(dir, `${name}.crt`);
  writeFileSync(ext, extensions);
  openssl(
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      subject,
    ]),
  );
  openssl(
    ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-days', '30'].concat([
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-extfile',
      ext,
      '-out',
      cert,
    ]),
  );
  return { cert, key };
}

/**
 * Generates a throw-away CA, the API server's serving certificate (loopback names), an
 * admin client certificate (group system:masters) and the service-account signing key that
 * makes TokenRequest work. Uses the real openssl; nothing here is product code.
 */
export function generateClusterPki(dir: string): ClusterPki {
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
      .concat([
        '-keyout',
        caKey,
        '-out',
        caCert,
        '-days',
        '30',
        '-subj',
        '/CN=haptic-dev-cluster-ca',
      ])
      .concat(['-addext', 'basicConstraints=critical,CA:TRUE'])
      .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
  );
  const ca = { cert: caCert, key: caKey };
  const serving = issue(
    dir,
    'apiserver',
    '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n',
    ca,
  );
  const admin = issue(
    dir,
    'admin',
    '/O=system:masters/CN=haptic-dev-admin',
    'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n',
    ca,
  );
  const serviceAccountKey = join(dir, 'service-account.key');
  const serviceAccountPublicKey = join(dir, 'service-account.pub');
  openssl([
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    serviceAccountKey,
  ]);
  openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPublicKey]);
  return {
    caCert,
    caKey,
    servingCert: serving.cert,
    servingKey: serving.key,
    adminCert: admin.cert,
    adminKey: admin.key,
    serviceAccountKey,
    serviceAccountPublicKey,
  };
}
