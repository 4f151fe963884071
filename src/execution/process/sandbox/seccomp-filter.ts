// The seccomp filter every sandboxed command runs under (bubblewrap's `--seccomp FD` installs it just before
// it starts the command). It refuses the system calls that would let a command take disk without writing:
//
// - fallocate reserves blocks in an instant: 1.5 GiB of a 64 MiB workspace quota in a third of a second,
//   before any watchdog sample, and none of it shows in the processes' write counts. Refused with
//   EOPNOTSUPP, which C libraries (posix_fallocate) and tools answer by writing the bytes instead, and
//   written bytes are counted and stopped at the quota.
// - io_uring can do the same (IORING_OP_FALLOCATE) and much else where no system call is made; refused with
//   ENOSYS, so programs use plain calls. Container runtimes' default profiles refuse it too.
// - System calls of another ABI (32-bit x86 through int 0x80, x32) name other numbers; all are refused.
//
// Everything else is allowed: the sandbox's namespaces, mounts and limits do the rest. Written as classic
// BPF, the format the kernel reads (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k), in the byte order of
// the two architectures it supports (both little-endian). On another architecture there is no filter.

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EOPNOTSUPP = 95;
const ENOSYS = 38;

// Offsets in struct seccomp_data.
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

const X32_SYSCALL_BIT = 0x40000000;

interface Architecture {
  auditArch: number;
  fallocate: number;
  ioUring: number[];
  // x86_64 also takes x32 system calls (numbers with X32_SYSCALL_BIT) under the same audit arch.
  hasX32: boolean;
}

const ARCHITECTURES: Partial<Record<NodeJS.Architecture, Architecture>> = {
  x64: { auditArch: 0xc000003e, fallocate: 285, ioUring: [425, 426, 427], hasX32: true },
  arm64: { auditArch: 0xc00000b7, fallocate: 47, ioUring: [425, 426, 427], hasX32: false },
};

type Instruction = { code: number; jt?: string; jf?: string; k: number } | { label: string };

// The filter for this machine's architecture, or null where none is known (the sandbox then runs without).
export function sandboxSeccompFilter(arch: NodeJS.Architecture = process.arch): Buffer | null {
  const a = ARCHITECTURES[arch];
  if (!a) return null;
  const program: Instruction[] = [
    { code: BPF_LD_W_ABS, k: ARCH_OFFSET },
    { code: BPF_JEQ_K, k: a.auditArch, jf: 'enosys' },
    { code: BPF_LD_W_ABS, k: NR_OFFSET },
    ...(a.hasX32 ? [{ code: BPF_JGE_K, k: X32_SYSCALL_BIT, jt: 'enosys' }] : []),
    { code: BPF_JEQ_K, k: a.fallocate, jt: 'eopnotsupp' },
    ...a.ioUring.map((nr) => ({ code: BPF_JEQ_K, k: nr, jt: 'enosys' })),
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW },
    { label: 'eopnotsupp' },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | EOPNOTSUPP },
    { label: 'enosys' },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | ENOSYS },
  ];
  return assemble(program);
}

// Jumps are relative: a target is counted in instructions after the one that jumps.
function assemble(program: Instruction[]): Buffer {
  const labels = new Map<string, number>();
  let pc = 0;
  for (const item of program) {
    if ('label' in item) labels.set(item.label, pc);
    else pc++;
  }
  const out = Buffer.alloc(pc * 8);
  pc = 0;
  for (const item of program) {
    if ('label' in item) continue;
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0;
      const target = labels.get(label);
      if (target === undefined || target <= pc || target - pc - 1 > 255) throw new Error(`seccomp filter: bad jump to ${label}`);
      return target - pc - 1;
    };
    out.writeUInt16LE(item.code, pc * 8);
    out.writeUInt8(offset(item.jt), pc * 8 + 2);
    out.writeUInt8(offset(item.jf), pc * 8 + 3);
    out.writeUInt32LE(item.k >>> 0, pc * 8 + 4);
    pc++;
  }
  return out;
}
