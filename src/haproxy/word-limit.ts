/**
 * HAProxy reads at most 64 words on a configuration line (MAX_LINE_ARGS). A line with more is
 * not truncated and read: `parse_line()` flags it, `readcfgfile()` reports "too many words,
 * truncating after word 64", counts a fatal error and skips the whole line (src/cfgparse.c,
 * src/tools.c, HAProxy 2.6 to 3.2). The lint reads every line as HAProxy does, so it must not
 * read such a line either (a skipped `backend` line leaves HAProxy in the section before, a
 * skipped `.if` changes which `.endif` closes what): it refuses it, with its own reason.
 *
 * How HAProxy 2.6 (the image's HAProxy) counts: after the leading spaces, every run of unquoted,
 * unescaped `isspace()` bytes starts one more word, also when nothing follows it but the end of
 * the line or a `#` comment. So 64 words followed by a space or a tab, or by ` # comment`, are
 * 65 for it and refused; `haproxy -c` agrees (word-limit.test.ts). HAProxy 3.2 no longer
 * counts such an empty last word; the lint counts as 2.6 does, which costs a template only its
 * trailing spaces. `splitConfigLine` counts (config-words.ts); this module says what
 * to do about it.
 */
import { type ConfigLine, maxLineWords } from './config-words.ts';
import { type LintFinding, haproxyLintReasons as reasons, lintFinding } from './lint-finding.ts';

/** The finding for a line with more words than HAProxy reads, or undefined. */
export function wordLimitFinding(line: ConfigLine): LintFinding | undefined {
  const count = line.tooManyWords;
  if (count === undefined) return undefined;
  const directive = line.words[0]?.text ?? '';
  const trailing = line.words.length <= maxLineWords;
  const problem = trailing
    ? `has ${line.words.length} words and then spaces before the end of the line or its comment, which HAProxy 2.6 counts as word ${count}: more than the ${maxLineWords} it reads on one line, so it reports "too many words" and skips the whole line`
    : `has ${count} words, more than the ${maxLineWords} HAProxy reads on one line, so it reports "too many words" and skips the whole line`;
  const fix = trailing
    ? 'remove the spaces at the end of the line (and before its comment), or split the line'
    : `split it into lines of at most ${maxLineWords} words (repeat the acl, or the rule, for the rest of the values), or move long lists of values into a file read with -f`;
  return lintFinding(line.number, directive, reasons.TooManyWords, problem, fix);
}
