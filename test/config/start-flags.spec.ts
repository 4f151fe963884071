import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// The Node flags the service starts with live in two places, `npm start` and the image's CMD (the bench
// reads the first). They must agree, and the young-generation cap must hold on the node running the tests.
const startScript = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
const imageCommand = JSON.parse(/^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))![1]) as string[];

// Allocates short-lived garbage with a few survivors, which is what makes V8 grow the young generation,
// and prints the new space's size in MB.
const GROW_NEW_SPACE = `
const v8 = require('node:v8');
let keep = [];
for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
process.stdout.write(String(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576));
`;

describe('the Node flags the service starts with', () => {
  it('are the same in npm start and in the Docker image', () => {
    expect(startScript[0]).toBe('node');
    expect(startScript.at(-1)).toBe('dist/main.js');
    expect(imageCommand).toEqual(startScript);
  });

  it('keep the young generation at two 4 MB semi-spaces under allocation, where V8 alone grows it past that', () => {
    const flags = startScript.slice(1, -1);
    expect(flags).toContain('--max-semi-space-size=4');
    const capped = Number(execFileSync(process.execPath, [...flags, '-e', GROW_NEW_SPACE], { encoding: 'utf8' }));
    const unbounded = Number(execFileSync(process.execPath, ['-e', GROW_NEW_SPACE], { encoding: 'utf8' }));
    expect(capped).toBeLessThanOrEqual(8);
    // 32 MB on Node 20 and 64 MB on Node 24 on these machines; V8 scales it down on a small heap limit.
    expect(unbounded).toBeGreaterThan(8);
  });
});
