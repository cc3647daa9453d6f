import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeRecord, RECORD_LAYOUT, RecorderKind, TWR, TWR_STRUCTS, type RecorderKindName } from '../src/readers/recorder-layout';
import { ROOT } from './helpers';

// One source of truth for the records.twr layout: native/include/tickwise/format.h.
// native/layout.json is its offsetof/sizeof/type per field, printed by
// native/tools/tw_layout.cpp (ctest format.layout fails when the two differ).
// Here the TypeScript reader's table and native/FORMAT.md are held to layout.json.

interface LayoutField { name: string; offset: number; size: number; type: string }
interface Layout {
  format_version: number;
  record_size: number;
  file_magic: string;
  chunk_magic: number;
  chunk_types: { records: number; strings: number };
  structs: Record<string, { size: number; fields: LayoutField[] }>;
  kinds: { kind: number; name: string; struct: string }[];
}

const layout = JSON.parse(readFileSync(join(ROOT, 'native/layout.json'), 'utf8')) as Layout;
const formatMd = readFileSync(join(ROOT, 'native/FORMAT.md'), 'utf8');
const reserved = (name: string) => /^(reserved\d*|pad)$/.test(name);
type Table = Readonly<Record<string, readonly [number, string]>>;

/** Where a TypeScript field table and a struct of layout.json differ (fields but reserved/pad). */
function tableDiffs(what: string, ts: Table, cpp: { fields: LayoutField[] } | undefined): string[] {
  if (!cpp) return [`${what}: no such struct in layout.json`];
  const out: string[] = [];
  const want = new Map(cpp.fields.filter((f) => !reserved(f.name)).map((f) => [f.name, f]));
  for (const [name, [offset, type]] of Object.entries(ts)) {
    const f = want.get(name);
    if (!f) out.push(`${what}.${name}: not a field of format.h`);
    else if (f.offset !== offset || f.type !== type) out.push(`${what}.${name}: reader has ${type} at ${offset}, format.h ${f.type} at ${f.offset}`);
  }
  for (const name of want.keys()) if (!(name in ts)) out.push(`${what}.${name}: a field of format.h the reader's table lacks`);
  return out;
}

/** Every difference between the reader's tables and layout.json. */
function readerDiffs(l: Layout): string[] {
  const out: string[] = [];
  const tsKinds = new Map(Object.entries(RECORD_LAYOUT).map(([name, v]) => [name, v]));
  for (const k of l.kinds) {
    const ts = tsKinds.get(k.name);
    if (!ts) { out.push(`kind ${k.kind} ${k.name}: missing from RECORD_LAYOUT`); continue; }
    tsKinds.delete(k.name);
    if (ts.kind !== k.kind || ts.struct !== k.struct) out.push(`${k.name}: reader says kind ${ts.kind} struct ${ts.struct}, format.h kind ${k.kind} struct ${k.struct}`);
    out.push(...tableDiffs(k.name, ts.fields as Table, l.structs[k.struct]));
  }
  for (const name of tsKinds.keys()) out.push(`${name}: in RECORD_LAYOUT, not a Kind of format.h`);
  for (const [name, t] of Object.entries(TWR_STRUCTS)) out.push(...tableDiffs(name, t as Table, l.structs[name]));
  return out;
}

/** (offset, type, name) triples FORMAT.md states in its tables and inline lists, from "### File header" to "## meta.json". */
function formatMdTriples(md: string): { offset: number; type: string; name: string; text: string }[] {
  const body = md.slice(md.indexOf('### File header'), md.indexOf('## meta.json'));
  const type = 'u8|u16|u32|i32|u64|i64|char\\[\\d+\\]';
  const out: { offset: number; type: string; name: string; text: string }[] = [];
  for (const m of body.matchAll(new RegExp(`^\\|\\s*(\\d+)\\s*\\|\\s*(${type})\\s*\\|\\s*\`?(\\w+)`, 'gm'))) out.push({ offset: Number(m[1]), type: m[2]!, name: m[3]!, text: m[0] });
  for (const m of body.matchAll(new RegExp(`\\b(\\d+) (${type}) \`?(\\w+)`, 'g'))) out.push({ offset: Number(m[1]), type: m[2]!, name: m[3]!, text: m[0] });
  return out;
}

/** Where FORMAT.md and layout.json differ: stated fields that no struct has, fields it never states. */
function formatMdDiffs(l: Layout, md: string): string[] {
  const triples = formatMdTriples(md);
  const out: string[] = [];
  const all = Object.values(l.structs).flatMap((s) => s.fields);
  for (const t of triples) {
    if (!all.some((f) => f.name === t.name && f.offset === t.offset && f.type === t.type)) out.push(`FORMAT.md "${t.text}": no struct of format.h has ${t.type} ${t.name} at ${t.offset}`);
  }
  const stated = new Set(triples.map((t) => `${t.offset} ${t.type} ${t.name}`));
  for (const [name, s] of Object.entries(l.structs)) {
    if (name === 'XdnaPrefix') continue; // stated once for the nine amdxdna kinds
    const recordStruct = l.kinds.some((k) => k.struct === name);
    for (const f of s.fields) {
      // a record's kind/aux/tid (bytes 0..7) are stated in prose once for all kinds
      if (reserved(f.name) || (recordStruct && f.offset < 8)) continue;
      if (!stated.has(`${f.offset} ${f.type} ${f.name}`)) out.push(`${name}.${f.name} (${f.type} at ${f.offset}) is not in FORMAT.md`);
    }
  }
  return out;
}

