/**
 * Structured logs: pino JSON on stdout, pretty when a person asks (`--log-format pretty`, or `auto`
 * on a TTY). No per-request logs at `info`; state transitions, reloads and errors are logged once
 * with context. `pino-pretty` is an optional dependency, loaded only for pretty logs: the JSON path
 * (every deployment) never imports it.
 */
import { type DestinationStream, type Logger, pino } from "pino";
import { SettingsError } from "./settings-error.js";

export type { Logger };

export interface LoggerOptions {
  /** pino level. @default "info" */
  readonly level: string;
  /**
   * Pretty, human-readable lines (`true`: asked for, an error if `pino-pretty` is missing). Unset:
   * pretty when stdout is a TTY and `pino-pretty` is installed, JSON otherwise.
   */
  readonly pretty?: boolean;
}

/** The pretty stream factory of `pino-pretty` (the part of its API used here). */
type PrettyFactory = (opts: { colorize: boolean; sync: boolean }) => DestinationStream;

/** Loads `pino-pretty` (its factory is also a named export); a parameter so a test can stand in for a missing package. */
export type PrettyLoader = () => Promise<{ PinoPretty: PrettyFactory }>;

const loadPretty: PrettyLoader = () => import("pino-pretty");

/**
 * The logger for `opts`. Throws {@link SettingsError} when pretty logs were asked for and
 * `pino-pretty` cannot be loaded (it is an optional dependency: `npm ci --omit=optional` leaves it out).
 */
export async function createLogger(opts: LoggerOptions, load: PrettyLoader = loadPretty): Promise<Logger> {
  const base = { level: opts.level, base: { service: "tollgate" } };
  const asked = opts.pretty === true;
  if (!(opts.pretty ?? process.stdout.isTTY)) return pino(base);
  let pretty: PrettyFactory;
  try {
    pretty = (await load()).PinoPretty;
  } catch (err) {
    if (!asked) return pino(base);
    const reason = err instanceof Error ? err.message : String(err);
    throw new SettingsError(
      `--log-format pretty needs the optional package pino-pretty, which could not be loaded (${reason}): install it (npm install pino-pretty) or use --log-format json`,
    );
  }
  return pino(base, pretty({ colorize: true, sync: true }));
}

/** Logger options of the settings (`--log-level`, `--log-format`). */
export function loggerOptionsOf(s: { readonly logLevel: string; readonly logFormat: string }): LoggerOptions {
  return s.logFormat === "auto"
    ? { level: s.logLevel }
    : { level: s.logLevel, pretty: s.logFormat === "pretty" };
}
