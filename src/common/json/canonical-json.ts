// JSON with object keys sorted at every level, so the same call always hashes the same. Written without
// recursion: arguments nested far deeper than any tool takes (the gate refuses them with a 422) must still
// get a fingerprint rather than overflow the stack. The text is the one a recursive writer would produce, so
// keys stored before keep matching.
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  // Work left, last first: a value to write, or text to emit as is.
  const work: Array<{ value: unknown } | string> = [{ value: root }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const { value } = item;
    if (Array.isArray(value)) {
      work.push(']');
      for (let i = value.length - 1; i >= 0; i--) {
        work.push({ value: value[i] });
        if (i > 0) work.push(',');
      }
      out.push('[');
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object)
        .sort()
        .filter((k) => object[k] !== undefined);
      work.push('}');
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push({ value: object[keys[i]] });
        work.push(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`);
      }
      out.push('{');
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}
