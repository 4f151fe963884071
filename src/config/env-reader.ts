import path from 'node:path';

// Reads the variables loadConfig asks for, each as the type it must be; a bad value is added to `problems`
// (so that start-up names every bad variable at once) and the default is used meanwhile.
export class EnvReader {
  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly problems: string[],
  ) {}

  string(name: string): string | null {
    const value = this.env[name]?.trim();
    return value ? value : null;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      this.problems.push(`${name} must be an integer between ${min} and ${max}, got '${raw}'`);
      return fallback;
    }
    return value;
  }

  // Days as milliseconds; a fraction is allowed (0.0007 is about a minute, for test set-ups).
  days(name: string, fallback: number, max: number): number {
    const raw = this.string(name);
    if (raw === null) return fallback * 86_400_000;
    const value = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw) || value > max || (value > 0 && value * 86_400_000 < 1000)) {
      this.problems.push(`${name} must be a number of days between 0 (keep forever) and ${max}, got '${raw}'`);
      return fallback * 86_400_000;
    }
    return Math.round(value * 86_400_000);
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined || raw === null) return fallback;
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    this.problems.push(`${name} must be true or false, got '${raw}'`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === null) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
    return fallback;
  }

  absolutePath(name: string, cwd: string): string | null {
    const raw = this.string(name);
    if (raw === null) return null;
    if (raw.includes('\0')) {
      this.problems.push(`${name} must be a path`);
      return null;
    }
    return path.resolve(cwd, raw);
  }

  list(name: string): string[] | null {
    const raw = this.string(name);
    if (raw === null) return null;
    return raw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
  }

  // Comma-separated (a colon would clash with nothing on POSIX, but commas read better in .env files).
  pathList(name: string, cwd: string): string[] | null {
    const raw = this.string(name);
    if (raw === null) return null;
    return (this.list(name) ?? []).map((p) => path.resolve(cwd, p));
  }
}
