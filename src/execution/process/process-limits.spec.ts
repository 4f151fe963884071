import { cpuSecondsFor, prlimitArgs } from './process-limits.js';

describe('prlimitArgs', () => {
  it('always disables core files and sets the file-size and CPU limits it is given', async () => {
    await expect(prlimitArgs({ maxFileSizeBytes: 1024, cpuSeconds: 2 }, { uid: 0 })).resolves.toEqual([
      '--core=0',
      '--fsize=1024',
      '--cpu=2:3',
    ]);
  });

  it('caps the address space of each process when asked to', async () => {
    await expect(prlimitArgs({ addressSpaceBytes: 64 * 1024 * 1024 }, { uid: 0 })).resolves.toEqual([
      '--core=0',
      `--as=${64 * 1024 * 1024}`,
    ]);
  });

  it('leaves RLIMIT_NPROC alone for root, where the kernel ignores it', async () => {
    await expect(prlimitArgs({ maxProcesses: 50 }, { uid: 0 })).resolves.toEqual(['--core=0']);
  });

  it('for another uid, sets RLIMIT_NPROC to the tasks that uid already has plus the run limit', async () => {
    const [, nproc] = await prlimitArgs({ maxProcesses: 50 }, { uid: 65534 });
    expect(nproc).toMatch(/^--nproc=\d+$/);
    expect(Number(nproc.split('=')[1])).toBeGreaterThanOrEqual(50);
  });

  it('in a sandbox, sets RLIMIT_NPROC to the run limit alone: its user namespace has no other task', async () => {
    await expect(prlimitArgs({ maxProcesses: 50 }, { uid: 0, freshUserNamespace: true })).resolves.toEqual(['--core=0', '--nproc=50']);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a limit of %p', async (value) => {
    await expect(prlimitArgs({ cpuSeconds: value })).rejects.toMatchObject({ name: 'RunRefused', code: 'invalid_limits' });
  });
});

describe('cpuSecondsFor', () => {
  it('gives a call its timeout in whole seconds plus one, so a command on one core meets its timeout first', () => {
    expect(cpuSecondsFor(30_000, 120)).toBe(31);
    expect(cpuSecondsFor(1500, 120)).toBe(3);
    expect(cpuSecondsFor(100, 120)).toBe(2);
  });

  it('never gives more than SHELL_MAX_CPU_SECONDS', () => {
    expect(cpuSecondsFor(120_000, 120)).toBe(120);
    expect(cpuSecondsFor(30_000, 5)).toBe(5);
  });
});
