import type { AppConfig } from '../config/app-config.js';
import type { WorkerPool } from '../common/worker-pool/worker-pool.js';
import type { DiskUsage } from '../execution/process/disk-usage.js';
import type { WorkspaceWorkerTasks } from './workspace-worker-tasks.js';
import { WorkspaceQuota } from './workspace-quota.js';

const MiB = 1024 * 1024;

// A worker pool whose walks answer what the test says the disk holds, and count themselves.
class FakeWalks {
  usage: DiskUsage = { bytes: 0, entries: 0, complete: true };
  walks = 0;
  readonly pool = {
    run: async (task: string) => {
      expect(task).toBe('measureWorkspaceUsage');
      this.walks++;
      return { ...this.usage };
    },
  } as unknown as WorkerPool<WorkspaceWorkerTasks>;
}

const quotaOf = (walks: FakeWalks, quotaBytes = 10 * MiB) =>
  new WorkspaceQuota({ workspace: { quotaBytes, quotaInodes: 1000, cacheMaxEntries: 100 } } as AppConfig, walks.pool);

describe('WorkspaceQuota', () => {
  it('lets writes in until the next one would pass the quota, then refuses it naming the quota and the usage', async () => {
    const walks = new FakeWalks();
    walks.usage.bytes = 7 * MiB;
    const quota = quotaOf(walks);
    await quota.reserve('/ws', 2 * MiB, 'a.bin');
    const refusal = quota.reserve('/ws', 2 * MiB, 'b.bin');
    await expect(refusal).rejects.toMatchObject({ code: 'workspace_quota_exceeded' });
    await expect(refusal).rejects.toThrow(
      /Writing 'b\.bin' would grow the workspace by 2 MiB to 11 MiB, past its quota of 10 MiB \(it uses 9 MiB now\)/,
    );
    expect(walks.walks).toBe(1);
  });

  it('gives the room back when the write did not happen', async () => {
    const walks = new FakeWalks();
    walks.usage.bytes = 7 * MiB;
    const quota = quotaOf(walks);
    const giveBack = await quota.reserve('/ws', 2 * MiB, 'a.bin');
    giveBack();
    await expect(quota.reserve('/ws', 3 * MiB, 'b.bin')).resolves.toEqual(expect.any(Function));
  });

  it('never refuses a write that frees space, even past the quota, and never walks for one', async () => {
    const walks = new FakeWalks();
    walks.usage.bytes = 20 * MiB;
    const quota = quotaOf(walks);
    await expect(quota.reserve('/ws', -4096, 'smaller.txt')).resolves.toEqual(expect.any(Function));
    expect(walks.walks).toBe(0);
    await expect(quota.reserve('/ws', 4096, 'bigger.txt')).rejects.toMatchObject({ code: 'workspace_quota_exceeded' });
  });

  it('measures each workspace once for concurrent callers, and again once it is forgotten', async () => {
    const walks = new FakeWalks();
    const quota = quotaOf(walks);
    await Promise.all([quota.reserve('/ws', 1, 'a'), quota.reserve('/ws', 1, 'b'), quota.forCommand('/ws')]);
    expect(walks.walks).toBe(1);
    await quota.forCommand('/other');
    expect(walks.walks).toBe(2);
    quota.forget('/ws');
    walks.usage.bytes = 3 * MiB;
    await expect(quota.forCommand('/ws')).resolves.toEqual({ bytes: 10 * MiB, usageAtStart: 3 * MiB, inodes: 1000, entriesAtStart: 0 });
    expect(walks.walks).toBe(3);
  });

  it('after a command, counts what it may have added without walking again while the workspace stays far from its quota', async () => {
    const walks = new FakeWalks();
    walks.usage.bytes = MiB;
    const quota = quotaOf(walks);
    await quota.forCommand('/ws');
    for (let i = 0; i < 5; i++) {
      quota.afterCommand('/ws', MiB / 2, 0);
      await quota.forCommand('/ws');
    }
    await quota.reserve('/ws', MiB, 'a.bin');
    expect(walks.walks).toBe(1);
    // The write may have added a file: counted (an upper bound, measured again before it refuses anything).
    await expect(quota.forCommand('/ws')).resolves.toEqual({
      bytes: 10 * MiB,
      usageAtStart: 1 * MiB + 5 * (MiB / 2) + MiB,
      inodes: 1000,
      entriesAtStart: 1,
    });
  });

  it('measures again before an upper bound left by commands or deletes would refuse anything', async () => {
    const walks = new FakeWalks();
    walks.usage.bytes = 9 * MiB;
    const quota = quotaOf(walks);
    await quota.forCommand('/ws');
    // The command wrote 4 MiB (over files it then deleted): the bound says 13 MiB, the disk holds 9.
    quota.afterCommand('/ws', 4 * MiB, 0);
    await expect(quota.forCommand('/ws')).resolves.toEqual({ bytes: 10 * MiB, usageAtStart: 9 * MiB, inodes: 1000, entriesAtStart: 0 });
    expect(walks.walks).toBe(2);
    // A delete freed 5 MiB of the 9.
    walks.usage.bytes = 4 * MiB;
    quota.afterDelete('/ws');
    await expect(quota.reserve('/ws', 5 * MiB, 'big.bin')).resolves.toEqual(expect.any(Function));
    expect(walks.walks).toBe(3);
  });

  it('refuses a growing write once the workspace holds its quota of inodes, measured again when commands may have added some', async () => {
    const walks = new FakeWalks();
    walks.usage.entries = 990;
    const quota = quotaOf(walks);
    await quota.reserve('/ws', 4096, 'a.txt');
    // A command made up to 20 inodes: the bound says 1010, so the workspace is walked before refusing.
    quota.afterCommand('/ws', 0, 20);
    walks.usage.entries = 1000;
    const refusal = quota.reserve('/ws', 4096, 'b.txt');
    await expect(refusal).rejects.toThrow(/holds 1000 files, directories and links, at its quota of 1000 \(WORKSPACE_QUOTA_INODES\)/);
    expect(walks.walks).toBe(2);
    // Nor does a command start there: it could only add more.
    await expect(quota.forCommand('/ws')).rejects.toThrow(
      /The command did not run: the workspace holds 1000 files, directories and links, at or past its quota of 1000/,
    );
  });

  it('measures again after a command nothing is known about', async () => {
    const walks = new FakeWalks();
    const quota = quotaOf(walks);
    await quota.forCommand('/ws');
    quota.afterCommand('/ws', null);
    await quota.forCommand('/ws');
    expect(walks.walks).toBe(2);
  });

  it('refuses to grow a workspace it cannot measure to the end', async () => {
    const walks = new FakeWalks();
    walks.usage.complete = false;
    await expect(quotaOf(walks).reserve('/ws', 1, 'a')).rejects.toThrow(/nested more than 1024 levels/);
  });
});
