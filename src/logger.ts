/**
 * Structured logs: pino JSON on stdout, pretty when stdout is a TTY. No per-request logs at `info`;
 * state transitions, reloads and errors are logged once with context.
 */
import { type Logger, pino } from "pino";
import pretty from "pino-pretty";

export type { Logger };

export interface LoggerOptions {
  /** pino level. @default "info" */
  readonly level: string;
  /** Pretty, human-readable lines. @default process.stdout.isTTY */
  readonly pretty?: boolean;
}

export function createLogger(opts: LoggerOptions): Logger {
  const base = { level: opts.level, base: { service: "tollgate" } };
  if (opts.pretty ?? process.stdout.isTTY) return pino(base, pretty({ colorize: true, sync: true }));
  return pino(base);
}

/** Logger options of the settings (`--log-level`, `--log-format`). */
export function loggerOptionsOf(s: { readonly logLevel: string; readonly logFormat: string }): LoggerOptions {
  return s.logFormat === "auto"
    ? { level: s.logLevel }
    : { level: s.logLevel, pretty: s.logFormat === "pretty" };
}
