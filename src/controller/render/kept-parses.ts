/**
 * The render process's parsed templates, by key (a stored HAProxyTemplateConfig's
 * uid/resourceVersion): the stored configuration, and a few recent ones while it changes. A
 * request without a key (a proposed object) is parsed afresh and not kept.
 */
import type { TemplateConfig } from '../../api/template-config.ts';
import type { Liquid } from 'liquidjs';
import { type ParsedTemplates, parseTemplates } from './template-engine.ts';

/** Parsed configurations kept: the stored one, and a few recent ones while it changes. */
const keptParses = 4;

export class KeptParses {
  readonly #engine: Liquid;
  readonly #parses = new Map<string, ParsedTemplates>();

  constructor(engine: Liquid) {
    this.#engine = engine;
  }

  /** The parse kept under `key`, or `config` parsed now (and kept when it parses). */
  parsedFor(
    key: string | undefined,
    config: TemplateConfig,
  ): ParsedTemplates | { readonly field: string; readonly message: string } {
    const parses = this.#parses;
    const kept = key === undefined ? undefined : parses.get(key);
    if (kept !== undefined) return kept;
    const parsed = parseTemplates(this.#engine, config);
    if (key !== undefined && !('message' in parsed)) {
      parses.set(key, parsed);
      for (const old of parses.keys()) {
        if (parses.size <= keptParses) break;
        parses.delete(old);
      }
    }
    return parsed;
  }
}
