import { ownCgroupDirectory, ownV1Directory } from './own-cgroup.js';
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

describe('ownV1Directory for the memory controller', () => {
  it("finds the service's directory in the v1 memory hierarchy", () => {
    const procSelfCgroup = '5:devices:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n';
    expect(ownV1Directory({ procSelfCgroup, mountinfo: HYBRID }, 'memory')).toEqual({ dir: '/sys/fs/cgroup/memory/process_api/abc' });
  });

  it('reads a controller that shares its hierarchy with others', () => {
    const mountinfo = '35 31 0:32 / /cg/mem rw,relatime - cgroup cgroup rw,memory,hugetlb';
    expect(ownV1Directory({ procSelfCgroup: '4:hugetlb,memory:/x\n', mountinfo }, 'memory')).toEqual({ dir: '/cg/mem/x' });
  });

  it('says why when there is no v1 memory hierarchy', () => {
    expect(ownV1Directory({ procSelfCgroup: '0::/a\n', mountinfo: UNIFIED_ONLY }, 'memory')).toEqual({
      reason: expect.stringContaining('no cgroup v1 memory'),
    });
    expect(ownV1Directory({ procSelfCgroup: '4:memory:/a\n', mountinfo: UNIFIED_ONLY }, 'memory')).toEqual({
      reason: expect.stringContaining('no cgroup v1 memory'),
    });
  });
});
