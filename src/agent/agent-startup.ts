/**
 * What the agent does with its directories before serving: the bootstrap haproxy.cfg for a
 * new Pod, recovery of an apply a crash interrupted, the last applied state checked against
 * the files on disk, and the local socket path claimed.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import type { AgentOptions } from './agent-options.ts';
import { configFileName } from '../agent-api/api-types.ts';
import { digestOf } from '../agent-api/apply-request.ts';
import { bootstrapConfig } from './bootstrap-config.ts';
import { replaceDurably } from './durable-write.ts';
import type { AppliedFile } from './file-plan.ts';
import type { ConfigFileStore } from './file-store.ts';
import { readProcessList, reloadHAProxy } from './haproxy-reload.ts';
import type { MasterSocket } from './master-socket.ts';
import { type AppliedState, emptyState, readStateFile } from './state-file.ts';

export function startFailed(message: string, cause?: unknown): HapticError {
  return new HapticError(
    errorCodes.AGENT_START_FAILED,
    message,
    cause === undefined ? undefined : { cause },
  );
}

/** Prepares the base directory: bootstrap haproxy.cfg, recovery of an interrupted apply. */
export async function prepareFiles(
  options: AgentOptions,
  store: ConfigFileStore,
  master: MasterSocket,
  logger: Logger,
): Promise<void> {
  try {
    await store.prepare();
    const config = store.live(configFileName);
    if (!existsSync(config)) {
      await replaceDurably(config, bootstrapConfig, 0o644);
      logger.info({ path: config }, 'wrote the bootstrap configuration');
    }
    if (await store.recover()) {
      logger.warn(
        { baseDir: options.baseDir },
        'an apply was interrupted; restored the last-known-good files',
      );
      // HAProxy may have been reloaded with the interrupted apply's files: reload it with
      // the restored ones. If it is not running yet it will start with them.
      if (typeof (await readProcessList(master)) !== 'string') {
        const outcome = await reloadHAProxy(master, {
          expectedBackends: [],
          timeoutMs: options.reloadTimeoutMs,
        });
        logger.info({ ok: outcome.ok }, 'reloaded HAProxy with the last-known-good files');
      }
    }
  } catch (error) {
    throw startFailed(
      `The agent cannot prepare ${options.baseDir}: ${describeError(error)}`,
      error,
    );
  }
}

/** The applied state from the state file, without files that no longer match on disk. */
export async function loadState(
  options: AgentOptions,
  store: ConfigFileStore,
  logger: Logger,
): Promise<AppliedState> {
  const read = await readStateFile(options.stateFile);
  if (!read.found) {
    if (read.problem !== undefined) {
      logger.warn(
        { stateFile: options.stateFile },
        `starting without applied state: ${read.problem}`,
      );
    }
    return emptyState;
  }
  const intact: AppliedFile[] = [];
  for (const file of read.state.files) {
    const content = await readFile(store.live(file.path)).catch(() => undefined);
    if (content !== undefined && digestOf(content) === file.digest) intact.push(file);
    else {
      logger.warn(
        { path: file.path },
        'a file differs from the last applied state; the next apply rewrites it',
      );
    }
  }
  logger.info(
    { generation: read.state.generation, files: intact.length },
    'loaded the last applied state',
  );
  return { ...read.state, files: intact };
}

/** Removes a stale local socket file; refuses when another process still answers on it. */
export async function claimSocketPath(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  if (!existsSync(path)) return;
  const inUse = await new Promise<boolean>((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => {
      resolve(false);
    });
  });
  if (inUse) {
    throw startFailed(
      `Another process answers on ${path}; stop it or choose another --local-socket.`,
    );
  }
  await rm(path, { force: true });
}
