/** A pino logger that records every line it writes, parsed, for tests that assert on logs. */
import { Writable } from "node:stream";
import { type Logger, pino } from "pino";

export function recordLogs(level: string): { logs: Record<string, unknown>[]; logger: Logger } {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line !== "") logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logs, logger: pino({ level }, sink) };
}
