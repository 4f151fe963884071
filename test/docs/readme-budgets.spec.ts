// The README's table of tenant budgets says what the code does: it names every budget once, each default is
// the one the service starts with, and each setting is the variable that changes that budget.
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config/load-config.js';
import { BUDGET_NAMES } from '../../src/budgets/tenant-usage.js';

const HEADING = "## Each tenant's budgets";

interface Row {
  budget: string;
  defaultText: string;
  setting: string;
}

function budgetRows(): Row[] {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf(HEADING);
  if (start === -1) throw new Error(`README.md has no section '${HEADING}'`);
  const section = readme.slice(start + HEADING.length).split(/^## /m)[0];
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [budget, defaultText, setting] = line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim().replace(/^`|`$/g, ''));
      return { budget, defaultText, setting };
    });
}

// "2 GiB", "256 MiB", "1,000,000", "4": the figure the table means.
function figure(text: string): number {
  const match = /^([\d,]+)(?: (KiB|MiB|GiB))?$/.exec(text);
  if (!match) throw new Error(`'${text}' is not a figure the README's table may hold`);
  const unit = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[match[2] as 'KiB' | 'MiB' | 'GiB'] ?? 1;
  return Number(match[1].replaceAll(',', '')) * unit;
}

describe("README: each tenant's budgets", () => {
  const rows = budgetRows();
  const defaults = loadConfig({}, '/srv/toolgate').budgets;

  it('names every budget, once', () => {
    expect(rows.map((row) => row.budget).sort()).toEqual([...BUDGET_NAMES].sort());
  });

  it.each(rows.map((row) => [row.budget, row] as const))('gives the default %s starts with', (budget, row) => {
    expect(figure(row.defaultText)).toBe(defaults[budget as keyof typeof defaults]);
  });

  it.each(rows.map((row) => [row.budget, row] as const))('names the setting that changes %s', (budget, row) => {
    const changed = defaults[budget as keyof typeof defaults] * 2;
    const config = loadConfig({ [row.setting]: String(changed) }, '/srv/toolgate');
    expect(config.budgets[budget as keyof typeof defaults]).toBe(changed);
  });
});
