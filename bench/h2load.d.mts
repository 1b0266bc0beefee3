/** Types of the pure helpers of bench/h2load.mjs used by tests. */
export function haveH2load(): Promise<boolean>;
export function parseH2loadOutput(text: string): {
  done: number;
  succeeded: number;
  failed: number;
  seconds: number;
};
export function quantile(sorted: ArrayLike<number>, q: number): number;
