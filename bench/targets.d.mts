/** Types of bench/targets.mjs (what the tests use). */
export const SEMI_SPACE: string;

export interface BaselineTarget {
  readonly name: string;
  readonly pid: number;
  readonly grpcPort: number;
  stop(): Promise<void>;
}
export function startBaseline(
  name: string,
  script: string,
  nodeArgs?: readonly string[],
  scriptArgs?: readonly string[],
): Promise<BaselineTarget>;
