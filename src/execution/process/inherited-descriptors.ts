import { closeSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

// Descriptors the service inherited from whoever started it (a shell, a supervisor, a test harness) that
// stay open across exec: every child would get them, every command's sandbox included (bubblewrap passes
// on whatever it inherits). Node opens its own descriptors close-on-exec, so the ones without that flag at
// start-up are the inherited ones; stdin, stdout, stderr and the descriptors in `keep` stay. Answers the
// descriptors it closed.
export function closeInheritedDescriptors(keep: readonly number[] = []): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return []; // not Linux, or no /proc: nothing to learn the flags from
  }
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || keep.includes(fd)) continue;
    let flags: number;
    try {
      flags = parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '', 8);
    } catch {
      continue; // the directory's own descriptor, gone by now
    }
    if (Number.isNaN(flags) || (flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // already closed
    }
  }
  return closed;
}
