/**
 * The byte layout of the native recorder's records.twr, as the reader uses it.
 *
 * The source of truth is `native/include/tickwise/format.h`; `native/tools/tw_layout.cpp`
 * prints its offsetof/sizeof/type per field as `native/layout.json` (the ctest
 * `format.layout` fails when format.h and layout.json differ), and
 * `test/recorder-layout.test.ts` fails when this table or native/FORMAT.md
 * differs from layout.json. Every field but `reserved*`/`pad` is listed, each
 * under the struct's own name, so a decoded record is typed by its kind:
 * a misspelled field is a compile error, not a silent `0n`.
 */

/** A field's type as layout.json names it. */
export type FieldType = 'u8' | 'u16' | 'u32' | 'i32' | 'u64' | 'i64' | 'char[8]' | 'char[40]';
type Fields = Readonly<Record<string, readonly [offset: number, type: FieldType]>>;

/** The amdxdna header (format.h TW_XDNA_HEADER_FIELDS), bytes 0..31 of kinds 16..24. */
const XDNA_HEADER = {
  kind: [0, 'u16'], aux: [2, 'u16'], tid: [4, 'u32'], host_enter_ns: [8, 'u64'], host_exit_ns: [16, 'u64'], fd: [24, 'i32'], result: [28, 'i32'],
} as const;
/** XdnaSyncobjWait (kinds 20 and 24): the header with `index` (the pair's) at offset 2. */
const XDNA_WAIT_FIELDS = {
  kind: [0, 'u16'], index: [2, 'u16'], tid: [4, 'u32'], host_enter_ns: [8, 'u64'], host_exit_ns: [16, 'u64'], fd: [24, 'i32'], result: [28, 'i32'],
  syncobj: [32, 'u32'], flags: [36, 'u32'], point: [40, 'u64'], timeout_abs_ns: [48, 'i64'], count_handles: [56, 'u32'], first_signaled: [60, 'u32'],
} as const;
/** CudaKernel, CudaMemcpy, CudaMemset: bytes 0..39. */
const CUDA_ACTIVITY = {
  kind: [0, 'u16'], time_domain: [2, 'u16'], tid: [4, 'u32'], start: [8, 'u64'], end: [16, 'u64'],
  correlation_id: [24, 'u32'], device_id: [28, 'u32'], stream_id: [32, 'u32'], context_id: [36, 'u32'],
} as const;

/** The non-record structs of records.twr. */
export const TWR_STRUCTS = {
  FileHeader: {
    magic: [0, 'char[8]'], format_version: [8, 'u32'], record_size: [12, 'u32'], header_size: [16, 'u32'], pid: [20, 'u32'],
    host_start_ns: [24, 'u64'], boottime_minus_monotonic_ns: [32, 'i64'], parent_pid: [40, 'u32'], flags: [44, 'u32'],
    header_crc32: [60, 'u32'],
  },
  ChunkHeader: {
    magic: [0, 'u32'], type: [4, 'u16'], header_size: [6, 'u16'], payload_bytes: [8, 'u32'], item_count: [12, 'u32'], seq: [16, 'u64'],
    payload_crc32: [24, 'u32'], header_crc32: [28, 'u32'],
  },
  StringEntry: { key: [0, 'u64'], key_kind: [8, 'u32'], byte_len: [12, 'u32'] },
} as const satisfies Record<string, Fields>;

/** Sizes and magic numbers (format.h). */
export const TWR = {
  file_magic: 'TWRECv1\0', chunk_magic: 0x4b435754, format_version: 1, file_header_bytes: 64, chunk_header_bytes: 32,
  string_entry_bytes: 16, record_bytes: 64, chunk_records: 1, chunk_strings: 2,
} as const;

