/**
 * Whether a template's output is a function of named inputs alone, read from its text once:
 * it names no variable it computes when rendering (`[name]`, which Liquid's static analysis
 * cannot follow), assigns nothing, and uses only tags and filters that read or write no state
 * of the render. A loop body that passes is reused for an item it rendered before
 * (template-fragments.ts); a whole file that passes is kept while its inputs' values stay
 * (kept-files.ts).
 */
import { ForTag, Output, Tag, type Template, Value, analyzeSync } from 'liquidjs';

/**
 * A `[` that starts a variable's name (`{{ [name] }}`, `{% for x in [name] %}`) rather than
 * indexing one (`list[0]`, `map[key]`): the name is computed when rendering, so no static
 * analysis knows it. Matched in the text of Liquid's tags and outputs; a match inside a
 * string literal only makes the answer more cautious.
 */
const computedRoot = /(?:^|[^\w\])])\[/;
const liquidMarkup = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/**
 * Whether a template names a variable it computes when rendering (`[name]`): what it reads
 * then depends on values, so neither its names nor its output follow from its text.
 */
export function computesNames(source: string): boolean {
  const markup = source.match(liquidMarkup) ?? [];
  return markup.some((text) => computedRoot.test(text.slice(2, -2)));
}

/** Tags a reusable body may contain: none of them reads or writes state of the render. */
const pureTags = new Set(['if', 'unless', 'case', 'for', 'comment', 'raw', 'echo', '#']);

/** Filters whose result is a function of their input and arguments. */
const pureFilters = new Set([
  ...['escape', 'xml_escape', 'escape_once', 'newline_to_br', 'strip_html'],
  ...['abs', 'at_least', 'at_most', 'ceil', 'divided_by', 'floor', 'minus', 'plus'],
  ...['modulo', 'times', 'round', 'url_decode', 'url_encode', 'cgi_escape', 'uri_escape'],
  ...['slugify', 'join', 'last', 'first', 'reverse', 'sort', 'sort_natural', 'size', 'map'],
  ...['sum', 'compact', 'concat', 'slice', 'where', 'reject', 'has', 'find_index', 'find'],
  ...['uniq', 'group_by', 'append', 'prepend', 'lstrip', 'downcase', 'upcase', 'remove'],
  ...['remove_first', 'remove_last', 'rstrip', 'split', 'strip', 'strip_newlines', 'squish'],
  ...['capitalize', 'replace', 'replace_first', 'replace_last', 'truncate', 'truncatewords'],
  ...['normalize_whitespace', 'number_of_words', 'array_to_sentence_string'],
  ...['base64_encode', 'base64_decode', 'sha256', 'hmac_sha256', 'default', 'raw'],
  ...['jsonify', 'to_integer', 'json', 'inspect'],
]);

function filtersArePure(value: Value, escapeFilter: string): boolean {
  return value.filters.every(
    (filter) => pureFilters.has(filter.name) || filter.name === escapeFilter,
  );
}

/** Whether `templates` (and everything nested) uses only pure tags and filters. */
function onlyPureParts(templates: readonly Template[], escapeFilter: string): boolean {
  for (const template of templates) {
    if (template instanceof Output) {
      if (!filtersArePure(template.value, escapeFilter)) return false;
      continue;
    }
    if (!(template instanceof Tag)) continue; // literal text
    if (!pureTags.has(template.name)) return false;
    if (template instanceof ForTag && 'offset' in template.hash.hash) return false;
    const node: Template = template;
    for (const argument of node.arguments?.() ?? []) {
      if (argument instanceof Value && !filtersArePure(argument, escapeFilter)) return false;
    }
    const children = node.children?.(false, true).next();
    if (children?.done === true && !onlyPureParts(children.value, escapeFilter)) return false;
    if (children?.done === false) return false;
  }
  return true;
}

/** Whether the file `templates` come from computes a name anywhere (computesNames). */
function inFileComputingNames(templates: readonly Template[]): boolean {
  const [first] = templates;
  return first !== undefined && computesNames(first.token.input);
}

/** Whether a loop body's output depends on the loop variable alone. */
export function bodyIsPure(
  templates: readonly Template[],
  variable: string,
  escapeFilter: string,
): boolean {
  if (inFileComputingNames(templates) || !onlyPureParts(templates, escapeFilter)) return false;
  const analysis = analyzeSync([...templates], { partials: false });
  return (
    Object.keys(analysis.locals).length === 0 &&
    Object.keys(analysis.globals).every((name) => name === variable)
  );
}

/**
 * The names a whole template reads from its context when its output is a function of their
 * values alone (the same parts as a reusable loop body, nothing assigned, no name computed
 * when rendering); undefined when it may depend on anything else. Loop bodies already wrapped
 * for reuse (KeptBody) were judged pure when they were wrapped.
 */
export function templateInputs(
  templates: readonly Template[],
  escapeFilter: string,
): readonly string[] | undefined {
  if (inFileComputingNames(templates) || !onlyPureParts(templates, escapeFilter)) return undefined;
  const analysis = analyzeSync([...templates], { partials: false });
  return Object.keys(analysis.locals).length === 0 ? Object.keys(analysis.globals) : undefined;
}
