import { decodeRecord, RECORD_LAYOUT, RECORDER_KIND_NAME, RecorderKind, type RecorderKindName } from './recorder-layout';
import { argsFields, argsText, deviceRow, span, type ArgsFields, type ProcessContext, type RecorderRows, FLUSH_EVERY } from './recorder-map';

/**
 * The amdxdna backend's records (kinds 16-24) as rows: every recorded ioctl
 * is a `host_events` row (`npu_<op>`, queue = its hardware context), and
 * every successful EXEC_CMD a `dispatches` row on the NPU device spanning
 * from its submission (the ioctl's entry) to the exit of the wait that
 * covered its seq: an upper bound of the command's execution, both bounds
 * exact host times (`time_source = 'host_monotonic'`). NPU commands have no
 * device time; the NPU is one `npu` row `amdxdna`.
 */

/** NPU device number in the canonical tables (GPUs are 0..15 by HIP ordinal). */
export const RECORDER_NPU_DEVICE = 100;

const XDNA_KINDS = (Object.keys(RECORD_LAYOUT) as RecorderKindName[]).filter((k) => k.startsWith('xdna_'));
const ARGS = new Map<number, ArgsFields>(XDNA_KINDS.map((k) => [RECORD_LAYOUT[k].kind, argsFields(k, (n) => n.startsWith('host_'))]));

/** The amdxdna mapper of one capture. */
export class AmdxdnaMapper {
  private seen = false;

  /** True for a kind this mapper reads. */
  static handles(kind: number): boolean {
    return ARGS.has(kind);
  }

