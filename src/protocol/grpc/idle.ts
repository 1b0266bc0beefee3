/** Closing idle gRPC connections, whichever transport carries them. */
import type { Connection } from "./transport.js";

/**
 * Closes connections idle for `idleTimeoutMs`: no new stream and no request data in that time. A sweep
 * every quarter of the timeout compares each connection's activity count with the one it saw last, so
 * a connection is closed between 1 and 1.25 timeouts after its last traffic. (Node's own session
 * timeout re-arms a timer on every frame of every stream, a per-request cost for a timer that fires
 * once every few minutes at most: docs/decisions/grpc-server.md, "Idle connections".) An idle
 * connection gets GOAWAY first and is destroyed one timeout later if it has not closed by then (a
 * peer that stalled inside a frame never finishes closing).
 */
export function idleSweeper(connections: ReadonlySet<Connection>, idleTimeoutMs: number): NodeJS.Timeout {
  const sweep = () => {
    const now = performance.now();
    for (const c of connections) {
      const count = c.activity();
      const seen = c.seen;
      if (seen === undefined || seen.count !== count) c.seen = { count, at: now };
      else if (now - seen.at >= idleTimeoutMs) {
        seen.at = Number.POSITIVE_INFINITY; // once
        closeIdle(c, idleTimeoutMs);
      }
    }
  };
  const timer = setInterval(sweep, Math.max(1, idleTimeoutMs / 4));
  timer.unref();
  return timer;
}

function closeIdle(c: Connection, idleTimeoutMs: number): void {
  if (c.closed) {
    c.destroy();
    return;
  }
  c.close();
  const timer = setTimeout(() => c.destroy(), idleTimeoutMs);
  timer.unref();
  c.onClose(() => clearTimeout(timer));
}
