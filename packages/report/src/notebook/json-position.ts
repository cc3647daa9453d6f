/**
 * Where a JSON text first goes wrong, as a character offset: JSON.parse's
 * messages name a position only for some errors (Node 20 says `Unexpected
 * token 'o', ..."ncoding": oops` with none), and a notebook error must name
 * its line. A strict recursive-descent scan of RFC 8259 JSON.
 */
export function jsonErrorOffset(text: string): number | null {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++; };
  const fail = (): never => { throw i; };
  const lit = (word: string) => { if (text.startsWith(word, i)) i += word.length; else fail(); };
  const str = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') { if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail(); i += 5; }
        else if ('"\\/bfnrt'.includes(text[i] ?? '')) i++;
        else fail();
      } else i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const num = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; ws();
      if (text[i] === '}') { i++; return; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        str(); ws();
        if (text[i] !== ':') fail();
        i++;
        value(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return; }
        fail();
      }
    } else if (c === '[') {
      i++; ws();
      if (text[i] === ']') { i++; return; }
      for (;;) {
        value(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return; }
        fail();
      }
    } else if (c === '"') str();
    else if (c === 't') lit('true');
    else if (c === 'f') lit('false');
    else if (c === 'n') lit('null');
    else num();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return null;
  } catch (at) {
    if (typeof at === 'number') return at;
    throw at;
  }
}

/** The 1-based line of an offset. */
export function lineOfOffset(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
