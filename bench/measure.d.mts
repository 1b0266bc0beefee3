/** Types of bench/measure.mjs (what the tests use). */
/** `pid` and its descendants, from /proc. */
export function processTree(pid: number): number[];
