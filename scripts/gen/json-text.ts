/**
 * JSON text for truth files: 2-space indented objects, arrays of plain values
 * on one line (so per-dispatch columns stay compact), a final newline.
 */
export function jsonText(value: unknown): string {
  return write(value, '') + '\n';
}

function write(v: unknown, indent: string): string {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
    return JSON.stringify(v);
  }
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    if (v.every((x) => x === null || typeof x !== 'object')) return '[' + v.map((x) => write(x, inner)).join(', ') + ']';
    return '[\n' + v.map((x) => inner + write(x, inner)).join(',\n') + '\n' + indent + ']';
  }
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  if (entries.length === 0) return '{}';
  return '{\n' + entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${write(x, inner)}`).join(',\n') + '\n' + indent + '}';
}
