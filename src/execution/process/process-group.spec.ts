import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { countTasksOfUid, groupExceeds, killGroup, waitForGroupExit } from './process-group.js';

describe('process group helpers', () => {
  const leftovers: number[] = [];
  afterAll(() => leftovers.forEach(killGroup));

  it('tells whether a group has more members than a limit, then kills all of them', async () => {
    const child = spawn('/bin/sh', ['-c', 'sleep 993.1 & sleep 993.1 & wait'], { detached: true, stdio: 'ignore' });
    const pgid = child.pid!;
    leftovers.push(pgid);
    await delay(150);
    await expect(groupExceeds(pgid, 2)).resolves.toBe(true);
    await expect(groupExceeds(pgid, 3)).resolves.toBe(false);

    killGroup(pgid);
    await expect(waitForGroupExit(pgid, 1000)).resolves.toBe(true);
    killGroup(pgid); // a second kill of a vanished group is harmless
  });

  it('counts the tasks of a uid, threads included', async () => {
    // This very process has a main thread plus libuv and V8 threads.
    expect(await countTasksOfUid(process.getuid!())).toBeGreaterThan(1);
  });
});
