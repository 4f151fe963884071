import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultMaxConnections } from './descriptor-limit.js';

describe('defaultMaxConnections', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'limits-'));
  const limits = (openFiles: string) => {
    const file = path.join(dir, `limits-${openFiles.replace(/\s+/g, '-')}`);
    writeFileSync(
      file,
      `Limit                     Soft Limit           Hard Limit           Units\nMax processes             63671                63671                processes\n${openFiles}\nMax locked memory         8388608              8388608              bytes\n`,
    );
    return file;
  };

  it("is half the process's soft limit on open files", () => {
    expect(defaultMaxConnections(limits('Max open files            20000                1048576              files'))).toBe(10_000);
    expect(defaultMaxConnections(limits('Max open files            1024                 1048576              files'))).toBe(512);
  });

  it('keeps a floor and a ceiling, and a fixed figure when the limit is unlimited or cannot be read', () => {
    expect(defaultMaxConnections(limits('Max open files            50                   50                   files'))).toBe(64);
    expect(defaultMaxConnections(limits('Max open files            unlimited            unlimited            files'))).toBe(100_000);
    expect(defaultMaxConnections(limits('Max open files            1048576              1048576              files'))).toBe(100_000);
    expect(defaultMaxConnections(limits('Max something else        1                    1'))).toBe(10_000);
    expect(defaultMaxConnections(path.join(dir, 'missing'))).toBe(10_000);
  });

  it('reads this process’s own limits', () => {
    expect(defaultMaxConnections()).toBeGreaterThanOrEqual(64);
  });
});
