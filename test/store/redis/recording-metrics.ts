import type { EngineMetrics } from "../../../src/engine/metrics-port.js";

export interface RecordingMetrics extends EngineMetrics {
  roundTrips: number;
  readonly errors: string[];
  readonly seconds: { operation: string; seconds: number }[];
}

/** An EngineMetrics that records what the store reports. */
export function recordingMetrics(): RecordingMetrics {
  const m: RecordingMetrics = {
    roundTrips: 0,
    errors: [],
    seconds: [],
    decision() {},
    decisionSeconds() {},
    storeSeconds(operation: string, seconds: number) {
      m.seconds.push({ operation, seconds });
    },
    storeError(kind: string) {
      m.errors.push(kind);
    },
    storeRoundTrips(count: number) {
      m.roundTrips += count;
    },
  };
  return m;
}
