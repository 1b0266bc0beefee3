/** Types of bench/options.mjs. */
export const DEFAULT_MODES: readonly string[];
export const ALL_MODES: readonly string[];
export const ALL_SCENARIOS: readonly string[];
export interface BenchOptions {
  readonly smoke: boolean;
  readonly modes: string[];
  readonly scenarios: string[];
  readonly duration: number;
  readonly warmup: number;
  readonly connections: number;
  readonly streams: number;
  /** h2load processes of the 50%-of-peak latency run. */
  readonly halfConnections: number;
  /** Streams per connection of the 50%-of-peak latency run. */
  readonly halfStreams: number;
  readonly rounds: number;
  /** Slices of each row's peak run, each after a raw slice (the row's ceiling). */
  readonly slices: number;
  /** tollgate `--workers` in the Redis modes. */
  readonly workers: number;
  /** Processes of the raw baseline (node:cluster workers sharing its socket). */
  readonly rawWorkers: number;
  /** tollgate's `--grpc-transport` in every tollgate row. */
  readonly grpcTransport: "tollgate" | "node";
  readonly cpuProf: string | undefined;
  readonly json: string | undefined;
}
export function parseOptions(argv: readonly string[]): BenchOptions;
