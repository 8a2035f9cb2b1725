/**
 * The lint of a whole set of configuration files, as controller, agent and `haptic config
 * check` hand them to HAProxy: haproxy.cfg (config-lint.ts) and every crt-list its
 * `bind` lines load (crt-list-lint.ts), since a crt-list line names certificate files
 * HAProxy opens too. Pure.
 */
import { posix } from 'node:path';
import { type LintLines, inspectHaproxyConfig } from './config-lint.ts';
import { inspectCrtList } from './crt-list-lint.ts';
import type { LintFinding } from './lint-finding.ts';

export const configFileName = 'haproxy.cfg';

export interface FileLintFinding extends LintFinding {
  /** The file the finding is in, relative to the configuration's directory. */
  readonly file: string;
}

export interface FilesInspection {
  /** Refused lines of haproxy.cfg, then of each crt-list; empty when HAProxy may load them. */
  readonly findings: readonly FileLintFinding[];
  /** Backends haproxy.cfg declares, for verification after a reload. */
  readonly backends: readonly string[];
}

/**
 * Lints haproxy.cfg and its crt-lists; `text(path)` gives a file's content, or undefined.
 * `lines` keeps readings of haproxy.cfg's lines between runs (lint-lines.ts).
 */
export function inspectConfigFiles(
  text: (path: string) => string | undefined,
  lines?: LintLines,
): FilesInspection {
  const inspection = inspectHaproxyConfig(text(configFileName) ?? '', lines);
  const findings: FileLintFinding[] = inspection.findings.map((finding) => ({
    ...finding,
    file: configFileName,
  }));
  // HAProxy opens `./ssl/x.list`, `ssl//x.list` and `ssl/./x.list` as ssl/x.list: look each
  // crt-list up by that normal form, or a differently spelled name would skip its lint.
  for (const path of new Set(inspection.crtLists.map((name) => posix.normalize(name)))) {
    const content = text(path);
    if (content === undefined) continue; // HAProxy itself reports a crt-list that is missing.
    for (const finding of inspectCrtList(content)) findings.push({ ...finding, file: path });
  }
  return { findings, backends: inspection.backends };
}

/** The findings as one sentence list, each naming its file: `haproxy.cfg: line 3: …`. */
export function describeFindings(findings: readonly FileLintFinding[]): string {
  return findings.map((finding) => `${finding.file}: ${finding.message}`).join(' ');
}
