/** How the CLI passes `-` (stdin) through its argument parser. */
export const STDIN_ARG = '/dev/stdin';
