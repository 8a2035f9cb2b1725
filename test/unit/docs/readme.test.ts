/**
 * The README is a user's guide of at most 12 KiB that points into docs/; neither it nor the
 * docs pages may link to a file or heading that is not there, or name a make target the
 * Makefile does not have.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';

const readmeLimit = 12_288;

/** README.md and every page under docs/, relative to the project root. */
const pages = [
  'README.md',
  ...readdirSync(join(projectRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

function read(page: string): string {
  return readFileSync(join(projectRoot, page), 'utf8');
}

/** The page's text outside fenced code blocks. */
function prose(text: string): string {
  return text
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .join('\n');
}

/** Link targets that are neither absolute URLs nor mail addresses. */
function relativeLinks(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes. */
function headingAnchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  return new Set(
    [...prose(text).matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => headingAnchor(match[1] ?? '')),
  );
}

/** Why a link from a page does not resolve, or undefined when it does. */
function brokenLink(page: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? join(projectRoot, page) : join(projectRoot, dirname(page), path);
  const name = relative(projectRoot, file);
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    return `${page}: ${target}: ${name} does not exist`;
  }
  if (anchor === undefined || !isFile || !file.endsWith('.md')) return undefined;
  return anchors(readFileSync(file, 'utf8')).has(anchor)
    ? undefined
    : `${page}: ${target}: ${name} has no heading #${anchor}`;
}

/** Targets the Makefile defines. */
function makeTargets(): Set<string> {
  const makefile = readFileSync(join(projectRoot, 'Makefile'), 'utf8');
  return new Set(
    [...makefile.matchAll(/^([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*):/gm)].flatMap((match) =>
      (match[1] ?? '').split(' '),
    ),
  );
}

/** Targets named by `make …` commands in inline code and code blocks. */
function namedTargets(text: string): string[] {
  const code = [
    ...[...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].flatMap((match) =>
      (match[1] ?? '').split('\n'),
    ),
    ...[...prose(text).matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? ''),
  ];
  return code.flatMap((line) =>
    [...line.matchAll(/(?:^|[;&|]\s*)make((?: [a-z][a-z0-9-]*)+)/g)].flatMap((match) =>
      (match[1] ?? '').trim().split(' '),
    ),
  );
}

describe('the README', () => {
  it(`is at most ${readmeLimit} bytes`, () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(readmeLimit);
  });

  it('links into docs/', () => {
    expect(
      relativeLinks(read('README.md')).filter((target) => target.startsWith('docs/')),
    ).not.toEqual([]);
  });
});

describe.each(pages)('%s', (page) => {
  it('links only to files and headings that exist', () => {
    const broken = relativeLinks(read(page))
      .map((target) => brokenLink(page, target))
      .filter((reason) => reason !== undefined);
    expect(broken).toEqual([]);
  });

  it('names only make targets the Makefile has', () => {
    const targets = makeTargets();
    expect(namedTargets(read(page)).filter((target) => !targets.has(target))).toEqual([]);
  });
});
