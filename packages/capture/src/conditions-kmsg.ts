/**
 * Kernel-log lines of the GPU and NPU drivers during a window, counted by
 * severity. Read from `/dev/kmsg` where this process may (one record per
 * read(2), non-blocking; records carry a sequence number, so "during the
 * window" is exact: records with a sequence number above the last one seen
 * at the start), else from `dmesg --raw` (timestamps in seconds since boot,
 * compared with the window on CLOCK_MONOTONIC), else absent.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { KMSG_DRIVERS, KMSG_SEVERITIES } from '@tickwise/store';

/** A kernel-log severity as counted. */
export type KmsgSeverity = (typeof KMSG_SEVERITIES)[number];
/** A driver whose lines are counted. */
export type KmsgDriver = (typeof KMSG_DRIVERS)[number];

/** One kernel-log record. */
export interface KmsgRecord {
  /** syslog level 0..7. */
  readonly level: number;
  /** Sequence number (/dev/kmsg only). */
  readonly seq: bigint | null;
  /** Timestamp, microseconds since boot (the kernel's local clock). */
  readonly ts_us: bigint;
  readonly message: string;
}

/** Where the log was read from, and the start of the window. */
export interface KmsgMark {
  readonly source: 'kmsg' | 'dmesg' | null;
  /** Why nothing could be read (source null). */
  readonly why: string | null;
  /** Highest sequence number at the start (/dev/kmsg). */
  readonly last_seq: bigint | null;
  /** CLOCK_MONOTONIC at the start, microseconds. */
  readonly start_us: bigint;
}

/** Counts of the window. */
export interface KmsgCounts {
  readonly source: 'kmsg' | 'dmesg' | null;
  readonly why: string | null;
  readonly counts: Record<KmsgDriver, Record<KmsgSeverity, number>>;
  /** The first error line of each driver in the window (for the note). */
  readonly first_error: Partial<Record<KmsgDriver, string>>;
  readonly records_in_window: number;
}

/** syslog level -> counted severity. */
export function kmsgSeverity(level: number): KmsgSeverity {
  if (level <= 3) return 'error';
  if (level === 4) return 'warning';
  if (level === 5) return 'notice';
  if (level === 6) return 'info';
  return 'debug';
}

/** The driver a line is from (by the name the driver prefixes its messages with), or null. */
export function kmsgDriver(message: string): KmsgDriver | null {
  for (const d of KMSG_DRIVERS) if (new RegExp(`\\b${d}\\b`, 'i').test(message)) return d;
  return null;
}

/** Parses one /dev/kmsg record: `prio,seq,ts_us,flags[,...];message`. */
export function parseKmsgRecord(text: string): KmsgRecord | null {
  const semi = text.indexOf(';');
  if (semi < 0) return null;
  const [prio, seq, ts] = text.slice(0, semi).split(',');
  if (prio === undefined || seq === undefined || ts === undefined || !/^\d+$/.test(prio) || !/^\d+$/.test(seq) || !/^\d+$/.test(ts)) return null;
  // continuation lines (" KEY=value") follow the first newline
  const message = text.slice(semi + 1).split('\n')[0]!;
  return { level: Number(prio) & 7, seq: BigInt(seq), ts_us: BigInt(ts), message };
}

/** Parses `dmesg --raw` lines: `<prio>[   12.345678] message`. */
export function parseDmesgRaw(text: string): KmsgRecord[] {
  const out: KmsgRecord[] = [];
  for (const line of text.split('\n')) {
    const m = /^<(\d+)>\[\s*(\d+)\.(\d{1,6})\]\s?(.*)$/.exec(line);
    if (!m) continue;
    out.push({ level: Number(m[1]) & 7, seq: null, ts_us: BigInt(m[2]!) * 1_000_000n + BigInt(m[3]!.padEnd(6, '0')), message: m[4]! });
  }
  return out;
}

