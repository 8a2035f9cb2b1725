import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../dev/lib/tools.ts';

/** One instruction: its keyword in upper case, its text with continuation lines joined. */
export interface DockerfileInstruction {
  readonly keyword: string;
  readonly value: string;
  /** 1-based line where the instruction starts. */
  readonly line: number;
}

/** A build stage: `FROM <from> [AS <name>]` and the instructions after it. */
export interface DockerfileStage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly DockerfileInstruction[];
}

/**
 * Splits a Dockerfile into stages of instructions. Comments and blank lines are dropped, a
 * trailing backslash joins the next line (Docker's default escape character).
 */
export function parseDockerfile(text: string): DockerfileStage[] {
  const instructions: DockerfileInstruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === undefined && (line === '' || line.startsWith('#'))) return;
    const continued = line.endsWith('\\');
    const part = continued ? line.slice(0, -1).trim() : line;
    pending =
      pending === undefined
        ? { text: part, line: index + 1 }
        : { text: `${pending.text} ${part}`, line: pending.line };
    if (continued) return;
    const match = /^(\S+)\s*(.*)$/.exec(pending.text);
    instructions.push({
      keyword: (match?.[1] ?? '').toUpperCase(),
      value: match?.[2] ?? '',
      line: pending.line,
    });
    pending = undefined;
  });
  const stages: {
    from: string;
    name: string | undefined;
    instructions: DockerfileInstruction[];
  }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [from = '', as, name] = instruction.value.split(/\s+/);
      stages.push({
        from,
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        instructions: [],
      });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) {
        throw new Error(`Dockerfile line ${instruction.line}: ${instruction.keyword} before FROM`);
      }
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** What the final stage declares about the image, in OCI image-config terms. */
export interface DeclaredImage {
  readonly user: string | undefined;
  readonly entrypoint: readonly string[];
  readonly env: readonly string[];
  readonly workingDir: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  /** Sources of `COPY --from=<stage>`, in order: one image layer each. */
  readonly copiedLayers: readonly { readonly stage: string; readonly source: string }[];
}

function keyValue(instruction: DockerfileInstruction): [string, string] {
  const match = /^([A-Za-z0-9_.-]+)=(\S*)$/.exec(instruction.value);
  if (match === null) {
    throw new Error(
      `Dockerfile line ${instruction.line}: ${instruction.keyword} ${instruction.value} is not one unquoted KEY=VALUE; write it so.`,
    );
  }
  return [match[1] ?? '', match[2] ?? ''];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function jsonArray(instruction: DockerfileInstruction): string[] {
  const parsed = parseJson(instruction.value);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
    throw new Error(
      `Dockerfile line ${instruction.line}: ${instruction.keyword} must be a JSON array of strings (exec form).`,
    );
  }
  return parsed;
}

/** The configuration the last stage gives the image. */
export function declaredImage(stages: readonly DockerfileStage[]): DeclaredImage {
  const last = stages.at(-1);
  if (last === undefined) throw new Error('Dockerfile has no FROM');
  let user: string | undefined;
  let entrypoint: string[] = [];
  let workingDir: string | undefined;
  const env: string[] = [];
  const labels: Record<string, string> = {};
  const copiedLayers: { stage: string; source: string }[] = [];
  for (const instruction of last.instructions) {
    switch (instruction.keyword) {
      case 'USER':
        user = instruction.value;
        break;
      case 'ENTRYPOINT':
        entrypoint = jsonArray(instruction);
        break;
      case 'WORKDIR':
        workingDir = instruction.value;
        break;
      case 'ENV':
        env.push(keyValue(instruction).join('='));
        break;
      case 'LABEL': {
        const [key, value] = keyValue(instruction);
        labels[key] = value;
        break;
      }
      case 'COPY': {
        const match = /^--from=(\S+)\s+(\S+)\s+\/$/.exec(instruction.value);
        if (match === null) {
          throw new Error(
            `Dockerfile line ${instruction.line}: COPY ${instruction.value} is not COPY --from=<stage> <dir>/ /.`,
          );
        }
        copiedLayers.push({ stage: match[1] ?? '', source: match[2] ?? '' });
        break;
      }
      default:
        throw new Error(
          `Dockerfile line ${instruction.line}: ${instruction.keyword} in the final stage is not compared with image/build.sh; compare it or drop it.`,
        );
    }
  }
  return { user, entrypoint, env, workingDir, labels, copiedLayers };
}

/** The repository's Dockerfile, parsed. */
export function readProjectDockerfile(): DockerfileStage[] {
  return parseDockerfile(readFileSync(join(projectRoot, 'Dockerfile'), 'utf8'));
}
