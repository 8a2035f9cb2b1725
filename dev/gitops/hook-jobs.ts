/**
 * Every Job of the release namespace as it happens (a watch, so a hook Job that Helm deletes
 * right after it succeeds is still seen): name, UID, the phase it ran in, and how it ended.
 */
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { releaseNamespace } from './stable-secrets.ts';

export interface HookJob {
  readonly name: string;
  readonly uid: string;
  /** The lifecycle phase running when the Job appeared. */
  readonly phase: string;
  /** Its `helm.sh/chart` label: `haptic-<version>` (`+` of build metadata written `_`). */
  readonly chart: string;
  /** `Complete`, `Failed`, or `running` while neither condition is set. */
  result: string;
  /** The Job's Failed condition message, when it failed. */
  message: string;
  deleted: boolean;
}

interface JobEvent {
  readonly metadata?: { name?: string; uid?: string; labels?: Record<string, string> };
  readonly status?: { conditions?: readonly { type: string; status: string; message?: string }[] };
}

export interface HookJobWatch {
  readonly jobs: HookJob[];
  /** The phase new Jobs are attributed to. */
  setPhase(phase: string): void;
  stop(): void;
}

export async function watchHookJobs(kubeconfig: string): Promise<HookJobWatch> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const jobs: HookJob[] = [];
  const state = { phase: 'set-up', stopped: false, abort: new AbortController() };
  const onEvent = (type: string, object: JobEvent): void => {
    const name = object.metadata?.name ?? '';
    const uid = object.metadata?.uid ?? '';
    let job = jobs.find((j) => j.uid === uid);
    if (job === undefined) {
      job = {
        name,
        uid,
        phase: state.phase,
        chart: object.metadata?.labels?.['helm.sh/chart'] ?? '',
        result: 'running',
        message: '',
        deleted: false,
      };
      jobs.push(job);
    }
    const ended = (object.status?.conditions ?? []).find(
      (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
    );
    if (ended !== undefined) {
      job.result = ended.type;
      job.message = ended.message ?? '';
    }
    if (type === 'DELETED') job.deleted = true;
  };
  const start = async (): Promise<void> => {
    state.abort = await new Watch(kc).watch(
      `/apis/batch/v1/namespaces/${releaseNamespace}/jobs`,
      {},
      (type, object: JobEvent) => {
        onEvent(type, object);
      },
      () => {
        // The API server ends watches now and then; resume unless stopped.
        if (!state.stopped) void start();
      },
    );
  };
  await start();
  return {
    jobs,
    setPhase(phase) {
      state.phase = phase;
    },
    stop() {
      state.stopped = true;
      state.abort.abort();
    },
  };
}
