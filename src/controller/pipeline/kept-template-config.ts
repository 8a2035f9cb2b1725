/**
 * The stored HAProxyTemplateConfig as read (readTemplateConfig), kept while its
 * uid/resourceVersion stays, and the key the render process keeps its parse under. A proposed
 * object (admission) carries the stored object's resourceVersion: it is read afresh and never
 * kept.
 */
import {
  type TemplateConfig,
  type TemplateConfigProblem,
  readTemplateConfig,
} from '../../api/template-config.ts';

/** A configuration read, and the key its parse is kept under (none: parsed afresh). */
export interface KeyedTemplates {
  readonly key: string | undefined;
  readonly config: TemplateConfig;
}

function storedMetadata(
  config: unknown,
):
  { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined } | undefined {
  if (typeof config !== 'object' || config === null || !('metadata' in config)) return undefined;
  const metadata: unknown = config.metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const text = (key: string): string | undefined => {
    const value: unknown = (metadata as Record<string, unknown>)[key];
    return typeof value === 'string' ? value : undefined;
  };
  return { uid: text('uid'), resourceVersion: text('resourceVersion') };
}

export class KeptTemplateConfig {
  #read: { readonly version: string; readonly config: TemplateConfig } | undefined;

  /** The templates of a HAProxyTemplateConfig object, and the key their parse is kept under. */
  read(config: unknown, proposed: boolean): KeyedTemplates | TemplateConfigProblem {
    // Proposed objects (admission) carry the stored object's resourceVersion: never kept.
    const metadata = proposed ? undefined : storedMetadata(config);
    const resourceVersion = metadata?.resourceVersion ?? '';
    const version = `${metadata?.uid ?? ''}/${resourceVersion}`;
    const key = resourceVersion === '' ? undefined : version;
    if (key !== undefined && this.#read?.version === key) return { key, config: this.#read.config };
    const read = readTemplateConfig(config);
    if ('message' in read) return read;
    if (key !== undefined) this.#read = { version: key, config: read };
    return { key, config: read };
  }
}
