/**
 * Where storage failures leave the engine and meet the wire. A StoreError that reaches here means the
 * failure policy was `error` (or no guard was configured): answer UNAVAILABLE so Envoy's
 * `failure_mode_deny` decides. Never UNKNOWN — Envoy reads UNKNOWN as OK.
 */
import { StoreError } from "../store/store.js";
import { GrpcError, Status } from "./grpc/status.js";

/** Rethrow `err` as a GrpcError: GrpcError as is, StoreError → UNAVAILABLE, anything else → INTERNAL. */
export function toGrpcError(err: unknown): never {
  if (err instanceof GrpcError) throw err;
  if (err instanceof StoreError)
    throw new GrpcError(Status.UNAVAILABLE, `rate limit store unavailable (${err.code}): ${err.message}`, {
      cause: err,
    });
  throw new GrpcError(
    Status.INTERNAL,
    `internal error: ${err instanceof Error ? err.message : String(err)}`,
    {
      cause: err,
    },
  );
}
