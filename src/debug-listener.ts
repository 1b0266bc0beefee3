/**
 * The debug listener (`--debug-addr`, envoyproxy/ratelimit's `DEBUG_PORT`, 6070 there): a second
 * HTTP port with the read-only routes of the main one, `/rlconfig`, `/healthcheck` and `/metrics`,
 * so that scripts and probes aimed at the reference's debug port keep working.
 */
import type { AddressInfo } from "node:net";
import { createHttpServer, type Route } from "./protocol/http.js";
import { parseAddr } from "./settings.js";
import { listenOrClose } from "./startup.js";

/** The routes the debug port serves. */
export const DEBUG_ROUTES = ["GET /rlconfig", "GET /healthcheck", "GET /metrics"] as const;

/** A started debug listener. */
export interface DebugListener {
  readonly address: AddressInfo;
  close(): Promise<void>;
}

/**
 * Start the debug listener on `addr` (`HOST:PORT`) with the debug routes of `routes`; none when `addr`
 * is empty. When the address cannot be bound, the server is closed before the error is rethrown.
 */
export async function startDebugListener(opts: {
  readonly addr: string;
  readonly routes: ReadonlyMap<string, Route>;
  readonly onError: (err: unknown) => void;
}): Promise<DebugListener | undefined> {
  if (opts.addr === "") return undefined;
  const { host, port } = parseAddr(opts.addr, "--debug-addr");
  const routes = new Map<string, Route>();
  for (const key of DEBUG_ROUTES) {
    const route = opts.routes.get(key);
    if (route !== undefined) routes.set(key, route);
  }
  const server = createHttpServer({ routes, maxBodyBytes: 1024, onError: opts.onError });
  const address = await listenOrClose(server, { host, port });
  return { address, close: () => server.close() };
}
