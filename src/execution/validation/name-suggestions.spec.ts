import { AppError } from '../../common/errors/app-error.js';
import { editDistance, suggestNames, toolNotFound } from './name-suggestions.js';

const tools = ['read_file', 'write_file', 'list_files', 'delete_file', 'fetch_url', 'shell_exec'];

describe('suggestNames', () => {
  it("suggests 'read_file' for 'reed_file'", () => {
    expect(suggestNames('reed_file', tools)).toEqual(['read_file']);
  });

  it("suggests 'list_files' for the prefix 'list'", () => {
    expect(suggestNames('list', tools)).toEqual(['list_files']);
  });

  it("ignores case: 'READ_FILE' -> 'read_file'", () => {
    expect(suggestNames('READ_FILE', tools)).toEqual(['read_file']);
  });

  it('counts a swap of two adjacent letters as one edit', () => {
    expect(editDistance('raed_file', 'read_file')).toBe(1);
    expect(suggestNames('raed_file', tools)[0]).toBe('read_file');
  });

  it('finds a name contained in the input and an input contained in a name', () => {
    expect(suggestNames('exec', tools)).toEqual(['shell_exec']);
    expect(suggestNames('read_file_now', tools)).toEqual(['read_file']);
  });

  it('orders the closest first and returns at most `max` names', () => {
    const names = ['file_a', 'file_b', 'file_c', 'file_d'];
    expect(suggestNames('file_x', names)).toHaveLength(3);
    expect(suggestNames('file_x', names, 2)).toEqual(['file_a', 'file_b']);
    expect(suggestNames('file_b', names)[0]).toBe('file_b');
  });

  it('suggests nothing for an unrelated or empty name', () => {
    expect(suggestNames('zzz', tools)).toEqual([]);
    expect(suggestNames('', tools)).toEqual([]);
  });

  it('stays fast for a very long input', () => {
    const started = performance.now();
    expect(suggestNames('x'.repeat(100_000), tools)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('toolNotFound', () => {
  it('answers 404 tool_not_found with "Did you mean \'read_file\'?" and the suggestions', () => {
    const error = toolNotFound('reed_file', tools);
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(404);
    expect(error.code).toBe('tool_not_found');
    expect(error.message).toBe("No tool named 'reed_file' in this project. Did you mean 'read_file'?");
    expect(error.details).toEqual({ suggestions: ['read_file'] });
  });

  it('joins several suggestions with "or"', () => {
    const error = toolNotFound('file', ['file_a', 'file_b', 'file_c']);
    expect(error.message).toBe("No tool named 'file' in this project. Did you mean 'file_a', 'file_b' or 'file_c'?");
  });

  it('lists the available tools when nothing is close', () => {
    expect(toolNotFound('zzz', ['read_file', 'fetch_url']).message).toBe(
      "No tool named 'zzz' in this project. Available tools: fetch_url, read_file.",
    );
    expect(toolNotFound('zzz', []).message).toBe("No tool named 'zzz' in this project. This project has no tools enabled.");
  });

  it('keeps a long or multi-line name short and on one line', () => {
    const message = toolNotFound(`evil\n${'x'.repeat(500)}`, tools).message;
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(200);
  });
});
