/**
 * What `haptic certificates rotate-ca` checks before it writes anything: the release is one of
 * external identities (`haproxy.agent.tls.managed: false`) whose Secrets no other provider
 * owns, the overlap lies within the guide's bounds, and the new files make identities the
 * validator accepts — key matching the certificate, the role's extended key usage, the DNS SAN
 * the release's peers require, a chain to the new CA (the validator's identity rules, on the
 * Secret as rotate-ca will write it). Pure: file bytes, names and `now` in; the target or the
 * problems out, each naming the flag and file, why, and what to do.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import type { PeerRole } from './ca-rotation-record.ts';
import { HapticError, errorCodes } from '../errors.ts';
import { type Certificate, sha256Fingerprint } from '../pki/index.ts';
import { decodeIdentitySecret } from '../secrets/identity-secret.ts';
import { decodeSecretCertificates } from '../secrets/key-pair-secret.ts';
import { identitySecretKeys, maxPreviousTrustAheadMs } from '../secrets/layout.ts';
import type { Decoded } from '../secrets/material.ts';
import {
  type ProviderMarkersSource,
  describeProvider,
  secretProvider,
} from '../secrets/provider-markers.ts';
import { namedValue } from '../secrets/secret-fields.ts';
import { checkIdentity } from '../validation/identity-rules.ts';
import type { RotationTarget } from './ca-rotation-plan.ts';

/** A file given on the command line. */
export interface RotationFile {
  /** The flag that named it, e.g. `--agent-cert`. */
  readonly flag: string;
  readonly path: string;
  readonly bytes: Uint8Array;
}

export interface RotationFiles {
  readonly ca: RotationFile;
  readonly agentCert: RotationFile;
  readonly agentKey: RotationFile;
  readonly controllerCert: RotationFile;
  readonly controllerKey: RotationFile;
}

/** What the release's Deployments say, read as the guide's "Identify the installed Secrets". */
export interface ReleasePeers {
  /** `--provider=` of the controller container; undefined without one (legacy). */
  readonly provider: string | undefined;
  /** AGENT_TLS_SERVER_NAME of the controller container: the agent certificate's DNS SAN. */
  readonly agentName: string | undefined;
  /** `--tls-client-name=` of the agent container: the controller certificate's DNS SAN. */
  readonly controllerName: string | undefined;
}

function argValue(args: readonly string[] | undefined, flag: string): string | undefined {
  const found = args?.find((arg) => arg.startsWith(`${flag}=`));
  return found === undefined ? undefined : found.slice(flag.length + 1);
}

/** The peer names and provider, from the controller and haproxy Deployments. */
export function releasePeersOf(controller: V1Deployment, haproxy: V1Deployment): ReleasePeers {
  const container = controller.spec?.template.spec?.containers.find((c) => c.name === 'controller');
  const agent = haproxy.spec?.template.spec?.initContainers?.find((c) => c.name === 'agent');
  return {
    provider: argValue(container?.args, '--provider'),
    agentName: container?.env?.find((e) => e.name === 'AGENT_TLS_SERVER_NAME')?.value,
    controllerName: argValue(agent?.args, '--tls-client-name'),
  };
}

export interface InputSubject {
  readonly files: RotationFiles;
  readonly overlapMs: number;
  /** How the overlap was typed, for messages. */
  readonly overlap: string;
  readonly release: string;
  readonly namespace: string;
  readonly peers: ReleasePeers;
  /** The identity Secrets as found, by role: name and provider markers. */
  readonly secrets: Readonly<Record<PeerRole, ProviderMarkersSource & { readonly name: string }>>;
  readonly now: Date;
}

export type InputCheck =
  | { readonly ok: true; readonly target: RotationTarget }
  | { readonly ok: false; readonly problems: readonly string[] };

function releaseProblems(subject: InputSubject): string[] {
  const { peers, release, namespace } = subject;
  const where = `release ${release} in namespace ${namespace}`;
  if (peers.provider !== 'external')
    return [
      peers.provider === undefined
        ? `The ${where} does not use agent mTLS (no --provider on the controller): there is no CA to rotate.`
        : `The ${where} manages its agent certificates with the ${peers.provider} provider (haproxy.agent.tls.managed: true): rotate-ca is for external Secrets (managed: false). ` +
          (peers.provider === 'default'
            ? 'The default provider rotates its CA itself (the haptic-agent-renewal CronJob).'
            : "Coordinate the rotation through cert-manager so it doesn't restore the old data."),
    ];
  const problems: string[] = [];
  if (peers.agentName === undefined || peers.agentName === '')
    problems.push(
      `The controller container of ${where} has no AGENT_TLS_SERVER_NAME: the agent certificate's required name is unknown; upgrade the release with the chart's values.`,
    );
  if (peers.controllerName === undefined || peers.controllerName === '')
    problems.push(
      `The agent container of ${where} has no --tls-client-name: the controller certificate's required name is unknown; upgrade the release with the chart's values.`,
    );
  for (const [role, secret] of Object.entries(subject.secrets)) {
    const owner = secretProvider(secret);
    if (owner !== 'external')
      problems.push(
        `Secret ${namespace}/${secret.name} (the ${role} identity) is managed by ${describeProvider(owner)}: rotate-ca never writes another provider's Secret. If another certificate manager owns the Secrets, coordinate these stages through that manager so it doesn't restore the old data.`,
      );
  }
  return problems;
}

