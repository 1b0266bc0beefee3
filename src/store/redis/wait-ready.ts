/**
 * Wait until an ioredis client (single node, Sentinel or Cluster) is connected and ready, starting the
 * connection if it was created lazily. With the offline queue off, commands sent before this fail.
 */
import type { Cluster, Redis } from "ioredis";

/** Resolve once `client.status` is "ready"; reject with the last connection error after `timeoutMs`. */
export function waitUntilReady(client: Redis | Cluster, timeoutMs: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lastError: unknown;
    const onError = (err: unknown) => {
      lastError = err;
    };
    const onReady = () => {
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      cleanup();
      const why = lastError instanceof Error ? `: ${lastError.message}` : "";
      reject(
        new Error(`Redis not ready after ${timeoutMs} ms (connection ${client.status}${why})`, {
          cause: lastError,
        }),
      );
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      client.off("ready", onReady);
      client.off("error", onError);
    };
    client.on("ready", onReady);
    client.on("error", onError);
    // Lazily created clients start in "wait"; later calls find it connecting or reconnecting already.
    if (client.status === "wait") client.connect().catch(onError);
  });
}
