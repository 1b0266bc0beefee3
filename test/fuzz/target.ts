/**
 * The server the fuzz suite attacks: the gRPC transport with ShouldRateLimit over a real Engine and
 * MemoryStore, and grpc.health.v1, on 127.0.0.1 port 0, with the production default message bound.
 */
import { parseConfigText } from "../../src/config/load.js";
import { Engine } from "../../src/engine/decide.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import { DEFAULT_BOUNDS } from "../../src/protocol/codec.js";
import { createGrpcServer, type GrpcServer } from "../../src/protocol/grpc/server.js";
import { HealthState, healthMethod } from "../../src/protocol/health.js";
import { rlsMethod } from "../../src/protocol/rls.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";

/** The `--max-message-bytes` default. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Short, so connections a fuzz input leaves half-open are closed within the test. */
export const IDLE_TIMEOUT_MS = 500;

const CONFIG = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: 1000000 }
`;

export interface Target {
  readonly server: GrpcServer;
  readonly port: number;
  /** Errors the server reported to `onError` (handler bugs, peer session/stream errors). */
  readonly errors: { readonly where: string; readonly err: unknown }[];
}

export async function startTarget(): Promise<Target> {
  const clock = new FakeClock();
  const { ruleSet } = parseConfigText("edge.yaml", CONFIG);
  const engine = new Engine({
    rules: () => ruleSet,
    store: new MemoryStore({ clock, maxBuckets: 1000 }),
    clock,
    metrics: noopMetrics,
  });
  const health = new HealthState();
  health.setServing(true);
  const errors: Target["errors"] = [];
  const server = createGrpcServer({
    methods: [rlsMethod((q) => engine.shouldRateLimit(q), DEFAULT_BOUNDS), healthMethod(health)],
    maxMessageBytes: MAX_MESSAGE_BYTES,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    onError: (err, where) => errors.push({ where, err }),
  });
  const { port } = await server.listen("127.0.0.1", 0);
  return { server, port, errors };
}
