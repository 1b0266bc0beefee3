/**
 * `envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas`: one RlqsSession
 * per stream. Reports of one stream are handled one after the other (a report's board round trips
 * finish before the next report is read), each answered with one response carrying every action it
 * produced (none: nothing is sent); the instance's rebalancer (engine/rlqs/rebalancer.ts) sends
 * moved shares between reports, in the same order. Bad input ends the stream INVALID_ARGUMENT with
 * the reason; the client half-closing ends it OK; so does a stream with no report for its idle
 * time (Envoy opens a new one at its next report). Stream close reasons for metrics: `ok` (the
 * client half-closed), `idle`, `invalid_argument`, `internal`, `slow_reader` (the transport ended
 * it RESOURCE_EXHAUSTED: responses left unread past `--grpc-max-stream-unread-bytes`), `closed`
 * (the client cancelled, the connection went, or a drain).
 */
import type { RlqsAction, RlqsReport } from "../../engine/rlqs/messages.js";
import { RlqsInputError } from "../../engine/rlqs/messages.js";
import { Rebalancer } from "../../engine/rlqs/rebalancer.js";
import { RlqsSession, type RlqsSessionOptions } from "../../engine/rlqs/session.js";
import type { TimerHandle, Timers } from "../../engine/types.js";
import { GrpcError, Status } from "../grpc/status.js";
import type { StreamMethod } from "../grpc/stream-call.js";
import { decodeReport, encodeResponse } from "./codec.js";

export const RLQS_PATH = "/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas";

/** Reporting intervals without a report after which a stream is idle (when no idle time is set). */
export const STREAM_IDLE_INTERVALS = 5;

/**
 * Why a stream ended: its own OK end or the client's half-close (`ok`), the idle timer, bad input,
 * an internal error, the client not reading its responses past `--grpc-max-stream-unread-bytes`
 * (`slow_reader`: the transport refused a send), or the client/connection going away (`closed`).
 */
export type RlqsCloseReason = "ok" | "idle" | "invalid_argument" | "internal" | "slow_reader" | "closed";

/** Stream accounting (TollgateMetrics.rlqs implements it). */
export interface RlqsStreamEvents {
  rlqsStreamOpened(): void;
  rlqsStreamClosed(reason: RlqsCloseReason): void;
}

/** Options of {@link rlqsMethod}. */
export interface RlqsMethodOptions extends Omit<RlqsSessionOptions, "participant"> {
  /** This instance's id (unique across instances). */
  readonly instanceId: string;
  /** Idle timers and the rebalancer's ticks. */
  readonly timers: Timers;
  /**
   * A stream with no report for this long is ended OK, ms; 0: {@link STREAM_IDLE_INTERVALS}
   * reporting intervals of its domain (before its first report: of the longest configured one).
   * @default 0
   */
  readonly streamIdleMs?: number;
  readonly streamEvents?: RlqsStreamEvents;
  readonly onError?: (err: unknown, where: string) => void;
}

/** The RLQS bidirectional-streaming method. */
export function rlqsMethod(opts: RlqsMethodOptions): StreamMethod<RlqsReport, RlqsAction[]> {
  let streams = 0;
  const { instanceId, streamEvents, onError, timers, streamIdleMs, ...sessionOptions } = opts;
  const rebalancer = new Rebalancer({ timers, clock: opts.clock });
  const idleMsOf = (session: RlqsSession): number => {
    if (streamIdleMs !== undefined && streamIdleMs > 0) return streamIdleMs;
    let interval = session.reportingIntervalMs;
    if (interval === undefined)
      for (const d of opts.config().rlqs.values()) interval = Math.max(interval ?? 0, d.reportingIntervalMs);
    return STREAM_IDLE_INTERVALS * (interval ?? 1000);
  };
  return {
    path: RLQS_PATH,
    decode: decodeReport,
    encode: encodeResponse,
    open(ctx) {
      const session = new RlqsSession({ ...sessionOptions, participant: `${instanceId}/${++streams}` });
      let chain = Promise.resolve();
      let reason: RlqsCloseReason = "closed";
      let idle: TimerHandle | undefined;
      let sending = false;
      // A call that ends inside a send was ended by the transport: RESOURCE_EXHAUSTED when the client
      // is not reading its responses (an encoding failure ends it INTERNAL, a failed write closes it).
      const send = (actions: RlqsAction[]) => {
        sending = true;
        try {
          ctx.send(actions);
        } finally {
          sending = false;
        }
      };
      const end = (code: (typeof Status)[keyof typeof Status], message?: string, why?: RlqsCloseReason) => {
        if (ctx.ended) return;
        reason =
          why ??
          (code === Status.OK ? "ok" : code === Status.INVALID_ARGUMENT ? "invalid_argument" : "internal");
        ctx.end(code, message);
      };
      const failed = (err: unknown) => {
        if (err instanceof RlqsInputError) end(Status.INVALID_ARGUMENT, err.message);
        else if (err instanceof GrpcError) end(err.code, err.message);
        else {
          onError?.(err, "rlqs");
          end(Status.INTERNAL, `internal error: ${err instanceof Error ? err.message : String(err)}`);
        }
      };
      const armIdle = () => {
        if (idle !== undefined) timers.clear(idle);
        const ms = idleMsOf(session);
        idle = timers.set(() => {
          chain = chain.then(() => end(Status.OK, `no usage report for ${ms} ms`, "idle"));
        }, ms);
      };
      const member = {
        get unsettled() {
          return !ctx.ended && session.unsettled;
        },
        get reportingIntervalMs() {
          return session.reportingIntervalMs;
        },
        rebalance(reads: Parameters<RlqsSession["rebalance"]>[0]): Promise<void> {
          chain = chain.then(async () => {
            if (ctx.ended) return;
            try {
              const actions = await session.rebalance(reads);
              if (actions.length > 0) send(actions);
            } catch (err) {
              failed(err);
            }
          });
          return chain;
        },
      };
      streamEvents?.rlqsStreamOpened();
      rebalancer.add(member);
      armIdle();
      return {
        message(report) {
          armIdle();
          chain = chain.then(async () => {
            if (ctx.ended) return;
            try {
              const actions = await session.report(report);
              if (actions.length > 0) send(actions);
              rebalancer.wake(member);
            } catch (err) {
              failed(err);
            }
          });
        },
        halfClosed() {
          chain = chain.then(() => end(Status.OK));
        },
        closed() {
          if (sending)
            reason =
              ctx.endCode === Status.RESOURCE_EXHAUSTED
                ? "slow_reader"
                : ctx.endCode === undefined
                  ? "closed"
                  : "internal";
          if (idle !== undefined) timers.clear(idle);
          rebalancer.delete(member);
          streamEvents?.rlqsStreamClosed(reason);
          void session.close();
        },
      };
    },
  };
}
