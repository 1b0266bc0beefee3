/**
 * A fake RESP peer on 127.0.0.1 (free port) for failure tests: it accepts connections and then hangs,
 * drops, answers slowly, or answers only the connection handshake and PING. Loopback only; close it
 * with `close()`. It parses just enough RESP (arrays of bulk strings, inline commands) to see commands.
 */
import { createServer, type Server, type Socket } from "node:net";

/**
 * - `hang`: accept, read, never answer anything.
 * - `drop`: close the connection on its first command.
 * - `slow`: answer every command after `ms` milliseconds.
 * - `ping`: answer the handshake (INFO, CLIENT, SELECT, AUTH, HELLO) and PING at once; hang the rest,
 *   like a Redis whose health check passes while scripts never return.
 */
export type FakeRespMode =
  | { readonly kind: "hang" }
  | { readonly kind: "drop" }
  | { readonly kind: "slow"; readonly ms: number }
  | { readonly kind: "ping" };

export interface FakeResp {
  readonly port: number;
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  /** Command names received so far, upper-cased, in order. */
  readonly commands: readonly string[];
  /** Connections accepted so far. */
  readonly connections: number;
  /** Change the behaviour for commands received from now on. */
  setMode(mode: FakeRespMode): void;
  /** Destroy every connection and stop listening. */
  close(): Promise<void>;
}

const HANDSHAKE = new Set(["INFO", "CLIENT", "SELECT", "AUTH", "HELLO", "READONLY"]);

/** One reply for a command: PONG, a `loading:0` INFO, OK for handshake, an error otherwise. */
function reply(name: string): string {
  if (name === "PING") return "+PONG\r\n";
  if (name === "INFO") {
    const body = "# Server\r\nredis_version:7.0.0\r\nloading:0\r\n";
    return `$${Buffer.byteLength(body)}\r\n${body}\r\n`;
  }
  if (HANDSHAKE.has(name)) return "+OK\r\n";
  return `-ERR fake-resp does not implement ${name}\r\n`;
}

/** Split complete commands off `buf`; returns their names and the unconsumed rest. */
export function parseCommands(buf: string): { names: string[]; rest: string } {
  const names: string[] = [];
  let pos = 0;
  for (;;) {
    if (pos >= buf.length) break;
    const eol = buf.indexOf("\r\n", pos);
    if (eol < 0) break;
    if (buf[pos] !== "*") {
      names.push((buf.slice(pos, eol).trim().split(/\s+/)[0] ?? "").toUpperCase());
      pos = eol + 2;
      continue;
    }
    const count = Number(buf.slice(pos + 1, eol));
    let cur = eol + 2;
    const parts: string[] = [];
    for (let i = 0; i < count; i++) {
      const lenEnd = buf.indexOf("\r\n", cur);
      if (lenEnd < 0) return { names, rest: buf.slice(pos) };
      const len = Number(buf.slice(cur + 1, lenEnd));
      if (buf.length < lenEnd + 2 + len + 2) return { names, rest: buf.slice(pos) };
      parts.push(buf.slice(lenEnd + 2, lenEnd + 2 + len));
      cur = lenEnd + 2 + len + 2;
    }
    names.push((parts[0] ?? "").toUpperCase());
    pos = cur;
  }
  return { names, rest: buf.slice(pos) };
}

/** Start a fake RESP peer in `mode`. */
export async function startFakeResp(initial: FakeRespMode): Promise<FakeResp> {
  let mode = initial;
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let pending = "";
    socket.on("data", (chunk) => {
      const { names, rest } = parseCommands(pending + chunk.toString("latin1"));
      pending = rest;
      for (const name of names) {
        commands.push(name);
        answer(socket, name);
      }
    });
  });
  const answer = (socket: Socket, name: string) => {
    const m = mode;
    if (m.kind === "drop") socket.destroy();
    else if (m.kind === "ping" && (name === "PING" || HANDSHAKE.has(name))) socket.write(reply(name));
    else if (m.kind === "slow") {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!socket.destroyed) socket.write(reply(name));
      }, m.ms);
      timers.add(t);
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1" }, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("fake-resp: no TCP address");
  return {
    port: address.port,
    url: `redis://127.0.0.1:${address.port}`,
    commands,
    get connections() {
      return connections;
    },
    setMode(next) {
      mode = next;
    },
    close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
