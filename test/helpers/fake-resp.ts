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

const bulk = (text: string): string => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/**
 * One reply for a command: PONG, a `loading:0` INFO, OK for handshake, an empty HGETALL (no tenant
 * overrides), the subscribe confirmation for SUBSCRIBE, an error otherwise.
 */
function reply(name: string, args: readonly string[]): string {
  if (name === "PING") return "+PONG\r\n";
  if (name === "HGETALL") return "*0\r\n";
  if (name === "SUBSCRIBE") {
    return args.map((channel, i) => `*3\r\n${bulk("subscribe")}${bulk(channel)}:${i + 1}\r\n`).join("");
  }
  if (name === "INFO") {
    const body = "# Server\r\nredis_version:7.0.0\r\nloading:0\r\n";
    return `$${Buffer.byteLength(body)}\r\n${body}\r\n`;
  }
  if (HANDSHAKE.has(name)) return "+OK\r\n";
  return `-ERR fake-resp does not implement ${name}\r\n`;
}

/** A command as received: its upper-cased name and its arguments. */
export interface FakeCommand {
  readonly name: string;
  readonly args: readonly string[];
}

/** Split complete commands off `buf`; returns their names, the commands and the unconsumed rest. */
export function parseCommands(buf: string): { names: string[]; commands: FakeCommand[]; rest: string } {
  const names: string[] = [];
  const commands: FakeCommand[] = [];
  let pos = 0;
  for (;;) {
    if (pos >= buf.length) break;
    const eol = buf.indexOf("\r\n", pos);
    if (eol < 0) break;
    if (buf[pos] !== "*") {
      const [first = "", ...args] = buf.slice(pos, eol).trim().split(/\s+/);
      names.push(first.toUpperCase());
      commands.push({ name: first.toUpperCase(), args });
      pos = eol + 2;
      continue;
    }
    const count = Number(buf.slice(pos + 1, eol));
    let cur = eol + 2;
    const parts: string[] = [];
    for (let i = 0; i < count; i++) {
      const lenEnd = buf.indexOf("\r\n", cur);
      if (lenEnd < 0) return { names, commands, rest: buf.slice(pos) };
      const len = Number(buf.slice(cur + 1, lenEnd));
      if (buf.length < lenEnd + 2 + len + 2) return { names, commands, rest: buf.slice(pos) };
      parts.push(buf.slice(lenEnd + 2, lenEnd + 2 + len));
      cur = lenEnd + 2 + len + 2;
    }
    const [first = "", ...args] = parts;
    names.push(first.toUpperCase());
    commands.push({ name: first.toUpperCase(), args });
    pos = cur;
  }
  return { names, commands, rest: buf.slice(pos) };
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
      const parsed = parseCommands(pending + chunk.toString("latin1"));
      pending = parsed.rest;
      for (const command of parsed.commands) {
        commands.push(command.name);
        answer(socket, command);
      }
    });
  });
  const answer = (socket: Socket, { name, args }: FakeCommand) => {
    const m = mode;
    if (m.kind === "drop") socket.destroy();
    else if (m.kind === "ping" && (name === "PING" || HANDSHAKE.has(name))) socket.write(reply(name, args));
    else if (m.kind === "slow") {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!socket.destroyed) socket.write(reply(name, args));
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
