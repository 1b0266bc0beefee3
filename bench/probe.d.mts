/** Types of bench/probe.mjs (what the tests use). */
/** Send every frame once; the overall codes seen, rejecting on a gRPC error or an UNKNOWN code. */
export function probe(port: number, frames: readonly Buffer[]): Promise<Record<string, number>>;
