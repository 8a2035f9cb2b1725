/**
 * `haptic run` as a process: pino JSON logs on stdout, the controller until SIGTERM or SIGINT,
 * then a graceful stop (the leader releases its Lease). Exit code 0 after a requested stop,
 * 1 when it cannot start.
 */
import { describeError } from '../errors.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import { createLogger } from '../logger.ts';
import { stopOnSignal } from '../stop-on-signal.ts';
import { readPackageVersion } from '../version.ts';
import type { ControllerOptions } from './controller-options.ts';
import { startController } from './controller.ts';

export async function runController(
  options: Omit<ControllerOptions, 'kubeConfig' | 'userAgent'>,
  process_: { readonly logLevel: string; readonly kubeconfig?: string },
): Promise<number> {
  const logger = createLogger({ component: 'controller', level: process_.logLevel }).child({
    identity: options.identity,
  });
  const version = readPackageVersion();
  logger.info(
    { version, namespace: options.namespace, ingressClass: options.ingressClass },
    'controller starting',
  );
  let controller;
  try {
    controller = await startController(
      {
        ...options,
        kubeConfig: loadKubeConfig(process_.kubeconfig),
        userAgent: `haptic/${version} (run)`,
      },
      logger,
    );
  } catch (error) {
    logger.fatal({ err: describeError(error) }, 'controller cannot start');
    process.stderr.write(`haptic run: ${describeError(error)}\n`);
    return 1;
  }
  logger.info(
    {
      health: controller.healthPort,
      metrics: controller.metricsPort,
      webhook: controller.webhookPort,
    },
    'controller running',
  );
  const running = controller;
  await stopOnSignal(logger, 'controller', () => running.close());
  return 0;
}
