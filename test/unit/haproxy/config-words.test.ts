import { describe, expect, it } from 'vitest';
import { splitConfig, splitConfigLine } from '../../../src/haproxy/config-words.ts';

const texts = (line: string): string[] => splitConfigLine(line).words.map((word) => word.text);

describe('splitting configuration lines as HAProxy 2.6 to 3.2 does', () => {
  it.each([
    ['plain words', 'bind :8080 ssl', ['bind', ':8080', 'ssl']],
    ['a tab separates words', 'mode\thttp', ['mode', 'http']],
    ['a vertical tab separates words', 'lua-load\vx.lua', ['lua-load', 'x.lua']],
    ['a form feed separates words', 'lua-load\fx.lua', ['lua-load', 'x.lua']],
    [
      'a vertical tab before the keyword is leading space',
      '\vlua-load x.lua',
      ['lua-load', 'x.lua'],
    ],
    ['a form feed before the keyword is leading space', '\f\flua-load x', ['lua-load', 'x']],
    ['a CR before the keyword is leading space', '\rlua-load x', ['lua-load', 'x']],
    [
      'a CR right after a word ends the line',
      'set-header x y\r lua-load x',
      ['set-header', 'x', 'y'],
    ],
    ['a CR inside a run of spaces is part of it', 'a \r lua-load', ['a', 'lua-load']],
    ['a comment ends the line', 'mode http # comment', ['mode', 'http']],
    ['a # right after a word ends it too', 'lua-load#x', ['lua-load']],
    ['double quotes join words', 'string "a b"', ['string', 'a b']],
    ['a vertical tab inside double quotes is text', '"a\vb"', ['a\vb']],
    ['single quotes are literal', "string 'a\\x41 $HOME'", ['string', 'a\\x41 $HOME']],
    ['a backslash escapes a space', 'a\\ b c', ['a b', 'c']],
    ['\\xHH is a byte', 'lua\\x2dload', ['lua-load']],
    ['\\t, \\n and \\r are control bytes', 'a\\tb\\nc\\rd', ['a\tb\nc\rd']],
    ['\\# is a #', 'a\\#b', ['a#b']],
    ['\\$ outside double quotes stays a backslash', 'a\\$b', ['a\\$b']],
    ['\\$ inside double quotes is a $', '"a\\$b"', ['a$b']],
    ['a backslash before another byte stays', 'a\\qb', ['a\\qb']],
    ['a backslash before a tab stays, and the tab separates', 'a\\\tb', ['a\\', 'b']],
    ['quotes inside a word', 'lua-"lo"ad x', ['lua-load', 'x']],
    ['a quoted # is text', 'x "#not a comment"', ['x', '#not a comment']],
    ['an empty quoted word is a word', 'a "" b', ['a', '', 'b']],
    ['$ outside double quotes is text', 'x $HOME', ['x', '$HOME']],
    ['bytes above 0x7f are text', 'lua\u00a0load', ['lua\u00a0load']],
  ])('%s', (_name, line, words) => {
    expect(texts(line)).toEqual(words);
  });

  it('reads environment variables inside double quotes as references, their text empty', () => {
    const [word] = splitConfigLine('"${HAPTIC_LISTEN_ADDRESS}:8080"').words;
    expect(word?.text).toBe(':8080');
    expect(word?.references).toEqual([
      {
        name: 'HAPTIC_LISTEN_ADDRESS',
        expandsWords: false,
        hasDefault: false,
        followedByText: true,
      },
    ]);
  });

  it.each([
    ['$NAME', '"$HOME"', { name: 'HOME', followedByText: false }],
    ['${NAME[*]}', '"${ARGS[*]}x"', { name: 'ARGS', expandsWords: true }],
    ['${NAME-default}', '"${X-a b}"', { name: 'X', hasDefault: true }],
    ['.LINE', '"$.LINE"', { name: '.LINE' }],
    ['a variable followed by another', '"${A}${B}:1"', { name: 'A', followedByText: false }],
  ])('describes %s', (_name, line, reference) => {
    expect(splitConfigLine(line).words[0]?.references[0]).toMatchObject(reference);
  });

  it('reads the default value as the unset text, quotes and spaces included', () => {
    expect(texts('"${X-a" b "}c"')).toEqual(['a" b "c']);
  });

  it.each([
    ['an unmatched double quote', 'a "b', 'unmatched quote'],
    ['an unmatched single quote', "a 'b", 'unmatched quote'],
    ['a CR inside quotes', 'a "b\rc"', 'unmatched quote'],
    ['an invalid \\x sequence', 'a\\x4', 'truncated or invalid hexadecimal sequence'],
    [
      'a variable starting with a digit',
      '"$1"',
      'forbidden first char in environment variable name',
    ],
    ['an unknown internal variable', '"$.X"', 'forbidden first char in environment variable name'],
    ['an unmatched brace', '"${X"', 'unmatched brace in environment variable name'],
    ['a bad word expansion', '"${X[1]}"', 'truncated or invalid word expansion sequence'],
  ])('reports %s as HAProxy does', (_name, line, error) => {
    expect(splitConfigLine(line).error).toBe(error);
  });

  it('marks a line that starts with [ as a scope line', () => {
    expect(splitConfigLine('  [scope] lua-load x').scope).toBe(true);
  });

  it('numbers lines from 1 and leaves out empty ones and comments', () => {
    expect(splitConfig('global\n\n  # note\n  maxconn 1\n').map((line) => line.number)).toEqual([
      1, 4,
    ]);
  });
});
