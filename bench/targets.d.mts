/** Types of bench/targets.mjs (what the tests use). */
export const SEMI_SPACE: string;
