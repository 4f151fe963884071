import type { DescriptorIo } from './descriptor-io.js';

export interface Owner {
  uid: number;
  gid: number;
}

const serviceIsRoot = process.getuid?.() === 0;

// A root service writes into workspaces that belong to the sandbox's unprivileged uid. What it creates
// there takes the owner of the directory it is created in, so commands can change it afterwards without
// any world-writable mode; in a root-owned directory (or under an unprivileged service) nothing changes.
export async function ownerToInherit(io: DescriptorIo, directoryFd: number): Promise<Owner | undefined> {
  if (!serviceIsRoot) return undefined;
  const { uid, gid } = await io.fstat(directoryFd);
  return uid === 0 && gid === 0 ? undefined : { uid, gid };
}
