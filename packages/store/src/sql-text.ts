/** A single-quoted SQL string literal (the one quoting of strings spliced into SQL text). */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** A double-quoted SQL identifier. */
export function sqlIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}
