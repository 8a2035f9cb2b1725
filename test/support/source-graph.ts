/**
 * The house rules of docs/design.md, "Source layout and dependencies", read from the sources
 * themselves: which file imports which (TypeScript's own pre-processor, so type-only imports
 * and re-exports count too), the loops among them, the imports that run from a lower room to a
 * higher one, and the files and functions too long to read at once.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Source files of src/, tests excluded, as paths relative to the project root. */
export function sourceFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  walk('src');
  return found.sort();
}

/** Each file's imports of other project files (relative specifiers), as root-relative paths. */
export function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = info.importedFiles
      .map((ref) => ref.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(root, resolve(root, dirname(file), name)));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Import loops: strongly connected components of more than one file, or a file importing itself. */
export function importLoops(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) {
      loops.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return loops;
}

/**
 * The room a file belongs to: the longest listed prefix of its path. Rooms are listed from the
 * ground floor up; a file may import its own room and the rooms listed before it, never after.
 */
export function roomOf(file: string, rooms: readonly string[]): string | undefined {
  return rooms
    .filter((room) => file === room || file.startsWith(room.endsWith('.ts') ? room : `${room}/`))
    .sort((a, b) => b.length - a.length)[0];
}

export interface UpwardImport {
  readonly from: string;
  readonly to: string;
  readonly fromRoom: string;
  readonly toRoom: string;
}

/** Imports into a room listed after the importer's own, and files in no listed room. */
export function upwardImports(
  graph: ReadonlyMap<string, readonly string[]>,
  rooms: readonly string[],
): { readonly upward: UpwardImport[]; readonly homeless: string[] } {
  const upward: UpwardImport[] = [];
  const homeless: string[] = [];
  for (const [from, targets] of graph) {
    const fromRoom = roomOf(from, rooms);
    if (fromRoom === undefined) {
      homeless.push(from);
      continue;
    }
    for (const to of targets) {
      const toRoom = roomOf(to, rooms);
      if (toRoom === undefined || toRoom === fromRoom) continue;
      if (rooms.indexOf(toRoom) > rooms.indexOf(fromRoom))
        upward.push({ from, to, fromRoom, toRoom });
    }
  }
  return { upward, homeless };
}

export interface LongFunction {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** Functions, methods and arrow functions with bodies longer than `limit` lines. */
export function longFunctions(root: string, file: string, limit: number): LongFunction[] {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;
  const nameOf = (node: ts.Node): string => {
    const named = ts.getNameOfDeclaration(node as ts.Declaration);
    if (named !== undefined) return named.getText(source);
    return ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)';
  };
  const visit = (node: ts.Node): void => {
    const body =
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node)
        ? node.body
        : undefined;
    if (body !== undefined) {
      const lines = lineOf(body.getEnd()) - lineOf(body.getStart(source)) + 1;
      if (lines > limit) {
        found.push({ file, name: nameOf(node), line: lineOf(node.getStart(source)), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Number of lines of a file. */
export function lineCount(root: string, file: string): number {
  const text = readFileSync(join(root, file), 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}
