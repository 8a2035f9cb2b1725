import { describe, expect, it } from 'vitest';
import { parseProcessList } from './process-list.ts';

const afterFailedReload = `#<PID>          <type>          <reloads>       <uptime>        <version>
17409           master          2 [failed: 1]   0d00h20m12s     2.6.12-1+deb12u4
# workers
21505           worker          1               0d00h00m01s     2.6.12-1+deb12u4
# old workers
17419           worker          2               0d00h01m05s     2.6.12-1+deb12u4
# programs

`;

describe("parsing HAProxy's show proc", () => {
  it('reads master, current and old workers', () => {
    expect(parseProcessList(afterFailedReload)).toEqual({
      master: {
        pid: 17409,
        reloads: 2,
        failedReloads: 1,
        uptime: '0d00h20m12s',
        version: '2.6.12-1+deb12u4',
      },
      workers: [{ pid: 21505, reloads: 1, uptime: '0d00h00m01s', version: '2.6.12-1+deb12u4' }],
      oldWorkers: [{ pid: 17419, reloads: 2, uptime: '0d00h01m05s', version: '2.6.12-1+deb12u4' }],
    });
  });

  it('counts no failures when the master line has none', () => {
    const list = parseProcessList(
      '17409 master 0 0d00h00m01s 2.6.12\n# workers\n17419 worker 0 0d00h00m01s 2.6.12\n',
    );
    expect(list?.master.failedReloads).toBe(0);
    expect(list?.workers).toHaveLength(1);
  });

  it('is undefined for anything without a master line', () => {
    expect(parseProcessList('Unknown command\n')).toBeUndefined();
    expect(parseProcessList('')).toBeUndefined();
  });
});
