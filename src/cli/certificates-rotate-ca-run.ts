/**
 * `haptic certificates rotate-ca` as a process: reads the files and the release, checks
 * everything first (ca-rotation-inputs.ts), rehearses the remaining writes against the
 * validator (ca-rotation-rehearsal.ts), then repeats: read both Secrets, decide the next stage
 * (ca-rotation-plan.ts), carry it out — one merge patch with the read resourceVersion as
 * precondition per Secret for a write stage, polling the Pods' recorded TLS state for a wait
 * stage — and print one line per completed stage. Exit 0 when complete, 1 when refused or
 * failed (the message says why and what to do), 2 on usage errors (commander).
 */
import { readFileSync } from 'node:fs';
import { PatchStrategy, type V1Secret, setHeaderOptions } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type RotationFile,
  type RotationFiles,
  checkRotationInputs,
  releasePeersOf,
} from '../certs/ca-rotation-inputs.ts';
import {
  type DataPatch,
  type PlanInput,
  type RotationSecret,
  type RotationStep,
  type RotationTarget,
  peerRoles,
  planRotation,
} from '../certs/ca-rotation-plan.ts';
import {
  type PeerRole,
  type RotationRecord,
  type RotationStage,
  caRotationAnnotation,
  formatRotationRecord,
  rotationStages,
  stageNumber,
} from '../certs/ca-rotation-record.ts';
import { rehearseRotation } from '../certs/ca-rotation-rehearsal.ts';
import { describeError } from '../errors.ts';
import { apiStatus, kubeRequestError } from '../kube/api-errors.ts';
import { identitySecretKeys } from '../secrets/layout.ts';
import { formatUtcTimestamp } from '../secrets/utc-timestamp.ts';
import { secretLabel } from '../validation/secret-data.ts';
import {
  type ReleaseClients,
  type ReleaseTls,
  connectRelease,
  readReleaseTls,
} from './certificates-release-reader.ts';
import { encodedFingerprints, expectedTrustOf } from '../certs/expected-trust.ts';
import { rotationLagging } from './certificates-rotate-ca-progress.ts';
import { shortFingerprint } from '../pki/fingerprint.ts';

export interface RotateCaOptions {
  readonly namespace: string;
  readonly release: string;
  /** Paths of the new files, by flag. */
  readonly files: Readonly<Record<keyof RotationFiles, string>>;
  /** As typed (`1h`) and in ms. */
  readonly overlap: string;
  readonly overlapMs: number;
  /** How long each waiting stage may take, as typed and in ms. */
  readonly timeout: string;
  readonly timeoutMs: number;
  readonly dryRun: boolean;
  readonly kubeconfig?: string | undefined;
}

/** The command refuses or a stage failed: exit 1 with this message. */
class Refusal extends Error {}

/** A Secret changed between the read and the write: read again and decide again. */
class Conflict extends Error {}

const flags: Readonly<Record<keyof RotationFiles, string>> = {
  ca: '--ca',
  agentCert: '--agent-cert',
  agentKey: '--agent-key',
  controllerCert: '--controller-cert',
  controllerKey: '--controller-key',
};

/** Between two reads of the Pods' TLS state while waiting. @default 2 s */
const pollMs = 2_000;
/** Writes that may lose a race before the command gives up. @default 5 */
const maxConflicts = 5;

function readFiles(paths: RotateCaOptions['files']): RotationFiles {
  const read = (key: keyof RotationFiles): RotationFile => {
    const path = paths[key];
    try {
      return { flag: flags[key], path, bytes: readFileSync(path) };
    } catch (error) {
      throw new Refusal(
        `${flags[key]} ${path}: cannot be read (${describeError(error)}); give the file the guide's openssl step wrote.`,
      );
    }
  };
  return {
    ca: read('ca'),
    agentCert: read('agentCert'),
    agentKey: read('agentKey'),
    controllerCert: read('controllerCert'),
    controllerKey: read('controllerKey'),
  };
}

function rotationSecret(secret: V1Secret, namespace: string): RotationSecret {
  return {
    name: secret.metadata?.name ?? '',
    namespace: secret.metadata?.namespace ?? namespace,
    labels: secret.metadata?.labels ?? {},
    annotations: secret.metadata?.annotations ?? {},
    data: secret.data ?? {},
  };
}

