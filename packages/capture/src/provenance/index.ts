/**
 * Provenance of binaries: an ELF reader, file facts (size, mtime, build-id,
 * sha256, marker counts), a resolver of shared libraries that follows
 * glibc's ld.so, and pins that say which files a run is expected to load.
 */
export * from './errors';
export * from './messages';
export * from './elf';
export * from './file-facts';
export * from './ld-cache';
export * from './resolve-libs';
export * from './pin';
export * from './provenance-of';
export * from './loader-check';
