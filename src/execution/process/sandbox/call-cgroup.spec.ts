import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMemoryEvents, prepareCallCgroups } from './call-cgroup.js';

describe('parseMemoryEvents', () => {
  it("reads v1's memory.oom_control", () => {
    expect(parseMemoryEvents('oom_kill_disable 0\nunder_oom 0\noom_kill 2\n')).toEqual({ oomKills: 2 });
  });

  it('counts OOM kills, of one process or of the whole group', () => {
    expect(parseMemoryEvents('low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n')).toEqual({ oomKills: 1 });
    expect(parseMemoryEvents('max 3\noom 1\noom_kill 0\noom_group_kill 1\n')).toEqual({ oomKills: 1 });
    expect(parseMemoryEvents('max 0\noom 0\noom_kill 0\n')).toEqual({ oomKills: 0 });
  });
});

describe('prepareCallCgroups', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cgroup-fake-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const sources = (dir: string) => ({ procSelfCgroup: '0::/service\n', mountinfo: `31 25 0:27 / ${dir} rw - cgroup2 cgroup2 rw` });

  it('declines, touching nothing, when the memory controller is not in the service cgroup v2', async () => {
    mkdirSync(join(root, 'service'));
    writeFileSync(join(root, 'service/cgroup.controllers'), 'hugetlb\n');
    const answer = await prepareCallCgroups(sources(root));
    expect(answer).toEqual({ reason: expect.stringMatching(/memory controller is not available .*hugetlb.*no cgroup v1 memory/) });
    expect(readdirSync(join(root, 'service'))).toEqual(['cgroup.controllers']);
  });

  it('declines when the cgroup cannot be read', async () => {
    await expect(prepareCallCgroups(sources(join(root, 'missing')))).resolves.toEqual({
      reason: expect.stringContaining('cannot be read'),
    });
  });
});

describe('prepareCallCgroups on a cgroup v1 memory hierarchy', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cgroup-v1-fake-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("removes the call cgroups of services no longer alive, never those of a live one (another instance's, empty before its sandbox moves in)", async () => {
    const calls = join(root, 'svc', 'toolgate-calls');
    mkdirSync(calls, { recursive: true });
    // A pid above the kernel's pid_max belongs to no process.
    const dead = 'call-4194305-aaaa';
    const live = `call-${process.pid}-bbbb`;
    const oldStyle = 'call-0123456789abcdef';
    for (const name of [dead, live, oldStyle, 'not-a-call']) mkdirSync(join(calls, name));
    const sources = { procSelfCgroup: '4:memory:/svc\n0::/\n', mountinfo: `35 31 0:32 / ${root} rw,relatime - cgroup cgroup rw,memory` };
    await prepareCallCgroups(sources);
    expect(
      readdirSync(calls)
        .filter((name) => !name.startsWith(`call-${process.pid}-`) || name === live)
        .sort(),
    ).toEqual([live, 'not-a-call'].sort());
  });
});
