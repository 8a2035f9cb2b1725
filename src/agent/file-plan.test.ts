import { describe, expect, it } from 'vitest';
import { digestOf } from '../agent-api/apply-request.ts';
import { planFiles, planIsEmpty } from './file-plan.ts';

function desired(path: string, text: string) {
  const content = Buffer.from(text);
  return { path, digest: digestOf(content), content };
}

function applied(path: string, text: string) {
  return { path, digest: digestOf(Buffer.from(text)), size: text.length };
}

describe('planning an apply', () => {
  it('changes nothing when every digest matches', () => {
    const plan = planFiles([applied('haproxy.cfg', 'a')], [desired('haproxy.cfg', 'a')]);
    expect(planIsEmpty(plan)).toBe(true);
  });

  it('writes new and changed files, haproxy.cfg last, and removes dropped ones', () => {
    const plan = planFiles(
      [applied('haproxy.cfg', 'a'), applied('maps/old.map', 'o'), applied('maps/same.map', 's')],
      [desired('haproxy.cfg', 'b'), desired('maps/same.map', 's'), desired('ssl/new.pem', 'n')],
    );
    expect(plan.writes.map((file) => file.path)).toEqual(['ssl/new.pem', 'haproxy.cfg']);
    expect(plan.removals).toEqual(['maps/old.map']);
  });

  it('writes everything when nothing was applied yet', () => {
    const plan = planFiles([], [desired('haproxy.cfg', 'a'), desired('maps/m', 'm')]);
    expect(plan.writes.map((file) => file.path)).toEqual(['maps/m', 'haproxy.cfg']);
  });
});
