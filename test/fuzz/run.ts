/**
 * Runs fuzz cases against a port and reports every answer that is not the expected one. Calls go out
 * in small concurrent batches on one shared connection (reopened if the server cut it); cases that
 * may cut the connection get one of their own.
 */
import type { ClientHttp2Session } from "node:http2";
import { Status } from "../../src/protocol/grpc/status.js";
import { type RawReply, rawCall, rawSession } from "../protocol/grpc/raw-client.js";
import type { Expected, FuzzCase } from "./cases.js";

/** Why `reply` (or the call's rejection) does not meet `expected`, or undefined when it does. */
export function mismatch(expected: Expected, reply: RawReply | Error): string | undefined {
  if ("reset" in expected) {
    if (reply instanceof Error && expected.reset.test(reply.message)) return undefined;
    return `expected a stream reset ${expected.reset}, got ${describe(reply)}`;
  }
  if (reply instanceof Error) return `call failed: ${reply.message}`;
  if ("http" in expected) {
    const ok = Number(reply.headers[":status"]) === expected.http && reply.grpcStatus === undefined;
    return ok ? undefined : `expected HTTP ${expected.http}, got ${describe(reply)}`;
  }
  const status = reply.grpcStatus;
  if (status === undefined || status === Status.UNKNOWN || !expected.grpc.includes(status))
    return `expected grpc-status in [${expected.grpc}], got ${describe(reply)}`;
  if (status === Status.OK) return undefined;
  const message = decodeURIComponent(reply.grpcMessage ?? "");
  if (message === "") return `grpc-status ${status} without a message`;
  if (expected.message && !expected.message.test(message))
    return `message ${JSON.stringify(message)} does not match ${expected.message}`;
  return undefined;
}

function describe(reply: RawReply | Error): string {
  if (reply instanceof Error) return `error ${reply.message}`;
  return `HTTP ${reply.headers[":status"]} grpc-status ${reply.grpcStatus} ${JSON.stringify(reply.grpcMessage)}`;
}

const settle = (p: Promise<RawReply>): Promise<RawReply | Error> =>
  p.catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));

/** Runs cases against one port, keeping a shared connection open between batches. */
export class FuzzRunner {
  private shared: ClientHttp2Session | undefined;

  constructor(private readonly port: number) {}

  /** Run `cases` (`batch` at a time); returns one line per mismatch. */
  async run(cases: readonly FuzzCase[], batch = 16): Promise<string[]> {
    const problems: string[] = [];
    // A connection idle since the last run may be meeting the server's idle timeout right now (a
    // stream sent as its GOAWAY crosses is refused): start each run on a fresh one.
    this.close();
    for (let i = 0; i < cases.length; i += batch) {
      const slice = cases.slice(i, i + batch);
      const session = await this.session();
      const replies = await Promise.all(slice.map((c) => this.one(session, c)));
      slice.forEach((c, j) => {
        const why = mismatch(c.expected, replies[j] ?? new Error("no reply"));
        if (why) problems.push(`#${i + j} ${c.family}: ${why}`);
      });
    }
    return problems;
  }

  close(): void {
    this.shared?.destroy();
    this.shared = undefined;
  }

  private async one(shared: ClientHttp2Session, c: FuzzCase): Promise<RawReply | Error> {
    if (!c.ownSession) return settle(rawCall(shared, c.call));
    const own = await rawSession(this.port);
    own.on("error", () => {});
    try {
      return await settle(rawCall(own, c.call));
    } finally {
      own.destroy();
    }
  }

  private async session(): Promise<ClientHttp2Session> {
    if (this.shared && !this.shared.closed && !this.shared.destroyed) return this.shared;
    this.shared?.destroy();
    const s = await rawSession(this.port);
    s.on("error", () => {});
    // The server closes idle connections with GOAWAY: open a new one for the next batch.
    s.once("goaway", () => {
      if (this.shared === s) this.shared = undefined;
    });
    this.shared = s;
    return s;
  }
}