/** Every record kind: its id, its struct in format.h, its fields by offset and type. */
export const RECORD_LAYOUT = {
  hip_launch: {
    kind: 1, struct: 'HipLaunch', fields: {
      kind: [0, 'u16'], api: [2, 'u16'], tid: [4, 'u32'], host_enter_ns: [8, 'u64'], host_exit_ns: [16, 'u64'], launch_id: [24, 'u64'],
      function: [32, 'u64'], stream: [40, 'u64'], result: [48, 'i32'], grid_blocks: [52, 'u32'], block_threads: [56, 'u32'],
      shared_mem_bytes: [60, 'u32'],
    },
  },
  hip_sync: {
    kind: 2, struct: 'HipSync', fields: {
      kind: [0, 'u16'], api: [2, 'u16'], tid: [4, 'u32'], host_enter_ns: [8, 'u64'], host_exit_ns: [16, 'u64'], stream: [24, 'u64'], result: [32, 'i32'],
    },
  },
  hip_dispatch: {
    kind: 3, struct: 'HipDispatch', fields: {
      kind: [0, 'u16'], time_domain: [2, 'u16'], tid: [4, 'u32'], start: [8, 'u64'], end: [16, 'u64'], correlation_external: [24, 'u64'],
      dispatch_id: [32, 'u64'], agent_handle: [40, 'u64'], queue_handle: [48, 'u64'], kernel_id: [56, 'u64'],
    },
  },
  xdna_device: {
    kind: 16, struct: 'XdnaDevice',
    fields: { ...XDNA_HEADER, version_major: [32, 'u32'], version_minor: [36, 'u32'], version_patch: [40, 'u32'] },
  },
  xdna_hwctx_create: {
    kind: 17, struct: 'XdnaHwctxCreate', fields: {
      ...XDNA_HEADER, hwctx: [32, 'u32'], syncobj: [36, 'u32'], max_opc: [40, 'u32'], num_tiles: [44, 'u32'], mem_size: [48, 'u32'],
      request_size: [52, 'u32'],
    },
  },
  xdna_hwctx_destroy: { kind: 18, struct: 'XdnaHwctxDestroy', fields: { ...XDNA_HEADER, hwctx: [32, 'u32'] } },
  xdna_exec_cmd: {
    kind: 19, struct: 'XdnaExecCmd', fields: {
      ...XDNA_HEADER, hwctx: [32, 'u32'], type: [36, 'u32'], seq: [40, 'u64'], cmd_count: [48, 'u32'], arg_count: [52, 'u32'],
      first_cmd_handle: [56, 'u32'], request_size: [60, 'u32'],
    },
  },
  xdna_syncobj_timeline_wait: { kind: 20, struct: 'XdnaSyncobjWait', fields: XDNA_WAIT_FIELDS },
  xdna_wait_cmd: { kind: 21, struct: 'XdnaWaitCmd', fields: { ...XDNA_HEADER, hwctx: [32, 'u32'], timeout_ms: [36, 'u32'], seq: [40, 'u64'] } },
  xdna_sync_bo: {
    kind: 22, struct: 'XdnaSyncBo',
    fields: { ...XDNA_HEADER, bo: [32, 'u32'], direction: [36, 'u32'], offset: [40, 'u64'], size: [48, 'u64'] },
  },
  xdna_unknown_ioctl: {
    kind: 23, struct: 'XdnaUnknownIoctl',
    fields: { ...XDNA_HEADER, request: [32, 'u32'], nr: [36, 'u32'], size: [40, 'u32'], dir: [44, 'u32'] },
  },
  xdna_syncobj_wait: { kind: 24, struct: 'XdnaSyncobjWait', fields: XDNA_WAIT_FIELDS },
  clock_sample: {
    kind: 32, struct: 'ClockSample', fields: {
      kind: [0, 'u16'], domain: [2, 'u16'], tid: [4, 'u32'], host_before_ns: [8, 'u64'], host_after_ns: [16, 'u64'], device_value: [24, 'u64'],
      tries: [32, 'u32'], reason: [36, 'u32'], sample_seq: [40, 'u64'],
    },
  },
  thread_stats: {
    kind: 33, struct: 'ThreadStats', fields: {
      kind: [0, 'u16'], flags: [2, 'u16'], tid: [4, 'u32'], host_ns: [8, 'u64'], pushed_total: [16, 'u64'], dropped_total: [24, 'u64'],
      ring_records: [32, 'u64'],
    },
  },
  cuda_kernel: {
    kind: 48, struct: 'CudaKernel', fields: {
      ...CUDA_ACTIVITY, name_key: [40, 'u64'], grid_blocks: [48, 'u32'], block_threads: [52, 'u32'], shared_mem_bytes: [56, 'u32'],
      registers_per_thread: [60, 'u16'], flags: [62, 'u16'],
    },
  },
  cuda_memcpy: {
    kind: 49, struct: 'CudaMemcpy', fields: {
      ...CUDA_ACTIVITY, bytes: [40, 'u64'], runtime_correlation_id: [48, 'u32'], copy_kind: [52, 'u8'], src_kind: [53, 'u8'],
      dst_kind: [54, 'u8'], cupti_flags: [55, 'u8'],
    },
  },
  cuda_memset: {
    kind: 50, struct: 'CudaMemset', fields: {
      ...CUDA_ACTIVITY, bytes: [40, 'u64'], value: [48, 'u32'], memory_kind: [52, 'u16'], cupti_flags: [54, 'u16'],
    },
  },
  cuda_api: {
    kind: 51, struct: 'CudaApi', fields: {
      kind: [0, 'u16'], api_class: [2, 'u16'], tid: [4, 'u32'], host_enter_ns: [8, 'u64'], host_exit_ns: [16, 'u64'], correlation_id: [24, 'u32'],
      cbid: [28, 'u32'], domain: [32, 'u32'], result: [36, 'i32'], stream: [40, 'u64'], flags: [48, 'u16'], time_domain: [50, 'u16'],
    },
  },
  cuda_name: {
    kind: 52, struct: 'CudaName', fields: {
      kind: [0, 'u16'], name_kind: [2, 'u16'], tid: [4, 'u32'], key: [8, 'u64'], total_len: [16, 'u32'], offset: [20, 'u32'], text: [24, 'char[40]'],
    },
  },
} as const satisfies Record<string, { kind: number; struct: string; fields: Fields }>;

