/**
 * Alert tests on what tollgate really exports: scrape a running tollgate's `/metrics` once per step
 * (each step stands for one minute of Prometheus time, or `stepMinutes`, so a 10-minute `for:` takes
 * 10 scrapes, not 10 minutes), keep the series the alert rules read with the target labels Prometheus would add
 * (`job`, `instance`, and `up`: 1 for a scrape that worked, 0 for one that failed), and hand them to
 * `promtool test rules` with the shipped envoy/prometheus/alerts.yaml, asserting which alerts fire at
 * which step. A series missing from a scrape is a missing sample (`_`), as in Prometheus.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { asArray, asObject, at, repo, yamlFile } from "../examples/files.js";
import { metricNames } from "../examples/promql.js";

const run = promisify(execFile);
export const RULES = join(repo, "envoy/prometheus/alerts.yaml");
/** The labels Prometheus adds to every scraped series (compose's job and target). */
export const TARGET = Object.freeze({ job: "tollgate", instance: "tollgate:8080" });

interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly values: (number | undefined)[];
}

/** Parse `name{a="b",…} value` lines of the Prometheus text format (comments skipped). */
export function parseExposition(
  text: string,
): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)/.exec(line);
    if (m === null) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] ?? ""] = (l[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    out.push({ name: m[1] ?? "", labels, value: Number(m[4]) });
  }
  return out;
}

/** The metric names the shipped alert rules read (and `up`). */
export async function namesAlertsRead(): Promise<Set<string>> {
  const rules = asArray(at(await yamlFile("envoy/prometheus/alerts.yaml"), "groups", 0, "rules"), "rules");
  return new Set(rules.flatMap((r) => [...metricNames(String(at(r, "expr")))]));
}

/** Records one tollgate target's series, one scrape per step. */
export class ScrapeRecorder {
  readonly #names: ReadonlySet<string>;
  readonly #series = new Map<string, Series>();
  readonly #marks = new Map<string, number>();
  #steps = 0;
  /** Prometheus minutes one step stands for. */
  readonly stepMinutes: number;

  constructor(names: ReadonlySet<string>, options: { readonly stepMinutes?: number } = {}) {
    this.#names = names;
    this.stepMinutes = options.stepMinutes ?? 1;
  }

  /** Steps recorded so far (the next scrape is step `steps`, at `steps` minutes). */
  get steps(): number {
    return this.#steps;
  }

  /** Remember the current step under `name` (a phase boundary). */
  mark(name: string): void {
    this.#marks.set(name, this.#steps);
  }

  /** The step marked `name`. */
  at(name: string): number {
    const step = this.#marks.get(name);
    if (step === undefined) throw new Error(`no mark ${name}`);
    return step;
  }

  /** Scrape `url` as one step; a failed scrape records `up` 0 and no samples. */
  async scrape(url: string): Promise<void> {
    let text: string | undefined;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      if (res.ok) text = await res.text();
    } catch {
      text = undefined;
    }
    this.#record("up", {}, text === undefined ? 0 : 1);
    for (const s of text === undefined ? [] : parseExposition(text))
      if (this.#names.has(s.name)) this.#record(s.name, s.labels, s.value);
    this.#steps++;
  }

  /** One step in which the target is not even discovered: no `up`, no samples. */
  gone(): void {
    this.#steps++;
  }

  /** promtool `input_series`: every series with the target labels, `_` where a step had no sample. */
  inputSeries(): { series: string; values: string }[] {
    return [...this.#series.values()].map((s) => {
      const labels = Object.entries({ ...s.labels, ...TARGET })
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(",");
      const values = Array.from({ length: this.#steps }, (_, i) => {
        const v = s.values[i];
        return v === undefined ? "_" : String(v);
      });
      return { series: `${s.name}{${labels}}`, values: values.join(" ") };
    });
  }

  #record(name: string, labels: Record<string, string>, value: number): void {
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    let s = this.#series.get(key);
    if (s === undefined) {
      s = { name, labels, values: [] };
      this.#series.set(key, s);
    }
    s.values[this.#steps] = value;
  }
}

/** One expectation: at step `step`, `alert` fires once per label set of `firing` (none: it is quiet). */
export interface AlertAt {
  readonly alert: string;
  readonly step: number;
  readonly firing: readonly Readonly<Record<string, string>>[];
}

/** Fill `{{ $labels.x }}` the way Prometheus renders these annotations (nothing else is used). */
function render(template: string, labels: Readonly<Record<string, string>>): string {
  const out = template.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_, k: string) => labels[k] ?? "");
  if (out.includes("{{")) throw new Error(`template syntax the test cannot render: ${template}`);
  return out;
}

/**
 * Run `promtool test rules` over the recording with one `alert_rule_test` per expectation; the
 * expected labels are `firing`'s plus the rule's own, annotations as the rule renders them. Throws
 * with promtool's report when any expectation fails.
 */
export async function expectAlerts(rec: ScrapeRecorder, expectations: readonly AlertAt[]): Promise<void> {
  const rules = asArray(
    at(await yamlFile("envoy/prometheus/alerts.yaml"), "groups", 0, "rules"),
    "rules",
  ).map((r) => asObject(r, "rule"));
  const tests = expectations.map((e) => {
    const rule = rules.find((r) => r.alert === e.alert);
    if (rule === undefined) throw new Error(`no alert ${e.alert} in alerts.yaml`);
    const ruleLabels = asObject(at(rule, "labels"), "labels") as Record<string, string>;
    const annotations = asObject(at(rule, "annotations"), "annotations") as Record<string, string>;
    return {
      eval_time: `${e.step * rec.stepMinutes}m`,
      alertname: e.alert,
      exp_alerts: e.firing.map((labels) => {
        const all = { ...labels, ...ruleLabels };
        return {
          exp_labels: all,
          exp_annotations: Object.fromEntries(
            Object.entries(annotations).map(([k, v]) => [k, render(v, all)]),
          ),
        };
      }),
    };
  });
  const dir = await mkdtemp(join(tmpdir(), "tollgate-alerts-"));
  try {
    const file = join(dir, "recorded.test.yaml");
    await writeFile(
      file,
      stringify({
        rule_files: [RULES],
        evaluation_interval: "1m",
        tests: [{ interval: `${rec.stepMinutes}m`, input_series: rec.inputSeries(), alert_rule_test: tests }],
      }),
    );
    try {
      await run("promtool", ["test", "rules", file]);
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(
        `promtool test rules failed on the recorded series:\n${e.stdout ?? ""}${e.stderr ?? ""}`,
      );
    }
  } finally {
    await rm(dir, { recursive: true });
  }
}

/** Whether promtool is on PATH (CI installs it; elsewhere the alert tests are skipped without it). */
export async function hasPromtool(): Promise<boolean> {
  try {
    await run("promtool", ["--version"]);
    return true;
  } catch {
    return process.env.CI !== undefined;
  }
}
