/** Catalog of the provenance module's user-facing messages. */
export const provenanceMessages = {
  notElf: (magicHex: string) => `not an ELF file (first bytes ${magicHex}, expected 7f 45 4c 46)`,
  badClass: (v: number) => `ELF header: unknown class ${v} (expected 1 = ELF32 or 2 = ELF64)`,
  badData: (v: number) => `ELF header: unknown data encoding ${v} (expected 1 = little-endian or 2 = big-endian)`,
  truncated: (what: string, offset: number, length: number, size: number) =>
    `truncated ELF file: ${what} at bytes ${offset}..${offset + length} lies past the end of the file (${size} bytes)`,
  tooLarge: (what: string, value: bigint) => `ELF ${what} ${value} is beyond what this reader addresses (2^53)`,
  badEntSize: (what: string, got: number, want: number) => `ELF header: ${what} entry size ${got}, expected at least ${want}`,
  unmappedAddress: (what: string, vaddr: bigint) =>
    `ELF dynamic section: ${what} address 0x${vaddr.toString(16)} lies in no PT_LOAD segment`,
  badString: (offset: number) => `ELF string table: offset ${offset} lies outside the table`,
  unreadable: (detail: string) => `cannot read the file: ${detail}`,
  emptyMarker: () => 'a marker string must not be empty',
  badCache: (detail: string) => `ld.so cache: ${detail}`,
  notExecutable: () => 'not a dynamically linked ELF executable or shared object (no dynamic section)',
  badPin: (detail: string) => `not a tickwise pin: ${detail}`,
} as const;