/** A record kind's name (`hip_launch`, ...). */
export type RecorderKindName = keyof typeof RECORD_LAYOUT;
type FieldsOf<K extends RecorderKindName> = (typeof RECORD_LAYOUT)[K]['fields'];
type ValueOf<T> = T extends 'u64' | 'i64' ? bigint : number;

/** A decoded record of kind K: every numeric field by its format.h name; 64-bit fields bigint, others number. */
export type RecordOf<K extends RecorderKindName> = {
  readonly [F in keyof FieldsOf<K> as FieldsOf<K>[F] extends readonly [number, `char${string}`] ? never : F]: ValueOf<
    FieldsOf<K>[F] extends readonly [number, infer T] ? T : never
  >;
};

/** Record kind ids by name (format.h `Kind`). */
export const RecorderKind = Object.fromEntries(Object.entries(RECORD_LAYOUT).map(([k, v]) => [k, v.kind])) as {
  readonly [K in RecorderKindName]: (typeof RECORD_LAYOUT)[K]['kind'];
};

/** Kind names by id. */
export const RECORDER_KIND_NAME: ReadonlyMap<number, RecorderKindName> = new Map(
  Object.entries(RECORD_LAYOUT).map(([k, v]) => [v.kind, k as RecorderKindName]),
);

type Decoder = (dv: DataView, at: number) => Record<string, bigint | number>;

/** DataView reads of each field type, as source text for {@link makeDecoder} (`o`: the field's byte). */
const READ_TEXT: Readonly<Record<FieldType, (o: string) => string>> = {
  u8: (o) => `dv.getUint8(${o})`,
  u16: (o) => `dv.getUint16(${o}, true)`,
  u32: (o) => `dv.getUint32(${o}, true)`,
  i32: (o) => `dv.getInt32(${o}, true)`,
  u64: (o) => `dv.getBigUint64(${o}, true)`,
  i64: (o) => `dv.getBigInt64(${o}, true)`,
  'char[8]': () => '0',
  'char[40]': () => '0',
};

/**
 * A decoder of one struct: a function made from the layout that returns one
 * object literal (every record of a kind the same shape, its fields read in
 * place), not an object filled key by key (a dictionary per record: the
 * recorder import's mapping and its GC were half its time).
 */
function makeDecoder(fields: Fields): Decoder {
  const list = Object.entries(fields).filter(([, [, t]]) => !t.startsWith('char'));
  for (const [n, [o]] of list) if (!/^[a-z_][a-z0-9_]*$/.test(n) || !Number.isInteger(o)) throw new Error(`internal: record field ${n} at ${o}`);
  const body = list.map(([n, [o, t]]) => `${n}: ${READ_TEXT[t](`at + ${o}`)}`).join(', ');
  return new Function('dv', 'at', `return { ${body} };`) as Decoder;
}

const DECODERS = new Map<RecorderKindName, Decoder>(
  Object.entries(RECORD_LAYOUT).map(([k, v]) => [k as RecorderKindName, makeDecoder(v.fields as Fields)]),
);

/** Decodes the record of kind `kind` at byte `at` of `dv` (its kind is not checked). */
export function decodeRecord<K extends RecorderKindName>(dv: DataView, at: number, kind: K): RecordOf<K> {
  return DECODERS.get(kind)!(dv, at) as RecordOf<K>;
}

/** Decodes the fields of one of the non-record structs at byte `at`. */
export function decodeStruct<S extends keyof typeof TWR_STRUCTS>(dv: DataView, at: number, struct: S): Record<keyof (typeof TWR_STRUCTS)[S], bigint | number> {
  return makeDecoder(TWR_STRUCTS[struct])(dv, at) as Record<keyof (typeof TWR_STRUCTS)[S], bigint | number>;
}