function overlapProblem({ overlapMs, overlap }: InputSubject): string | undefined {
  if (overlapMs > 0 && overlapMs <= maxPreviousTrustAheadMs) return undefined;
  return `--overlap ${overlap}: the trust overlap must be longer than zero and at most 24 hours (HAPTIC rejects previous-ca-until deadlines more than 24 hours away); existing identities must remain valid throughout it. Use the guide's one hour (--overlap 1h) or another value up to 24h.`;
}

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** How problems name a file's certificates: as the PEM decoder names data given without a name. */
const certificateData = namedValue('The certificate data');

/** The PEM certificates of a file, decoded as the Secret's value they become. */
function fileCertificates(file: RotationFile): Decoded<readonly [Certificate, ...Certificate[]]> {
  return decodeSecretCertificates({ [file.flag]: file.bytes }, file.flag, certificateData);
}

function caProblem(file: RotationFile): string | undefined {
  const decoded = fileCertificates(file);
  if (decoded.state === 'unparsable') {
    return `${file.flag} ${file.path}: not a PEM certificate (${decoded.problem.message}); give the ca.crt the guide's openssl step wrote.`;
  }
  const count = decoded.material.length;
  return count === 1
    ? undefined
    : `${file.flag} ${file.path}: holds ${String(count)} certificates; give exactly the new CA certificate (the guide's ca.crt).`;
}

interface RoleFiles {
  readonly role: PeerRole;
  readonly cert: RotationFile;
  readonly key: RotationFile;
  readonly peerName: string;
}

/** The validator's identity rules on the Secret as rotate-ca will write it for `role`. */
function identityProblem(subject: InputSubject, files: RoleFiles): string | undefined {
  const { ca } = subject.files;
  const name = subject.secrets[files.role].name;
  const label = `${subject.namespace}/${name}`;
  const data = {
    [identitySecretKeys.certificate]: files.cert.bytes,
    [identitySecretKeys.privateKey]: files.key.bytes,
    [identitySecretKeys.trust]: ca.bytes,
  };
  const byKey: Record<string, RotationFile> = {
    [identitySecretKeys.certificate]: files.cert,
    [identitySecretKeys.privateKey]: files.key,
    [identitySecretKeys.trust]: ca,
  };
  const state = decodeIdentitySecret(data, `Secret ${label} (as rotate-ca would write it)`);
  const role = files.role === 'agent' ? 'server' : 'client';
  const found = checkIdentity({
    name,
    label,
    role,
    peerName: files.peerName,
    state,
    now: subject.now,
  });
  if (found === undefined) return undefined;
  const key = found.path.split('/').at(-1) ?? '';
  const file = byKey[key] ?? files.cert;
  const usage = files.role === 'agent' ? 'serverAuth' : 'clientAuth';
  return `${file.flag} ${file.path}: ${found.message} The new ${files.role} certificate needs extendedKeyUsage ${usage}, the DNS SAN ${files.peerName} (the release's peer name), a chain to ${ca.flag} ${ca.path}, and ${files.key.flag} its own key; generate it as the guide's openssl step does.`;
}

/** Checks everything that can be checked before a write; the target when all passed. */
export function checkRotationInputs(subject: InputSubject): InputCheck {
  const released = releaseProblems(subject);
  if (released.length > 0) return { ok: false, problems: released };
  const { files, peers } = subject;
  const overlap = overlapProblem(subject);
  const ca = caProblem(files.ca);
  const early = [overlap, ca].filter((p): p is string => p !== undefined);
  if (ca !== undefined) return { ok: false, problems: early };
  const roles: RoleFiles[] = [
    { role: 'agent', cert: files.agentCert, key: files.agentKey, peerName: peers.agentName ?? '' },
    {
      role: 'controller',
      cert: files.controllerCert,
      key: files.controllerKey,
      peerName: peers.controllerName ?? '',
    },
  ];
  const problems = [...early, ...roles.flatMap((files) => identityProblem(subject, files) ?? [])];
  if (problems.length > 0) return { ok: false, problems };
  const leafPrint = (file: RotationFile): string => {
    const decoded = fileCertificates(file);
    if (decoded.state === 'unparsable') {
      throw new HapticError(errorCodes.PKI_CERTIFICATE_INVALID, decoded.problem.message);
    }
    return sha256Fingerprint(decoded.material[0]);
  };
  return {
    ok: true,
    target: {
      prints: {
        ca: leafPrint(files.ca),
        agent: leafPrint(files.agentCert),
        controller: leafPrint(files.controllerCert),
      },
      ca: base64(files.ca.bytes),
      identities: {
        agent: { crt: base64(files.agentCert.bytes), key: base64(files.agentKey.bytes) },
        controller: {
          crt: base64(files.controllerCert.bytes),
          key: base64(files.controllerKey.bytes),
        },
      },
    },
  };
}