function secretsOf(release: ReleaseTls, namespace: string): Record<PeerRole, RotationSecret> {
  return {
    controller: rotationSecret(release.workloads.controller.secret, namespace),
    agent: rotationSecret(release.workloads.agent.secret, namespace),
  };
}

const short = (print: string | undefined): string =>
  print === undefined ? 'none' : shortFingerprint(print);

function stageLabel(stage: RotationStage): string {
  return `stage ${String(stageNumber(stage.name))}/${String(rotationStages.length)} ${stage.name}`;
}

/** What a stage did, for its line. */
function stageDetail(stage: RotationStage, record: RotationRecord, labels: string): string {
  switch (stage.name) {
    case 'trust-distributed':
      return `${labels}: ca.crt ${short(record.ca)}, previous-ca.crt the former ca.crt, previous-ca-until ${formatUtcTimestamp(record.until)}`;
    case 'identities-replaced':
      return `${labels}: tls.crt agent ${short(record.agent)}, controller ${short(record.controller)}, with tls.key`;
    case 'previous-ca-revoked':
      return `${labels}: previous-ca.crt and previous-ca-until removed`;
    default:
      return 'reported in status.tls of every Pod';
  }
}

function stepLine(step: RotationStep, secrets: Record<PeerRole, RotationSecret>): string {
  switch (step.action) {
    case 'refuse':
      return `refused: ${step.message}`;
    case 'complete':
      return `rotation to CA ${short(step.record.ca)} complete`;
    case 'write':
      return `${stageLabel(step.stage)}: ${step.stage.title} (${stageDetail(
        step.stage,
        step.record,
        step.writes.map((w) => secretLabel(secrets[w.role])).join(', '),
      )})`;
    case 'wait':
      return `${stageLabel(step.stage)}: ${step.stage.title}`;
  }
}

function planText(
  steps: readonly RotationStep[],
  secrets: Record<PeerRole, RotationSecret>,
  target: RotationTarget,
): string {
  const lines = peerRoles.map((role) => {
    const data = secrets[role].data;
    return `Secret ${secretLabel(secrets[role])} (${role}): ca.crt ${encodedFingerprints(data[identitySecretKeys.trust]).map(short).join(',')} -> ${short(target.prints.ca)}, tls.crt ${short(encodedFingerprints(data[identitySecretKeys.certificate])[0])} -> ${short(target.prints[role])}`;
  });
  return [
    `plan (dry run, nothing written): new CA SHA-256 ${target.prints.ca}`,
    ...lines,
    ...steps.map((step) => `  ${stepLine(step, secrets)}`),
  ].join('\n');
}

class Rotation {
  readonly #clients: ReleaseClients;
  readonly #options: RotateCaOptions;
  readonly #target: RotationTarget;

  constructor(clients: ReleaseClients, options: RotateCaOptions, target: RotationTarget) {
    this.#clients = clients;
    this.#options = options;
    this.#target = target;
  }

