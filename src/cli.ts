#!/usr/bin/env node
/**
 * `tollgate serve | check | explain | help | --version` — a tiny entry point: parse, then hand over to
 * app.ts, the offline commands or the help texts (src/help.ts).
 */
import { runCheck, runExplain } from "./commands.js";
import { commandHelp, isCommand, overviewHelp } from "./help.js";
import { serve } from "./serve.js";
import { SettingsError } from "./settings.js";
import { VERSION } from "./version.js";

const HELP_FLAGS = new Set(["--help", "-h"]);

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && isCommand(command) && rest.some((a) => HELP_FLAGS.has(a))) {
    console.log(commandHelp(command));
    return 0;
  }
  switch (command) {
    case "serve":
      return serve(rest);
    case "check":
      return runCheck(rest);
    case "explain":
      return runExplain(rest);
    case "--version":
    case "version":
      console.log(`tollgate ${VERSION}`);
      return 0;
    case "help":
    case "--help":
    case "-h": {
      const [topic] = rest;
      if (topic === undefined) console.log(overviewHelp());
      else if (isCommand(topic)) console.log(commandHelp(topic));
      else {
        console.error(`unknown command ${JSON.stringify(topic)}\n\n${overviewHelp()}`);
        return 2;
      }
      return 0;
    }
    default:
      console.error(
        command ? `unknown command ${JSON.stringify(command)}\n\n${overviewHelp()}` : overviewHelp(),
      );
      return 2;
  }
}

/**
 * A serve that failed to start has closed everything it opened, so the process ends by itself; if
 * something was left open anyway, it still ends, after this long and with a line saying so.
 */
const FAILED_START_EXIT_MS = 3_000;

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0 || process.argv[2] !== "serve") process.exitCode = code;
    if (code !== 0 && process.argv[2] === "serve")
      setTimeout(() => {
        console.error(`tollgate: still running ${FAILED_START_EXIT_MS} ms after a failed start; exiting now`);
        process.exit(code);
      }, FAILED_START_EXIT_MS).unref();
  },
  (err: unknown) => {
    console.error(err instanceof SettingsError ? `tollgate: ${err.message}` : err);
    process.exitCode = err instanceof SettingsError ? 2 : 1;
  },
);
