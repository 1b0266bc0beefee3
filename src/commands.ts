/**
 * The offline CLI commands: `tollgate check [PATH] [serve options]` and `tollgate explain`. They
 * print and return an exit code; nothing here listens or touches a store. Both read the config with
 * the settings `serve` would use (flags, `TOLLGATE_*` and envoyproxy/ratelimit variables) through the
 * one validation path, `loadServingConfig`, so the three commands give one verdict.
 */
import { consoleOut, type Out } from "./cli-out.js";
import { describeRules } from "./config/describe.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import { loadConfig } from "./config/load.js";
import { describeRlqs } from "./config/sections/rlqs.js";
import { describeTiers } from "./config/sections/tiers.js";
import { loadServingConfig } from "./config/serving.js";
import { runExplain as explain } from "./explain.js";
import { commandUsage } from "./help.js";
import { loadSettings, type Settings, SettingsError } from "./settings.js";
import { validationOptionsOf } from "./validation.js";

export { parseDescriptorArg } from "./explain.js";

/**
 * `tollgate check [PATH] [serve options]`: every problem with file:line:column and YAML path (exit 1),
 * or the rules (exit 0). PATH defaults to the `--config` setting.
 */
export async function runCheck(
  args: readonly string[],
  out: Out = consoleOut,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const first = args[0];
  const path = first !== undefined && !first.startsWith("--") ? first : undefined;
  let settings: Settings;
  try {
    settings = loadSettings(path === undefined ? args : args.slice(1), env);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    out.error(`tollgate check: ${err.message}\n${commandUsage("check")}`);
    return 2;
  }
  const target = path ?? settings.config;
  try {
    const config = await loadServingConfig((o) => loadConfig(target, o), validationOptionsOf(settings));
    for (const line of [
      ...describeRules(config.rules),
      ...describeTiers(config.tiers),
      ...describeRlqs(config.rlqs),
    ])
      out.log(line);
    out.error(`${target}: ok (${config.rules.domains.size} domain(s), ${config.rules.files.length} file(s))`);
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) out.error(formatProblem(p));
    out.error(`${target}: ${err.problems.length} problem(s)`);
    return 1;
  }
}

/** `tollgate explain`: see src/explain.ts. */
export function runExplain(
  args: readonly string[],
  out: Out = consoleOut,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  return explain(args, out, env);
}
