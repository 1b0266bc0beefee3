/**
 * `envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas`: one RlqsSession
 * per stream. Reports of one stream are handled one after the other (a report's board round trips
 * finish before the next report is read), each answered with one response carrying every action it
 * produced (none: nothing is sent). Bad input ends the stream INVALID_ARGUMENT with the reason; the
 * client half-closing ends it OK. Stream close reasons for metrics: `ok` (the client half-closed),
 * `invalid_argument`, `internal`, `closed` (the client cancelled, the connection went, or a drain).
 */
import {
  type RlqsAction,
  RlqsInputError,
  type RlqsReport,
  RlqsSession,
  type RlqsSessionOptions,
} from "../../engine/rlqs/session.js";
import { GrpcError, Status } from "../grpc/status.js";
import type { StreamMethod } from "../grpc/stream-call.js";
import { decodeReport, encodeResponse } from "./codec.js";

export const RLQS_PATH = "/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas";

/** Stream accounting (TollgateMetrics.rlqs implements it). */
export interface RlqsStreamEvents {
  rlqsStreamOpened(): void;
  rlqsStreamClosed(reason: "ok" | "invalid_argument" | "internal" | "closed"): void;
}

/** Options of {@link rlqsMethod}. */
export interface RlqsMethodOptions extends Omit<RlqsSessionOptions, "participant"> {
  /** This instance's id (unique across instances). */
  readonly instanceId: string;
  readonly streamEvents?: RlqsStreamEvents;
  readonly onError?: (err: unknown, where: string) => void;
}

/** The RLQS bidirectional-streaming method. */
export function rlqsMethod(opts: RlqsMethodOptions): StreamMethod<RlqsReport, RlqsAction[]> {
  let streams = 0;
  const { instanceId, streamEvents, onError, ...sessionOptions } = opts;
  return {
    path: RLQS_PATH,
    decode: decodeReport,
    encode: encodeResponse,
    open(ctx) {
      const session = new RlqsSession({ ...sessionOptions, participant: `${instanceId}/${++streams}` });
      let chain = Promise.resolve();
      let reason: "ok" | "invalid_argument" | "internal" | "closed" = "closed";
      const end = (code: (typeof Status)[keyof typeof Status], message?: string) => {
        if (ctx.ended) return;
        reason =
          code === Status.OK ? "ok" : code === Status.INVALID_ARGUMENT ? "invalid_argument" : "internal";
        ctx.end(code, message);
      };
      streamEvents?.rlqsStreamOpened();
      return {
        message(report) {
          chain = chain.then(async () => {
            if (ctx.ended) return;
            try {
              const actions = await session.report(report);
              if (actions.length > 0) ctx.send(actions);
            } catch (err) {
              if (err instanceof RlqsInputError) end(Status.INVALID_ARGUMENT, err.message);
              else if (err instanceof GrpcError) end(err.code, err.message);
              else {
                onError?.(err, "rlqs");
                end(Status.INTERNAL, `internal error: ${err instanceof Error ? err.message : String(err)}`);
              }
            }
          });
        },
        halfClosed() {
          chain = chain.then(() => end(Status.OK));
        },
        closed() {
          streamEvents?.rlqsStreamClosed(reason);
          void session.close();
        },
      };
    },
  };
}
