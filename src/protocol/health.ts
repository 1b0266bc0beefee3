/**
 * `grpc.health.v1.Health/Check` over a small mutable state. Services `""` and `"tollgate"` are known;
 * NOT_SERVING before the first config load and while draining.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type HealthCheckRequest,
  HealthCheckRequestSchema,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../gen/grpc/health/v1/health_pb.js";
import type { UnaryMethod } from "./grpc/server.js";
import { GrpcError, Status } from "./grpc/status.js";

/** Whether the server is serving: false before the first config load and while draining. */
export class HealthState {
  private serving = false;
  /** Set by the composition root: true after the first config load, false when draining starts. */
  setServing(serving: boolean): void {
    this.serving = serving;
  }
  /** The current state. */
  isServing(): boolean {
    return this.serving;
  }
}

const KNOWN = new Set(["", "tollgate"]);

/** `grpc.health.v1.Health/Check` over `state`; unknown services are NOT_FOUND. */
export function healthMethod(state: HealthState): UnaryMethod<HealthCheckRequest, HealthCheckResponse> {
  return {
    path: "/grpc.health.v1.Health/Check",
    decode: (bytes) => fromBinary(HealthCheckRequestSchema, bytes),
    encode: (out) => toBinary(HealthCheckResponseSchema, out),
    async handle(req) {
      if (!KNOWN.has(req.service))
        throw new GrpcError(Status.NOT_FOUND, `unknown service ${JSON.stringify(req.service)}`);
      return create(HealthCheckResponseSchema, {
        status: state.isServing()
          ? HealthCheckResponse_ServingStatus.SERVING
          : HealthCheckResponse_ServingStatus.NOT_SERVING,
      });
    },
  };
}
