import { describe, expect, it } from 'vitest';
import { escapeHtml, jsonForScript, showControls } from '../src/html/escape';

describe('invisible controls in capture text are shown escaped (issue 17)', () => {
  it('bidi overrides and isolates, marks, U+2028/2029 and C0 controls become visible escapes', () => {
    expect(showControls('gemm\u202Etxt.exe')).toBe('gemm\\u202Etxt.exe');
    expect(showControls('a\u2066b\u2069c\u200Fd\u061Ce')).toBe('a\\u2066b\\u2069c\\u200Fd\\u061Ce');
    expect(showControls('line\u2028sep\u2029x\u0000y\u001bz')).toBe('line\\u2028sep\\u2029x\\u0000y\\u001Bz');
    expect(showControls('tab\tand\nnewline stay, ünïcödé and 漢字 too')).toBe('tab\tand\nnewline stay, ünïcödé and 漢字 too');
  });

  it('in HTML text and in the chart data alike', () => {
    expect(escapeHtml('<b>\u202E</b>')).toBe('&lt;b&gt;\\u202E&lt;/b&gt;');
    const json = jsonForScript({ kernels: [{ name: 'k\u2028\u202Ename', n: 1 }], 'key\u202E': 'v' });
    expect(json).not.toMatch(/[\u2028\u202E]/);
    expect(JSON.parse(json)).toEqual({ kernels: [{ name: 'k\\u2028\\u202Ename', n: 1 }], 'key\\u202E': 'v' });
  });
});
