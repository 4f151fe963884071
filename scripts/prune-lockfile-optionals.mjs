// npm records a package's platform-specific optional dependencies in package-lock.json, but when the
// registry in use does not carry some of them (an offline mirror holding only linux-x64 builds), npm
// leaves them out of the lock while still listing them as wanted, and `npm ci` then refuses the lock as
// out of sync. This drops the wanted-but-absent optional entries. Run it after `npm install` when
// `npm ci` says "Missing: ... from lock file".
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const present = new Set(Object.keys(lock.packages).map((key) => key.replace(/^.*node_modules\//, '')));
let dropped = 0;
for (const entry of Object.values(lock.packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    if (!present.has(name)) {
      delete entry.optionalDependencies[name];
      dropped++;
    }
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: dropped ${dropped} optional dependencies the registry does not provide`);
