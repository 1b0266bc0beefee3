/**
 * The HTTP side door (default :8080): `/healthcheck`, `POST /json`, `/rlconfig`, `/metrics`, and the
 * routes other parts register (quota API). It knows nothing of rate limiting: it routes to handlers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What a route handler answers. */
export interface HttpReply {
  readonly status: number;
  readonly body: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingMessage["headers"];
  /** The body as text (already bounded by `maxBodyBytes`). */
  readonly body: string;
  /** The peer's address (for audit lines). */
  readonly remoteAddress?: string;
}

export type Route = (req: HttpRequest) => Promise<HttpReply> | HttpReply;

export interface HttpServerOptions {
  /**
   * `"GET /path"` → handler. A key ending in `/*` (`"PUT /v1/tenants/*"`) matches one more path
   * segment of any value, when no exact key does.
   */
  readonly routes: ReadonlyMap<string, Route>;
  /** Larger bodies get 413. @default 4 MiB */
  readonly maxBodyBytes?: number;
  /** Called with unexpected handler errors (they answer 500). */
  readonly onError?: (err: unknown) => void;
}

export interface HttpServer {
  listen(host: string, port: number): Promise<AddressInfo>;
  close(): Promise<void>;
}

const text = (status: number, body: string): HttpReply => ({
  status,
  body: `${body}\n`,
  contentType: "text/plain",
});

/** An oversized body is read and dropped up to this many times the limit before the socket is cut. */
const DRAIN_FACTOR = 4;

export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      opts.onError?.(err);
      if (!res.headersSent) send(res, text(500, "internal error"));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const method = req.method ?? "GET";
    const wildcard = `${url.pathname.slice(0, url.pathname.lastIndexOf("/") + 1)}*`;
    const route = opts.routes.get(`${method} ${url.pathname}`) ?? opts.routes.get(`${method} ${wildcard}`);
    if (!route) {
      const known = [...opts.routes.keys()].some(
        (k) => k.endsWith(` ${url.pathname}`) || k.endsWith(` ${wildcard}`),
      );
      send(
        res,
        known ? text(405, `method ${method} not allowed on ${url.pathname}`) : text(404, "not found"),
      );
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBody) {
        // Answer only once the client has finished sending: a reset while it is still
        // writing loses the 413 (the client sees ECONNRESET, not the reason). The rest
        // of the body is read and dropped, up to a bound past which the socket is cut.
        if (size > maxBody * DRAIN_FACTOR) {
          req.destroy();
          return;
        }
        chunks.length = 0;
        continue;
      }
      chunks.push(chunk as Buffer);
    }
    if (size > maxBody) {
      send(res, {
        ...text(413, `request body larger than ${maxBody} bytes`),
        headers: { connection: "close" },
      });
      return;
    }
    const reply = await route({
      method,
      url,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
      ...(req.socket.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress }),
    });
    send(res, reply);
  }

  return {
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

function send(res: ServerResponse, reply: HttpReply): void {
  res.writeHead(reply.status, {
    "content-type": reply.contentType ?? "text/plain",
    "content-length": Buffer.byteLength(reply.body),
    ...reply.headers,
  });
  res.end(reply.body);
}

export { text as textReply };
