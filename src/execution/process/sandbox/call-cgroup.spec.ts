import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownCgroupDirectory, ownMemoryV1Directory, ownV1Directory, parseMemoryEvents, prepareCallCgroups } from './call-cgroup.js';

const UNIFIED_ONLY = [
  '25 30 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw',
  '31 25 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
].join('\n');

// A host that mounts cgroup v1 controllers and keeps only an empty v2 hierarchy beside them.
const HYBRID = [
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

describe('ownCgroupDirectory', () => {
  it("finds the service's cgroup below the cgroup2 mount", () => {
    expect(ownCgroupDirectory({ procSelfCgroup: '0::/system.slice/toolgate.service\n', mountinfo: UNIFIED_ONLY })).toEqual({
      dir: '/sys/fs/cgroup/system.slice/toolgate.service',
    });
    expect(ownCgroupDirectory({ procSelfCgroup: '4:memory:/x\n0::/\n', mountinfo: HYBRID })).toEqual({ dir: '/sys/fs/cgroup/unified' });
  });

  it('follows a mount whose root is a cgroup below the hierarchy, with escaped characters', () => {
    const mountinfo = '50 40 0:27 /kubepods/pod\\0401 /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw';
    expect(ownCgroupDirectory({ procSelfCgroup: '0::/kubepods/pod 1/app\n', mountinfo })).toEqual({ dir: '/mnt/my cgroups/app' });
  });

  it('says why when there is no cgroup v2', () => {
    expect(ownCgroupDirectory({ procSelfCgroup: '4:memory:/x\n', mountinfo: HYBRID })).toEqual({
      reason: expect.stringContaining('no cgroup v2'),
    });
    expect(ownCgroupDirectory({ procSelfCgroup: '0::/a\n', mountinfo: '' })).toEqual({
      reason: expect.stringContaining('no cgroup2 file system'),
    });
  });
});

describe('ownV1Directory for the cpu controller', () => {
  it('finds the cpu hierarchy alone or beside cpuacct, and never takes cpuacct or cpuset for it', () => {
    const separate = [
      '31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
      '32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
      '33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset',
    ].join('\n');
    expect(ownV1Directory({ procSelfCgroup: '3:cpuset:/z\n2:cpuacct:/y\n1:cpu:/x\n', mountinfo: separate }, 'cpu')).toEqual({
      dir: '/sys/fs/cgroup/cpu/x',
    });
    const combined = '31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct';
    expect(ownV1Directory({ procSelfCgroup: '2:cpu,cpuacct:/svc\n', mountinfo: combined }, 'cpu')).toEqual({
      dir: '/sys/fs/cgroup/cpu,cpuacct/svc',
    });
    expect(ownV1Directory({ procSelfCgroup: '2:cpuacct:/y\n', mountinfo: separate }, 'cpu')).toEqual({
      reason: expect.stringContaining('no cgroup v1 cpu hierarchy'),
    });
  });
});

describe('ownMemoryV1Directory', () => {
  it("finds the service's directory in the v1 memory hierarchy", () => {
    const procSelfCgroup = '5:devices:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n';
    expect(ownMemoryV1Directory({ procSelfCgroup, mountinfo: HYBRID })).toEqual({ dir: '/sys/fs/cgroup/memory/process_api/abc' });
  });

  it('reads a controller that shares its hierarchy with others', () => {
    const mountinfo = '35 31 0:32 / /cg/mem rw,relatime - cgroup cgroup rw,memory,hugetlb';
    expect(ownMemoryV1Directory({ procSelfCgroup: '4:hugetlb,memory:/x\n', mountinfo })).toEqual({ dir: '/cg/mem/x' });
  });

  it('says why when there is no v1 memory hierarchy', () => {
    expect(ownMemoryV1Directory({ procSelfCgroup: '0::/a\n', mountinfo: UNIFIED_ONLY })).toEqual({
      reason: expect.stringContaining('no cgroup v1 memory'),
    });
    expect(ownMemoryV1Directory({ procSelfCgroup: '4:memory:/a\n', mountinfo: UNIFIED_ONLY })).toEqual({
      reason: expect.stringContaining('no cgroup v1 memory'),
    });
  });
});

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