function readKmsg(): { records: KmsgRecord[] } | { error: string } {
  let fd: number;
  try {
    fd = openSync('/dev/kmsg', constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    return { error: `/dev/kmsg: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
  const records: KmsgRecord[] = [];
  const buf = Buffer.alloc(16384);
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') continue; // records were overwritten while reading: go on from the oldest left
        if (code === 'EAGAIN') break;
        return { error: `/dev/kmsg: ${code ?? (e as Error).message}` };
      }
      if (n === 0) break;
      const r = parseKmsgRecord(buf.toString('utf8', 0, n));
      if (r) records.push(r);
    }
  } finally {
    closeSync(fd);
  }
  return { records };
}

function readDmesg(): { records: KmsgRecord[] } | { error: string } {
  const r = spawnSync('dmesg', ['--raw'], { encoding: 'utf8', timeout: 5000, maxBuffer: 64 << 20 });
  if (r.error) return { error: `dmesg: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}` };
  if (r.status !== 0) return { error: `dmesg: ${(r.stderr || `exit ${r.status}`).trim().split('\n')[0]}` };
  return { records: parseDmesgRaw(r.stdout) };
}

function nowUs(): bigint {
  return process.hrtime.bigint() / 1000n;
}

/** Marks the start of a window: where the log can be read from, and how far it goes now. */
export function kmsgMark(): KmsgMark {
  const start_us = nowUs();
  const k = readKmsg();
  if ('records' in k) {
    const last = k.records.reduce<bigint>((m, r) => (r.seq !== null && r.seq > m ? r.seq : m), -1n);
    return { source: 'kmsg', why: null, last_seq: last, start_us };
  }
  const d = readDmesg();
  if ('records' in d) return { source: 'dmesg', why: null, last_seq: null, start_us };
  return { source: null, why: `${k.error}; ${d.error}`, last_seq: null, start_us };
}

function emptyCounts(): Record<KmsgDriver, Record<KmsgSeverity, number>> {
  const out = {} as Record<KmsgDriver, Record<KmsgSeverity, number>>;
  for (const d of KMSG_DRIVERS) {
    out[d] = {} as Record<KmsgSeverity, number>;
    for (const s of KMSG_SEVERITIES) out[d][s] = 0;
  }
  return out;
}

/** Counts the driver lines in records of a window. */
export function countKmsg(records: readonly KmsgRecord[]): Pick<KmsgCounts, 'counts' | 'first_error'> {
  const counts = emptyCounts();
  const first_error: Partial<Record<KmsgDriver, string>> = {};
  for (const r of records) {
    const d = kmsgDriver(r.message);
    if (d === null) continue;
    const s = kmsgSeverity(r.level);
    counts[d][s]++;
    if (s === 'error' && first_error[d] === undefined) first_error[d] = r.message.slice(0, 300);
  }
  return { counts, first_error };
}

/** The driver lines logged since `mark`, counted by driver and severity. */
export function kmsgSince(mark: KmsgMark): KmsgCounts {
  if (mark.source === null) return { source: null, why: mark.why, counts: emptyCounts(), first_error: {}, records_in_window: 0 };
  if (mark.source === 'kmsg') {
    const k = readKmsg();
    if ('error' in k) return { source: null, why: k.error, counts: emptyCounts(), first_error: {}, records_in_window: 0 };
    const inWindow = k.records.filter((r) => r.seq !== null && r.seq > (mark.last_seq ?? -1n));
    return { source: 'kmsg', why: null, ...countKmsg(inWindow), records_in_window: inWindow.length };
  }
  const d = readDmesg();
  if ('error' in d) return { source: null, why: d.error, counts: emptyCounts(), first_error: {}, records_in_window: 0 };
  // dmesg has no sequence numbers: its timestamps against the window's monotonic start (same clock on Linux, to within a second)
  const inWindow = d.records.filter((r) => r.ts_us >= mark.start_us - 1_000_000n);
  return { source: 'dmesg', why: null, ...countKmsg(inWindow), records_in_window: inWindow.length };
}
