#!/usr/bin/env node
/**
 * `tollgate serve | check | explain` — a tiny entry point: parse, then hand over to app.ts or the
 * offline commands.
 */
import { runCheck, runExplain } from "./commands.js";
import { serve } from "./serve.js";
import { SettingsError } from "./settings.js";

const USAGE = `usage:
  tollgate serve [--config PATH] [--store memory|URL] [--grpc-addr H:P] [--http-addr H:P] [...]
  tollgate check PATH
  tollgate explain --config PATH --domain D --descriptor k=v[,k2=v2]

Every serve option has a TOLLGATE_* environment twin; see the README settings table.`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return serve(rest);
    case "check":
      return runCheck(rest);
    case "explain":
      return runExplain(rest);
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return 0;
    default:
      console.error(command ? `unknown command ${JSON.stringify(command)}\n\n${USAGE}` : USAGE);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0 || process.argv[2] !== "serve") process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof SettingsError ? `tollgate: ${err.message}` : err);
    process.exitCode = err instanceof SettingsError ? 2 : 1;
  },
);
