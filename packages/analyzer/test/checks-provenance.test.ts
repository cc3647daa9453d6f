import { describe, expect, it } from 'vitest';
import { runChecks, type PinLike } from '../src/index';
import { addProvenance, importSynth, synthCapture } from './checks-helpers';

const DAY_NS = 86_400_000_000_000n;
const T0 = 1_768_000_000_000_000_000n;

const PIN: PinLike = {
  schema: 'tickwise-pin/1',
  files: [
    { name: 'llama-bench', path: '/opt/llama/bin/llama-bench', size: 1000, build_id: 'e0e0', sha256: 'ab'.repeat(32), markers: {} },
    { name: 'libggml-iree.so', path: '/opt/new/libggml-iree.so', size: 2000, build_id: 'new1', sha256: 'cd'.repeat(32), markers: { kgen_v2: 12 } },
    { name: 'libggml-base.so', path: '/opt/new/libggml-base.so', size: 1000, build_id: 'base', sha256: 'ab'.repeat(32), markers: {} },
  ],
};

describe('stale-library (against a pin)', () => {
  it('trap 4: the RUNPATH copy is an older build: build-id, sha256, size and the marker count differ: an error naming both', async () => {
    const { store } = await importSynth([synthCapture()]);
    try {
      await addProvenance(store, { capture_id: 1, role: 'executable', name: 'llama-bench', path: '/opt/llama/bin/llama-bench', build_id: 'e0e0', how_found: 'given' });
      await addProvenance(store, { capture_id: 1, name: 'libggml-iree.so', path: '/opt/old/libggml-iree.so', size_bytes: 1900, build_id: 'old0', sha256: 'ef'.repeat(32), markers: { kgen_v2: 0 }, how_found: 'runpath', mtime_ns: T0 - 4n * DAY_NS });
      await addProvenance(store, { capture_id: 1, name: 'libggml-base.so', path: '/opt/new/libggml-base.so', build_id: 'base', how_found: 'ld_library_path' });
      const fs = (await runChecks(store, { pin: PIN })).filter((f) => f.code === 'stale-library');
      expect(fs).toHaveLength(1);
      expect(fs[0]).toMatchObject({
        severity: 'error', capture_id: 1, name: 'libggml-iree.so', path: '/opt/old/libggml-iree.so', pinned_path: '/opt/new/libggml-iree.so',
        build_id: 'old0', pinned_build_id: 'new1', size_bytes: 1900, pinned_size_bytes: 2000, how_found: 'runpath', differs: 'build_id,sha256,size,marker:kgen_v2',
      });
      expect(fs[0]!.message).toContain('marker "kgen_v2" occurs 0 times, pinned 12');
      expect(fs[0]!.message).toContain('build-id old0 (2026-01-05T23:06:40Z)');
      // without a pin there is nothing to be stale against
      expect((await runChecks(store)).filter((f) => f.code === 'stale-library')).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a pinned library that was not recorded, and a pinned marker that was not counted: warnings', async () => {
    const { store } = await importSynth([synthCapture()]);
    try {
      await addProvenance(store, { capture_id: 1, role: 'executable', name: 'llama-bench', path: '/opt/llama/bin/llama-bench', build_id: 'e0e0', how_found: 'given' });
      await addProvenance(store, { capture_id: 1, name: 'libggml-iree.so', path: '/opt/new/libggml-iree.so', size_bytes: 2000, build_id: 'new1', sha256: 'cd'.repeat(32), how_found: 'ld_library_path' });
      const fs = (await runChecks(store, { pin: PIN })).filter((f) => f.code === 'stale-library');
      expect(fs.map((f) => [f.severity, f['name'], f['marker'] ?? null])).toEqual([
        ['warning', 'libggml-iree.so', 'kgen_v2'],
        ['warning', 'libggml-base.so', null],
      ]);
      expect(fs[0]!.advice).toContain('--marker "kgen_v2"');
    } finally {
      await store.close();
    }
  });

  it('a matching capture: nothing; no provenance at all: no-provenance (a warning with a pin, info without)', async () => {
    const { store } = await importSynth([synthCapture(), synthCapture()]);
    try {
      await addProvenance(store, { capture_id: 1, role: 'executable', name: 'llama-bench', path: '/opt/llama/bin/llama-bench', build_id: 'e0e0', how_found: 'given' });
      await addProvenance(store, { capture_id: 1, name: 'libggml-iree.so', path: '/opt/new/libggml-iree.so', size_bytes: 2000, build_id: 'new1', sha256: 'cd'.repeat(32), markers: { kgen_v2: 12 }, how_found: 'ld_library_path' });
      await addProvenance(store, { capture_id: 1, name: 'libggml-base.so', path: '/opt/new/libggml-base.so', build_id: 'base', how_found: 'ld_library_path' });
      const fs = await runChecks(store, { pin: PIN });
      expect(fs.filter((f) => f.code === 'stale-library' || f.code === 'mixed-builds')).toEqual([]);
      expect(fs.filter((f) => f.code === 'no-provenance')).toMatchObject([{ severity: 'warning', capture_id: 2 }]);
      expect((await runChecks(store)).filter((f) => f.code === 'no-provenance')).toMatchObject([{ severity: 'info', capture_id: 2 }]);
    } finally {
      await store.close();
    }
  });
});

describe('mixed-builds', () => {
  it('trap 4 without a pin: LD_LIBRARY_PATH held one library, RUNPATH gave the other, 4 days older', async () => {
    const { store } = await importSynth([synthCapture()]);
    try {
      await addProvenance(store, { capture_id: 1, name: 'libggml-base.so', path: '/home/u/build-new/lib/libggml-base.so', build_id: 'b1', how_found: 'ld_library_path', mtime_ns: T0 });
      await addProvenance(store, { capture_id: 1, name: 'libggml-iree.so', path: '/home/u/build-old/lib/libggml-iree.so', build_id: 'i0', how_found: 'runpath', mtime_ns: T0 - 4n * DAY_NS });
      await addProvenance(store, { capture_id: 1, name: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6', build_id: 'c', how_found: 'cache', mtime_ns: T0 - 400n * DAY_NS });
      const fs = (await runChecks(store)).filter((f) => f.code === 'mixed-builds');
      expect(fs).toMatchObject([{ severity: 'warning', capture_id: 1, folders: 2, libraries: 2, mtime_spread_ns: 4n * DAY_NS }]);
      expect(fs[0]!.message).toContain('modification times 4.0 days apart');
      expect(fs[0]!.message).toContain('libggml-iree.so from /home/u/build-old/lib/libggml-iree.so (runpath,');
    } finally {
      await store.close();
    }
  });

  it('two captures of one store that loaded different builds of one library', async () => {
    const { store } = await importSynth([synthCapture(), synthCapture()]);
    try {
      await addProvenance(store, { capture_id: 1, name: 'libggml-iree.so', path: '/opt/a/libggml-iree.so', build_id: 'aaaa', how_found: 'runpath' });
      await addProvenance(store, { capture_id: 2, name: 'libggml-iree.so', path: '/opt/a/libggml-iree.so', build_id: 'bbbb', how_found: 'runpath' });
      const fs = (await runChecks(store)).filter((f) => f.code === 'mixed-builds');
      expect(fs).toMatchObject([{ severity: 'warning', capture_id: null, name: 'libggml-iree.so', builds: 2 }]);
      expect(fs[0]!.message).toBe('captures loaded different builds of libggml-iree.so: aaaa in capture 1; bbbb in capture 2');
    } finally {
      await store.close();
    }
  });
});
