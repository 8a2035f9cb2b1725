/**
 * Readings of configuration lines kept between lint runs (inspectHaproxyConfig's `lines`):
 * the lint of a line is a function of its text and of the walk's state before it (the
 * section it is in, the depth of `.if` blocks, whether `default-path config` came first),
 * so a line read before in the same state is not tokenized or checked again. A render with
 * one Ingress changed lints the few lines that changed. Readings used in the last two
 * inspections are kept; a line not seen in them is read afresh.
 */
import type { LineReading, LintLines, WalkState } from './config-lint.ts';

interface Kept {
  readonly reading: LineReading;
  /** The last inspection that used it. */
  used: number;
}

const stateKeys = new WeakMap<Readonly<WalkState>, string>();

/** The state as a key; readings share their `after` states, so most keys are looked up. */
function stateKey(state: Readonly<WalkState>): string {
  let key = stateKeys.get(state);
  if (key === undefined) {
    key = `${state.section ?? ''}\0${state.depth}\0${state.pathsAnchored ? 1 : 0}`;
    stateKeys.set(state, key);
  }
  return key;
}

export class LintLineCache implements LintLines {
  readonly #readings = new Map<string, Map<string, Kept>>();
  #inspection = 0;
  /** Readings used in this inspection. */
  #used = 0;

  get(state: Readonly<WalkState>, text: string): LineReading | undefined {
    const kept = this.#readings.get(stateKey(state))?.get(text);
    if (kept === undefined) return undefined;
    if (kept.used !== this.#inspection) this.#used += 1;
    kept.used = this.#inspection;
    return kept.reading;
  }

  set(state: Readonly<WalkState>, text: string, reading: LineReading): void {
    const key = stateKey(state);
    let readings = this.#readings.get(key);
    if (readings === undefined) {
      readings = new Map();
      this.#readings.set(key, readings);
    }
    if (readings.get(text)?.used === this.#inspection) return;
    readings.set(text, { reading, used: this.#inspection });
    this.#used += 1;
  }

  next(): void {
    let size = 0;
    for (const readings of this.#readings.values()) size += readings.size;
    // Readings not used in this inspection or the one before go once they outnumber those used.
    if (size > 2 * this.#used) {
      for (const readings of this.#readings.values()) {
        for (const [text, kept] of readings) {
          if (kept.used < this.#inspection - 1) readings.delete(text);
        }
      }
    }
    this.#inspection += 1;
    this.#used = 0;
  }
}
