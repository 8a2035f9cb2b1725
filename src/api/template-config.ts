import { isRecord } from '../is-record.ts';
/**
 * HAProxyTemplateConfig (haproxy-haptic.org/v1alpha1): the templates the controller renders,
 * read from an untyped object once, at the edge, with problems that name the exact field.
 *
 *   spec.haproxyConfig.template         → haproxy.cfg
 *   spec.maps.<name>.template           → maps/<name>
 *   spec.files.<name>.template          → files/<name>
 *   spec.certificateLists.<name>.template → ssl/<name>   (crt-list files)
 */

export const templateConfigGroup = 'haproxy-haptic.org';
export const templateConfigVersion = 'v1alpha1';
export const templateConfigKind = 'HAProxyTemplateConfig';
export const templateConfigPlural = 'haproxytemplateconfigs';

export interface TemplateFile {
  /** Path under the agents' base directory. */
  readonly path: string;
  readonly template: string;
  /** The field it came from, for messages. */
  readonly field: string;
}

export interface TemplateConfig {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number;
  /** haproxy.cfg first, then the other files by path. */
  readonly files: readonly TemplateFile[];
}

export interface TemplateConfigProblem {
  readonly field: string;
  readonly message: string;
}

/** A file name segment the agents accept (see the agent's apply-request path rules). */
const fileNamePattern = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/** Longest template. @default 1 MiB */
export const maxTemplateBytes = 1024 * 1024;
/** Most templates in one configuration. */
export const maxTemplates = 200;

const sections = [
  { key: 'maps', dir: 'maps' },
  { key: 'files', dir: 'files' },
  { key: 'certificateLists', dir: 'ssl' },
] as const;

function templateOf(value: unknown, field: string, label: string): string | TemplateConfigProblem {
  const template = isRecord(value) ? value.template : undefined;
  if (typeof template !== 'string') {
    return {
      field: `${field}.template`,
      message: `HAProxyTemplateConfig ${label} has no string ${field}.template; write the template there.`,
    };
  }
  if (Buffer.byteLength(template) > maxTemplateBytes) {
    return {
      field: `${field}.template`,
      message: `HAProxyTemplateConfig ${label} has a ${field}.template over ${maxTemplateBytes} bytes; move data into maps.`,
    };
  }
  return template;
}

/** Reads a HAProxyTemplateConfig; the first problem when it cannot be rendered from. */
export function readTemplateConfig(value: unknown): TemplateConfig | TemplateConfigProblem {
  if (!isRecord(value) || (value.kind !== undefined && value.kind !== templateConfigKind)) {
    return { field: 'kind', message: `The object is not a ${templateConfigKind}.` };
  }
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const label = `${namespace}/${name}`;
  const spec = isRecord(value.spec) ? value.spec : {};
  const main = templateOf(spec.haproxyConfig, 'spec.haproxyConfig', label);
  if (typeof main !== 'string') return main;
  const files: TemplateFile[] = [];
  for (const { key, dir } of sections) {
    const section = spec[key];
    if (section === undefined || section === null) continue;
    if (!isRecord(section)) {
      return {
        field: `spec.${key}`,
        message: `HAProxyTemplateConfig ${label} has spec.${key} that is not a map of names to templates.`,
      };
    }
    for (const fileName of Object.keys(section).sort()) {
      const field = `spec.${key}.${fileName}`;
      if (!fileNamePattern.test(fileName) || (dir === 'ssl' && fileName.endsWith('.pem'))) {
        return {
          field,
          message: `HAProxyTemplateConfig ${label} has ${field}: names start with a letter, digit or "_" and contain only letters, digits, ".", "_" and "-"${dir === 'ssl' ? ' (and certificate lists may not end in .pem, which certificates use)' : ''}; rename it.`,
        };
      }
      const template = templateOf(section[fileName], field, label);
      if (typeof template !== 'string') return template;
      files.push({ path: `${dir}/${fileName}`, template, field });
    }
  }
  if (files.length + 1 > maxTemplates) {
    return {
      field: 'spec',
      message: `HAProxyTemplateConfig ${label} has more than ${maxTemplates} templates.`,
    };
  }
  return {
    namespace,
    name,
    generation: typeof metadata.generation === 'number' ? metadata.generation : 0,
    files: [{ path: 'haproxy.cfg', template: main, field: 'spec.haproxyConfig' }, ...files],
  };
}
