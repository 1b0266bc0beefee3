/** Types of bench/profile-top.mjs. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}
export function summarise(profile: CpuProfile): {
  busyUs: number;
  areas: [string, number][];
  functions: [string, string, number][];
};
