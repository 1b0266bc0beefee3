/**
 * The deadlines of one connection (limits.ts: `handshakeTimeoutMs`, `requestTimeoutMs`), checked by one
 * interval timer a few times per deadline rather than a timer per stream: a tick counter, and the tick at
 * which each thing started (`startedAt` for the handshake, `blockTick`, `stallTick`, a stream's
 * `openedTick`, -1 for a long-lived streaming stream once its call took a first message).
 */
import { CANCEL, ENHANCE_YOUR_CALM, H2Error, SETTINGS_TIMEOUT } from "./frames.js";
import { connectionError, type H2State } from "./state.js";
import type { H2Stream } from "./stream.js";
import { destroy, reset } from "./streams.js";

/**
 * One tick: the preface and first SETTINGS, a started header block, requests still arriving (reset),
 * and a socket that does not drain (a peer that stopped reading while we have output for it).
 */
export function onTick(c: H2State): void {
  if (c.dead) return;
  const tick = ++c.tick;
  const limits = c.limits;
  const late = tick - c.requestTicks;
  try {
    if (!c.settingsSeen) {
      if (Date.now() - c.startedAt >= limits.handshakeTimeoutMs)
        throw new H2Error(
          SETTINGS_TIMEOUT,
          `no client preface and SETTINGS in ${limits.handshakeTimeoutMs} ms`,
        );
      return;
    }
    if (c.blockStream !== 0 && c.blockTick < late)
      throw new H2Error(ENHANCE_YOUR_CALM, `header block not finished in ${limits.requestTimeoutMs} ms`);
    if (c.socket.writableNeedDrain) {
      if (c.stallTick < 0) c.stallTick = tick;
      else if (c.stallTick < late)
        throw new H2Error(ENHANCE_YOUR_CALM, `output not read for ${limits.requestTimeoutMs} ms`);
    }
  } catch (err) {
    connectionError(c, err);
    // A peer that does not read would not read the GOAWAY either.
    destroy(c);
    return;
  }
  // Requests that did not finish arriving in time (streams are in the order they opened).
  const expired: H2Stream[] = [];
  for (const s of c.streams.values()) {
    if (s.openedTick >= late) break;
    if (!s.remoteEnded && s.openedTick >= 0) expired.push(s); // -1: a long-lived stream
  }
  for (const s of expired) if (!s.isClosed && !c.dead) reset(c, s, CANCEL);
}
