/**
 * Test support for deploy/kubernetes: render an overlay with `kubectl kustomize`, validate each
 * object against its schema from npm (kubernetes-models, @kubernetes-models/istio and
 * @kubernetes-models/prometheus-operator), and find fields no schema defines. The schemas' JSON
 * validators accept unknown fields, so that last check types each object as a TypeScript literal
 * of the package's interface and lets tsc's excess-property check name every unknown field.
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { parseAllDocuments } from "yaml";
import { asObject, at, repo } from "./files.js";

const run = promisify(execFile);

/** Every overlay under deploy/kubernetes/overlays. */
export const OVERLAYS = ["memory", "redis", "redis-cluster", "istio", "istio-ambient", "prometheus-operator"];

/** Whether `kubectl` is on PATH (the machine image ships it; .ci/run installs it when missing). */
export async function hasKubectl(): Promise<boolean> {
  try {
    await run("kubectl", ["version", "--client"]);
    return true;
  } catch {
    return false;
  }
}

/** `kubectl kustomize DIR` (relative to the repository) as plain objects. */
export async function render(dir: string): Promise<JsonObject[]> {
  const { stdout } = await run("kubectl", ["kustomize", join(repo, dir)], { maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout).map((d, i) => asObject(d.toJS() as JsonValue, `${dir}#${i}`));
}

/** `Kind/namespace/name` of an object, for messages. */
export function id(obj: JsonObject): string {
  const meta = asObject(at(obj, "metadata"), "metadata");
  return `${String(obj.kind)}/${String(meta.namespace ?? "")}/${String(meta.name)}`;
}

/** The one object of `kind` (and `name`, when given) among `objs`; throws when absent or repeated. */
export function one(objs: readonly JsonObject[], kind: string, name?: string): JsonObject {
  const found = objs.filter(
    (o) => o.kind === kind && (name === undefined || at(o, "metadata", "name") === name),
  );
  if (found.length !== 1) throw new Error(`${found.length} objects of kind ${kind} ${name ?? ""}`);
  return found[0] as JsonObject;
}

const CRD_PACKAGES: Readonly<Record<string, string>> = {
  "networking.istio.io": "@kubernetes-models/istio",
  "security.istio.io": "@kubernetes-models/istio",
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};

/** The npm module that models `apiVersion`/`kind`, e.g. `kubernetes-models/apps/v1/Deployment`. */
export function modelModule(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  return `${CRD_PACKAGES[group] ?? "kubernetes-models"}/${apiVersion}/${kind}`;
}

interface ModelClass {
  new (data: JsonObject): { validate(): void };
}

/** Schema errors of one object (empty when it validates); a kind no package models is an error. */
export async function schemaErrors(obj: JsonObject): Promise<string[]> {
  const kind = String(obj.kind);
  let Model: ModelClass | undefined;
  try {
    Model = ((await import(modelModule(String(obj.apiVersion), kind))) as Record<string, ModelClass>)[kind];
  } catch {
    Model = undefined;
  }
  if (Model === undefined) return [`${id(obj)}: no schema for ${String(obj.apiVersion)} ${kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (err) {
    return [`${id(obj)}: ${err instanceof Error ? err.message : String(err)}`];
  }
}

/**
 * Fields that no schema defines, as tsc reports them (`Object literal may only specify known
 * properties, and 'readinesProbe' does not exist in type ...`), one line per finding with the object
 * it is in. Writes `.tmp/kubernetes-types/<label>.ts` and runs tsc on it.
 */
export async function unknownFields(label: string, objs: readonly JsonObject[]): Promise<string[]> {
  const dir = join(repo, ".tmp/kubernetes-types");
  await mkdir(dir, { recursive: true });
  const header = [
    'import type { IObjectMeta } from "@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta";',
    // CRD interfaces carry no TypeMeta/metadata; the built-in ones do (the intersection is the same).
    "type Obj<T> = T & { apiVersion: string; kind: string; metadata?: IObjectMeta };",
  ];
  const body: string[] = [];
  /** The file line where each object's literal starts, to name the object an error is in. */
  const starts: { line: number; name: string }[] = [];
  objs.forEach((obj, i) => {
    const kind = String(obj.kind);
    header.push(`import type { I${kind} as T${i} } from "${modelModule(String(obj.apiVersion), kind)}";`);
    body.push(`export const o${i}: Obj<T${i}> = ${JSON.stringify(obj, null, 2)};`);
  });
  let line = header.length + 1;
  body.forEach((text, i) => {
    starts.push({ line, name: id(objs[i] as JsonObject) });
    line += text.split("\n").length;
  });
  const file = join(dir, `${label}.ts`);
  await writeFile(file, `${[...header, ...body].join("\n")}\n`);
  const tsc = join(repo, "node_modules/.bin/tsc");
  const options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "ES2022"];
  const module = ["--module", "NodeNext", "--moduleResolution", "NodeNext", "--types", "node"];
  try {
    await run(tsc, [...options, ...module, file], { cwd: repo, maxBuffer: 16 << 20 });
    return [];
  } catch (err) {
    const out = String((err as { stdout?: string }).stdout ?? err);
    return out
      .split("\n")
      .filter((l) => l.includes("error TS"))
      .map((l) => {
        const where = Number(/\.ts\((\d+),/.exec(l)?.[1] ?? 0);
        const name = starts.findLast((x) => x.line <= where)?.name ?? "?";
        return `${name}: ${l.slice(l.indexOf("error TS"))}`;
      });
  }
}