  read(): Promise<ReleaseTls> {
    return readReleaseTls(this.#clients, this.#options);
  }

  plan(release: ReleaseTls, now: Date): PlanInput {
    return {
      target: this.#target,
      secrets: secretsOf(release, this.#options.namespace),
      overlapMs: this.#options.overlapMs,
      now,
    };
  }

  /**
   * One JSON merge patch of one Secret: the record annotation and the data keys of `patch`,
   * with the resourceVersion read as precondition (the API server answers 409 when the Secret
   * changed since). It goes through the API server, so the validating webhook reviews it.
   */
  async write(
    release: ReleaseTls,
    role: PeerRole,
    record: RotationRecord,
    patch: DataPatch = {},
  ): Promise<void> {
    const { name, resourceVersion } = release.workloads[role].secret.metadata ?? {};
    const label = `${this.#options.namespace}/${name ?? ''}`;
    if (name === undefined || resourceVersion === undefined)
      throw new Refusal(`Secret ${label} was read without a name or resourceVersion.`);
    try {
      await this.#clients.core.patchNamespacedSecret(
        {
          name,
          namespace: this.#options.namespace,
          body: {
            metadata: {
              resourceVersion,
              annotations: { [caRotationAnnotation]: formatRotationRecord(record) },
            },
            ...(Object.keys(patch).length === 0 ? {} : { data: patch }),
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (error) {
      if (apiStatus(error) === 409) throw new Conflict();
      throw kubeRequestError(`patch Secret ${label}`, error);
    }
  }

  /** Polls the Pods' recorded state until the stage is reached; the release as last read. */
  async wait(stage: RotationStage, until: Date): Promise<ReleaseTls> {
    const { timeoutMs, timeout } = this.#options;
    const beforeIdentities = stageNumber(stage.name) < stageNumber('identities-replaced');
    const giveUpAt = Math.min(
      Date.now() + timeoutMs,
      beforeIdentities ? until.getTime() : Number.POSITIVE_INFINITY,
    );
    for (;;) {
      const release = await this.read();
      const now = new Date();
      const expected = {
        controller: expectedTrustOf(
          release.workloads.controller.secretName,
          release.workloads.controller.secret.data ?? {},
          now,
        ),
        agent: expectedTrustOf(
          release.workloads.agent.secretName,
          release.workloads.agent.secret.data ?? {},
          now,
        ),
      };
      const lagging = rotationLagging({
        stage: stage.name,
        pods: release.pods,
        expected,
        entries: release.entries,
        now,
      });
      if (lagging.length === 0) return release;
      if (Date.now() >= giveUpAt)
        throw new Refusal(
          `${stageLabel(stage)} (${stage.title}) not reached within ${timeout}: ${lagging.join('; ')}. ` +
            "TLS files haven't reached every replica, or the link is failing; repair projection before continuing (haptic certificates status shows each Pod), then rerun rotate-ca with the same files: it resumes at this stage.",
        );
      await sleep(pollMs);
    }
  }
}

async function rotate(rotation: Rotation): Promise<void> {
  let conflicts = 0;
  for (;;) {
    let release = await rotation.read();
    const input = rotation.plan(release, new Date());
    const step = planRotation(input);
    try {
      switch (step.action) {
        case 'refuse':
          throw new Refusal(step.message);
        case 'complete':
          process.stdout.write(`${stepLine(step, input.secrets)}\n`);
          return;
        case 'write':
          for (const write of step.writes)
            await rotation.write(release, write.role, step.record, write.patch);
          break;
        case 'wait':
          release = await rotation.wait(step.stage, step.record.until);
          for (const role of step.roles) await rotation.write(release, role, step.record);
          break;
      }
    } catch (error) {
      if (!(error instanceof Conflict)) throw error;
      conflicts += 1;
      if (conflicts > maxConflicts)
        throw new Refusal(
          `The identity Secrets changed under rotate-ca ${String(maxConflicts)} times in a row: another writer is updating them; stop it and rerun rotate-ca with the same files.`,
        );
      continue;
    }
    process.stdout.write(`${stepLine(step, input.secrets)}\n`);
  }
}

/** Runs the command; returns the process exit code. */
export async function runRotateCaCommand(options: RotateCaOptions): Promise<number> {
  const { namespace, release } = options;
  try {
    const files = readFiles(options.files);
    const clients = connectRelease(options.kubeconfig, 'rotate-ca');
    const found = await readReleaseTls(clients, options);
    const now = new Date();
    const peers = releasePeersOf(
      found.workloads.controller.deployment,
      found.workloads.agent.deployment,
    );
    const secrets = secretsOf(found, namespace);
    const checked = checkRotationInputs({
      files,
      overlapMs: options.overlapMs,
      overlap: options.overlap,
      release,
      namespace,
      peers,
      secrets,
      now,
    });
    if (!checked.ok) throw new Refusal(checked.problems.join('\n'));
    const rotation = new Rotation(clients, options, checked.target);
    const rehearsal = rehearseRotation(rotation.plan(found, now), {
      namespace,
      provider: 'external',
      serverSecret: found.workloads.agent.secretName,
      clientSecret: found.workloads.controller.secretName,
      serverName: peers.agentName ?? '',
      clientName: peers.controllerName ?? '',
    });
    if (rehearsal.problems.length > 0) throw new Refusal(rehearsal.problems.join('\n'));
    if (options.dryRun) {
      process.stdout.write(`${planText(rehearsal.steps, secrets, checked.target)}\n`);
      return 0;
    }
    await rotate(rotation);
    return 0;
  } catch (error) {
    const message = error instanceof Refusal ? error.message : describeError(error);
    process.stderr.write(
      `${message
        .split('\n')
        .map((line) => `haptic: ${line}`)
        .join('\n')}\n`,
    );
    return 1;
  }
}
