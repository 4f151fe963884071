const UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// A size as a person (or a model) reads it: "64 MiB", "1.5 GiB", "300 bytes".
export function describeBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  if (Math.abs(bytes) < 1024) return `${bytes} bytes`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const rounded = Number.isInteger(value) ? String(value) : value.toFixed(1).replace(/\.0$/, '');
  return `${rounded} ${UNITS[unit]}`;
}
