/**
 * The webhook assembled: routes for the release's identity and issuer Secrets and its
 * pre-rollout values Secret, dispatch with a deadline, the express app, the HTTPS listener.
 * `haptic webhook` serves it alone; `haptic run` serves the same thing on :9443.
 */
import {
  type AgentIdentityConfig,
  type EmbeddedChart,
  type ReleaseIo,
  preRolloutNames,
} from '../validation/index.ts';
import { SecretDecoder } from '../secrets/secret-decoder.ts';
import type { AdmissionRequest, AdmissionResponse } from './admission-review.ts';
import { type ReviewCaller, createWebhookApp } from './app.ts';
import { type ReviewEvent, reviewAdmission } from './dispatch.ts';
import { type KindRoutes, type NameRoutes, firstRoute, routeByKind } from './object-validators.ts';
import { type ListenOptions, type WebhookServer, listenHttps } from './server.ts';
import { identitySecretRoutes, secretValidator, valuesSecretValidator } from './validators.ts';

/**
 * Time a review may take. Below every registration's timeoutSeconds (5 s and 10 s in the chart),
 * so the API server receives our answer, not its own timeout; shorter when the API server says it
 * waits less (`?timeout=`, review-context.ts).
 * @default 4000
 */
export const defaultDeadlineMs = 4000;

export interface WebhookOptions {
  /** The release's agent identities; absent: identity and issuer Secrets are not validated. */
  readonly identities?: AgentIdentityConfig;
  /** The release whose pre-rollout values Secret gets the full preflight validation. */
  readonly release?: {
    readonly name: string;
    readonly namespace: string;
    readonly chart: EmbeddedChart;
    readonly io: ReleaseIo;
  };
  /** Validators of other kinds (Ingress, HAProxyTemplateConfig), as `haptic run` serves them. */
  readonly kinds?: KindRoutes;
  /** @default {@link defaultDeadlineMs} */
  readonly deadlineMs?: number;
  /** @default 8 MiB */
  readonly maxBodyBytes?: number;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  readonly onReview?: (event: ReviewEvent) => void;
  readonly onHttpError?: (status: number, message: string) => void;
}

/** The release's Secrets: its identity and issuer Secrets, and its pre-rollout values Secret. */
function secretRoutes(options: WebhookOptions): NameRoutes {
  const clock = options.clock ?? (() => new Date());
  const identities =
    options.identities === undefined
      ? undefined
      : identitySecretRoutes(options.identities, new SecretDecoder(), clock);
  const release = options.release;
  const valuesSecret =
    release === undefined ? undefined : preRolloutNames(release.name).valuesSecret;
  const valuesValidator =
    release === undefined
      ? undefined
      : secretValidator(
          valuesSecretValidator({
            release: release.name,
            chart: release.chart,
            io: release.io,
            clock,
          }),
        );
  return (namespace, name) =>
    identities?.(namespace, name) ??
    (namespace === release?.namespace && name === valuesSecret ? valuesValidator : undefined);
}

/** Reviews AdmissionReview requests (dispatch and validators, no HTTP). */
export function createReviewer(
  options: WebhookOptions,
): (request: AdmissionRequest, caller?: ReviewCaller) => Promise<AdmissionResponse> {
  const secrets = routeByKind({ '/Secret': secretRoutes(options) });
  const routes = options.kinds === undefined ? secrets : firstRoute(secrets, options.kinds);
  const deadlineMs = options.deadlineMs ?? defaultDeadlineMs;
  return (request, caller) =>
    reviewAdmission(
      request,
      {
        routes,
        deadlineMs,
        ...(options.onReview === undefined ? {} : { onReview: options.onReview }),
      },
      caller,
    );
}

/** Starts the HTTPS webhook (`POST /validate`). */
export function startWebhook(
  options: WebhookOptions,
  listen: ListenOptions,
): Promise<WebhookServer> {
  const app = createWebhookApp({
    review: createReviewer(options),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
    ...(options.onHttpError === undefined ? {} : { onHttpError: options.onHttpError }),
  });
  return listenHttps(app, listen);
}
