/**
 * The help texts of `tollgate help [COMMAND]` and `tollgate COMMAND --help`. `serve`'s flags are
 * rendered from the settings schema (src/settings-schema.ts), so every setting is listed with its
 * environment twin and default; `check` and `explain` take a few arguments of their own, listed here,
 * and serve's options, of which the ones that change a config's verdict (`--config` and
 * src/validation.ts's VALIDATION_SETTINGS) are rendered from the schema too.
 */
import { SETTINGS, type Spec } from "./settings-schema.js";
import { VALIDATION_SETTINGS } from "./validation.js";

/** The commands `tollgate` knows. */
export const COMMANDS = ["serve", "check", "explain"] as const;
export type Command = (typeof COMMANDS)[number];

/** One argument of an offline command: how it is written and what it means. */
interface Arg {
  readonly usage: string;
  readonly doc: string;
}

interface CommandDoc {
  readonly summary: string;
  readonly usage: string;
  readonly args: () => readonly Arg[];
  readonly example: string;
}

const WIDTH = 100;

/** A setting's value as a placeholder: `--store TEXT`, `--drain-timeout DURATION`, `--log-level info|…`. */
function placeholder(s: Spec): string {
  switch (s.kind) {
    case "bool":
      return "[true|false]";
    case "int":
      return "N";
    case "duration":
      return "DURATION";
    case "addr":
      return "HOST:PORT";
    case "enum":
      return (s.values ?? []).join("|");
    case "string":
      return "TEXT";
  }
  return "VALUE";
}

function settingArg(s: Spec): Arg {
  const shown = s.secret ? "(not shown)" : s.default === "" ? '""' : s.default;
  const unit = s.unit ? `, unit ${s.unit}` : "";
  return {
    usage: `${s.flag} ${placeholder(s)}`,
    doc: `${s.doc.replaceAll("`", "")} [env ${s.env}, default ${shown}${unit}]`,
  };
}

/** serve's options that change what `check` and `explain` say about a config. */
const verdictArgs = (): Arg[] =>
  [SETTINGS.config, ...VALIDATION_SETTINGS.map((n) => SETTINGS[n])].map(settingArg);

/** The line after check's and explain's arguments: the rest of serve's options are read too. */
const SERVE_OPTIONS_NOTE =
  "Every other serve flag and TOLLGATE_* variable is accepted as well (tollgate serve --help), and so are " +
  "envoyproxy/ratelimit's variables (docs/migrating.md): check, explain and serve read a config the same way " +
  "and give it the same verdict.";

const DOCS: Readonly<Record<Command, CommandDoc>> = {
  serve: {
    summary: "Serve Envoy's rate limit (RLS v3) and ext_authz gRPC APIs, gRPC health and the HTTP port.",
    usage: "tollgate serve [FLAG VALUE]...",
    args: () => Object.values(SETTINGS).map(settingArg),
    example:
      "tollgate serve --config /etc/tollgate/config --store redis://redis:6379 --grpc-addr 0.0.0.0:8081\n" +
      "  TOLLGATE_STORE=redis-cluster://r1:6379,r2:6379 tollgate serve --config rules/",
  },
  check: {
    summary:
      "Validate a config offline: every problem with file, line, column and YAML path (exit 1), or the rules (exit 0).",
    usage: "tollgate check [PATH] [serve options]",
    args: () => [
      {
        usage: "PATH",
        doc: "Rule file, or a directory of *.yaml/*.yml, as --config takes it. [default: the --config setting]",
      },
      ...verdictArgs(),
    ],
    example: "tollgate check config/ --default-algorithm fixed_window",
  },
  explain: {
    summary:
      "Show which rule each descriptor matches (or how far the match walk got), its limits, algorithm and Redis key, without a store.",
    usage:
      "tollgate explain [--config PATH] --domain D --descriptor k=v[,k2=v2] [--descriptor …] [serve options]",
    args: () => [
      { usage: "--domain D", doc: "The domain Envoy sends (the filter's domain)." },
      {
        usage: "--descriptor k=v[,k2=v2]",
        doc: "The descriptor's entries in order, as Envoy sends them. Repeat it to explain several descriptors.",
      },
      ...verdictArgs(),
    ],
    example:
      "tollgate explain --config config/ --domain edge --descriptor tenant=acme,route_class=read " +
      "--descriptor tenant=globex,route_class=export",
  },
};

/** Words of `text` wrapped to lines of at most WIDTH columns, each starting with `indent`. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const word of text.split(/\s+/)) {
    if (line.length > indent.length && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = indent;
    }
    line += line.length > indent.length ? ` ${word}` : word;
  }
  if (line.length > indent.length) lines.push(line);
  return lines;
}

/** The one-line usage of `command`, as its help and its usage errors print it. */
export function commandUsage(command: Command): string {
  return `usage: ${DOCS[command].usage}`;
}

/** Whether `name` is a command tollgate knows. */
export function isCommand(name: string): name is Command {
  return (COMMANDS as readonly string[]).includes(name);
}

/** The help of one command: summary, usage, every flag or argument, an example. */
export function commandHelp(command: Command): string {
  const doc = DOCS[command];
  const lines = [commandUsage(command), "", ...wrap(doc.summary, ""), "", "arguments:"];
  for (const arg of doc.args()) lines.push(`  ${arg.usage}`, ...wrap(arg.doc, "      "));
  if (command === "serve") {
    lines.push(
      "",
      ...wrap(
        "A flag wins over its TOLLGATE_* variable, which wins over the matching envoyproxy/ratelimit " +
          "variable (REDIS_URL, PORT, RUNTIME_ROOT, ...; docs/migrating.md), which wins over the default.",
        "",
      ),
    );
  } else lines.push("", ...wrap(SERVE_OPTIONS_NOTE, ""));
  lines.push("", "example:", `  ${doc.example}`);
  return lines.join("\n");
}

/** `tollgate help`: the commands and how to get each one's help. */
export function overviewHelp(): string {
  const lines = ["usage: tollgate COMMAND [ARGS]", "", "commands:"];
  for (const c of COMMANDS) lines.push(`  ${c.padEnd(8)} ${DOCS[c].summary}`);
  lines.push(
    "  help     This text; `tollgate help COMMAND` or `tollgate COMMAND --help` for one command.",
    "",
    "flags:",
    "  --version  Print the version and exit.",
    "  --help     Print this text and exit.",
    "",
    "example:",
    `  ${DOCS.serve.example.split("\n")[0] ?? ""}`,
  );
  return lines.join("\n");
}