  /** Maps the amdxdna records of one process. */
  async mapProcess(ctx: ProcessContext): Promise<void> {
    const { p, pid, capture_id, rows } = ctx;
    const dv = p.view;
    const syncobjToHwctx = new Map<string, number>(); // `${fd}:${syncobj}` -> hwctx
    const hwctxToSyncobj = new Map<string, number>(); // `${fd}:${hwctx}` -> syncobj
    const waitsBySyncobj = new Map<string, bigint>(); // `${fd}:${syncobj}:${point}` -> wait exit
    const waitsByHwctx = new Map<string, bigint>(); // `${fd}:${hwctx}:${seq}` -> WAIT_CMD exit
    const execs: { at: number; enter: bigint }[] = [];
    const pidArg = `"pid":${pid}`;
    for (let i = 0; i < p.record_count; i++) {
      if (i % FLUSH_EVERY === FLUSH_EVERY - 1) await ctx.flushIfFull();
      const kind = p.kinds[i]!;
      const args = ARGS.get(kind);
      if (!args) continue;
      this.seen = true;
      const at = p.offsets[i]!;
      const name = RECORDER_KIND_NAME.get(kind)!;
      const h = decodeRecord(dv, at, 'xdna_device'); // the shared header (format.h TW_XDNA_HEADER_FIELDS)
      let queue: number | null = null;
      let seq: bigint | null = null;
      let extra = pidArg;
      switch (kind) {
        case RecorderKind.xdna_hwctx_create: {
          const r = decodeRecord(dv, at, 'xdna_hwctx_create');
          syncobjToHwctx.set(`${h.fd}:${r.syncobj}`, r.hwctx);
          hwctxToSyncobj.set(`${h.fd}:${r.hwctx}`, r.syncobj);
          queue = r.hwctx;
          break;
        }
        case RecorderKind.xdna_hwctx_destroy:
          queue = decodeRecord(dv, at, 'xdna_hwctx_destroy').hwctx;
          break;
        case RecorderKind.xdna_exec_cmd: {
          const r = decodeRecord(dv, at, 'xdna_exec_cmd');
          queue = r.hwctx;
          seq = r.seq;
          if (r.result === 0) execs.push({ at, enter: r.host_enter_ns });
          break;
        }
        case RecorderKind.xdna_wait_cmd: {
          const r = decodeRecord(dv, at, 'xdna_wait_cmd');
          queue = r.hwctx;
          seq = r.seq;
          if (r.result === 0) waitsByHwctx.set(`${h.fd}:${r.hwctx}:${r.seq}`, r.host_exit_ns);
          break;
        }
        case RecorderKind.xdna_syncobj_timeline_wait:
        case RecorderKind.xdna_syncobj_wait: {
          const r = decodeRecord(dv, at, 'xdna_syncobj_timeline_wait');
          queue = syncobjToHwctx.get(`${h.fd}:${r.syncobj}`) ?? null;
          if (kind === RecorderKind.xdna_syncobj_timeline_wait) {
            if (r.result === 0) waitsBySyncobj.set(`${h.fd}:${r.syncobj}:${r.point}`, r.host_exit_ns);
            extra += `,"pair_index":${r.index}`;
          }
          break;
        }
        case RecorderKind.xdna_unknown_ioctl: {
          const r = decodeRecord(dv, at, 'xdna_unknown_ioctl');
          ctx.diag('info', 'recorder-unknown-ioctl', `pid ${pid}: amdxdna request nr 0x${r.nr.toString(16)} size ${r.size} not in the known table`, ctx.file);
          break;
        }
      }
      const dur = span(ctx, 'amdxdna ioctl', h.host_enter_ns, h.host_exit_ns);
      rows.host_events.push({
        capture_id, device: RECORDER_NPU_DEVICE, queue, kind: name.replace(/^xdna_/, 'npu_'), op: name, name: null,
        event_id: null, submission_id: seq, command_buffer_id: null, command_index: null,
        thread_id: BigInt(h.tid), start_ns: h.host_enter_ns, end_ns: h.host_exit_ns, dur_ns: dur, time_source: 'host_monotonic',
        valid: h.result >= 0 && dur !== null, args: argsText(dv, at, args, extra), line: null,
      });
    }

    // NPU commands: in flight from submission to the completion the host saw.
    execs.sort((a, b) => (a.enter < b.enter ? -1 : 1));
    let unobserved = 0;
    for (const { at } of execs) {
      const e = decodeRecord(dv, at, 'xdna_exec_cmd');
      const syncobj = hwctxToSyncobj.get(`${e.fd}:${e.hwctx}`);
      const seen = waitsByHwctx.get(`${e.fd}:${e.hwctx}:${e.seq}`) ?? (syncobj !== undefined ? waitsBySyncobj.get(`${e.fd}:${syncobj}:${e.seq}`) : undefined) ?? null;
      const start = e.host_enter_ns;
      if (seen === null) unobserved++;
      const dur = seen === null ? null : span(ctx, 'NPU command', start, seen);
      const qk = `npu:${pid}:${e.fd}:${e.hwctx}`;
      if (!ctx.queueIndex.has(qk)) ctx.queueIndex.set(qk, ctx.queueIndex.size);
      rows.dispatches.push({
        capture_id, device: RECORDER_NPU_DEVICE, queue: ctx.queueIndex.get(qk)!, submission_id: e.seq, command_buffer_id: null,
        command_index: null, event_id: e.seq, executable_id: null, function_ordinal: null, kernel: null,
        start_ns: start, end_ns: seen, dur_ns: dur, start_tick: null, end_tick: null,
        source_dur_ns: null, time_source: 'host_monotonic', valid: dur !== null,
        workgroup_count_x: null, workgroup_count_y: null, workgroup_count_z: null, rows: null, line: null,
      });
    }
    if (unobserved) ctx.diag('warning', 'recorder-npu-unobserved', `pid ${pid}: ${unobserved} NPU command(s) with no observed completion (no wait covered their seq)`, ctx.file);
  }

  /** The `npu` row, when any amdxdna record was read. */
  devices(capture_id: number, rows: RecorderRows): void {
    if (this.seen) rows.devices.push(deviceRow(capture_id, RECORDER_NPU_DEVICE, 'npu', 'amdxdna', null, null, 0));
  }
}