describe('records.twr layout: format.h (native/layout.json) = the reader = FORMAT.md', () => {
  it('layout.json lists every record kind, each struct 64 bytes, every field tiled', () => {
    expect(l2(layout.kinds.map((k) => k.kind))).toEqual(l2(Object.values(RecorderKind)));
    for (const k of layout.kinds) expect(layout.structs[k.struct]!.size).toBe(64);
  });

  it('the reader decodes every field of every kind at format.h\'s offset with its type, and no other', () => {
    expect(readerDiffs(layout)).toEqual([]);
  });

  it('each kind\'s decoder reads back, field by field, values written at format.h\'s offsets', () => {
    for (const k of layout.kinds) {
      const b = Buffer.alloc(64);
      const want: Record<string, bigint | number> = {};
      layout.structs[k.struct]!.fields.forEach((f, i) => {
        if (reserved(f.name) || f.type.startsWith('char')) return;
        // a distinct value per field that fills its width (top bits set for the 64-bit ones)
        const v = BigInt(i + 1) * 0x0101010101010101n + (f.size === 8 ? 0x8000000000000000n : 0n);
        switch (f.type) {
          case 'u8': b.writeUInt8(Number(v & 0xffn), f.offset); want[f.name] = Number(v & 0xffn); break;
          case 'u16': b.writeUInt16LE(Number(v & 0xffffn), f.offset); want[f.name] = Number(v & 0xffffn); break;
          case 'u32': b.writeUInt32LE(Number(v & 0xffffffffn), f.offset); want[f.name] = Number(v & 0xffffffffn); break;
          case 'i32': b.writeInt32LE(-(i + 1), f.offset); want[f.name] = -(i + 1); break;
          case 'u64': b.writeBigUInt64LE(v, f.offset); want[f.name] = v; break;
          case 'i64': b.writeBigInt64LE(-v + 0x8000000000000000n, f.offset); want[f.name] = -v + 0x8000000000000000n; break;
          default: throw new Error(`${k.struct}.${f.name}: type ${f.type}`);
        }
      });
      const got = decodeRecord(new DataView(b.buffer, b.byteOffset, 64), 0, k.name as RecorderKindName);
      expect({ record_kind: k.name, ...got }).toEqual({ record_kind: k.name, ...want });
    }
  });

  it('the reader\'s constants are format.h\'s', () => {
    expect(TWR.record_bytes).toBe(layout.record_size);
    expect(TWR.format_version).toBe(layout.format_version);
    expect(TWR.file_magic).toBe(`${layout.file_magic}\0`);
    expect(TWR.chunk_magic).toBe(layout.chunk_magic);
    expect([TWR.chunk_records, TWR.chunk_strings]).toEqual([layout.chunk_types.records, layout.chunk_types.strings]);
    expect(TWR.file_header_bytes).toBe(layout.structs['FileHeader']!.size);
    expect(TWR.chunk_header_bytes).toBe(layout.structs['ChunkHeader']!.size);
    expect(TWR.string_entry_bytes).toBe(layout.structs['StringEntry']!.size);
  });

  it('a layout that moves, retypes or renames a field, or adds a kind, is reported', () => {
    const mutate = (f: (l: Layout) => void) => {
      const copy = JSON.parse(JSON.stringify(layout)) as Layout;
      f(copy);
      return readerDiffs(copy);
    };
    const seq = (l: Layout) => l.structs['XdnaExecCmd']!.fields.find((x) => x.name === 'seq')!;
    expect(mutate((l) => { seq(l).offset = 48; })).toEqual(['xdna_exec_cmd.seq: reader has u64 at 40, format.h u64 at 48']);
    expect(mutate((l) => { seq(l).type = 'i64'; })).toEqual(['xdna_exec_cmd.seq: reader has u64 at 40, format.h i64 at 40']);
    expect(mutate((l) => { seq(l).name = 'sequence'; })).toEqual([
      'xdna_exec_cmd.seq: not a field of format.h', 'xdna_exec_cmd.sequence: a field of format.h the reader\'s table lacks',
    ]);
    expect(mutate((l) => { l.kinds.push({ kind: 53, name: 'cuda_graph', struct: 'CudaApi' }); })).toEqual(['kind 53 cuda_graph: missing from RECORD_LAYOUT']);
  });

  it('FORMAT.md states every field at format.h\'s offset and type, and nothing else', () => {
    expect(formatMdTriples(formatMd).length).toBeGreaterThan(100);
    expect(formatMdDiffs(layout, formatMd)).toEqual([]);
    // and a wrong offset on the page is found
    const wrong = formatMd.replace('| 40 | u64 | stream | hipStream_t', '| 44 | u64 | stream | hipStream_t');
    expect(wrong).not.toBe(formatMd);
    expect(formatMdDiffs(layout, wrong)).toEqual([
      'FORMAT.md "| 44 | u64 | stream": no struct of format.h has u64 stream at 44',
    ]);
    // a field the page leaves out (stated by no struct's table)
    expect(formatMdDiffs(layout, formatMd.replace('20 u32 offset, 24 char[40] text', '24 char[40] text'))).toEqual(['CudaName.offset (u32 at 20) is not in FORMAT.md']);
  });
});

function l2(xs: number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}
