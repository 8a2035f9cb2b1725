import { describe, expect, it } from 'vitest';
import { declaredImage, parseDockerfile } from '../../support/dockerfile.ts';

describe('parseDockerfile', () => {
  it('splits stages, joins continued lines and drops comments', () => {
    const stages = parseDockerfile(
      '# c\nFROM a:1 AS build\nRUN one \\\n  && two\n\nFROM scratch\nCOPY --from=build /x/ /\nUSER 1:2\n',
    );
    expect(stages).toEqual([
      {
        from: 'a:1',
        name: 'build',
        instructions: [{ keyword: 'RUN', value: 'one && two', line: 3 }],
      },
      {
        from: 'scratch',
        name: undefined,
        instructions: [
          { keyword: 'COPY', value: '--from=build /x/ /', line: 7 },
          { keyword: 'USER', value: '1:2', line: 8 },
        ],
      },
    ]);
  });

  it('refuses an instruction before FROM, naming its line', () => {
    expect(() => parseDockerfile('\nUSER 1\n')).toThrow('Dockerfile line 2: USER before FROM');
  });
});

describe('declaredImage', () => {
  it.each([
    ['ENV A="b c"', 'Dockerfile line 2: ENV A="b c" is not one unquoted KEY=VALUE; write it so.'],
    ['ENTRYPOINT /bin/x', 'Dockerfile line 2: ENTRYPOINT must be a JSON array of strings'],
    ['COPY a /b', 'Dockerfile line 2: COPY a /b is not COPY --from=<stage> <dir>/ /.'],
    [
      'EXPOSE 80',
      'Dockerfile line 2: EXPOSE in the final stage is not compared with image/build.sh',
    ],
  ])('refuses %s, naming the line and the fix', (instruction, message) => {
    expect(() => declaredImage(parseDockerfile(`FROM scratch\n${instruction}\n`))).toThrow(message);
  });
});
