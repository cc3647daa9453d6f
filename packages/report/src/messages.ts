/** Catalog of the report package's user-facing messages (each a function). */
export const reportMessages = {
  outputExists: (path: string) => `${path} exists and is not empty (give --force to overwrite it)`,
  cannotWrite: (path: string, why: string) => `cannot write ${path}: ${why}`,
  noDispatches: () => 'the store holds no timed dispatch (nothing to draw or export)',
  negativeDurations: (n: number) =>
    `${n} dispatch row(s) end before they start; left out of the export (see the diagnostics table of the store)`,
  notebookUnclosedFence: () => 'code fence opened here is never closed (add a line with ``` after the cell)',
  notebookDuplicateName: (name: string, firstLine: number) => `cell name "${name}" is already used by the cell at line ${firstLine}`,
  notebookReservedName: (name: string) => `cell name "${name}" is a table of the store; choose another (its temp table would hide the store's)`,
  notebookBadCellOption: (text: string) =>
    `cannot read cell options "${text}" (write name=NAME on a sql cell, data=NAME on a vega-lite cell)`,
  notebookUnknownData: (name: string, known: readonly string[]) =>
    `vega-lite cell draws data=${name}, but no sql cell above it is named ${name}` +
    (known.length ? ` (named so far: ${known.join(', ')})` : ' (name one: ```sql name=' + name + ')'),
  notebookNoData: () => 'vega-lite cell names no data (write ```vega-lite data=NAME, NAME a sql cell above it)',
  notebookBadSpec: (why: string) => `vega-lite cell is not a JSON object: ${why}`,
  notebookBadVegaLite: (why: string) => `vega-lite cell does not compile: ${why}`,
  notebookSqlFailed: (why: string) => `sql cell failed: ${why}`,
  notebookUnreadable: (why: string) => `cannot read the notebook: ${why}`,
  vendorMissing: (what: string, where: string) => `cannot find ${what} to inline (looked in ${where}); run scripts/setup`,
} as const;
