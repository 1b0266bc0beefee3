/**
 * The rendered overlays of deploy/kubernetes, shared by the Kubernetes test files: `renderOverlays()`
 * in a `beforeAll`, then accessors by overlay name (the tollgate Deployment, its pod spec and
 * container, env, labels, and the NetworkPolicy's ports).
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { asArray, asObject, at } from "./files.js";
import { hasKubectl, OVERLAYS, one, render } from "./kubernetes.js";

/** Whether the overlays can be rendered here: kubectl present, or CI (where its absence fails). */
export const kubectl = (await hasKubectl()) || process.env.CI !== undefined;

const rendered = new Map<string, JsonObject[]>();

/** Renders every overlay once per test file (no-op without kubectl outside CI). */
export async function renderOverlays(): Promise<void> {
  if (!kubectl) return;
  for (const o of OVERLAYS) rendered.set(o, await render(`deploy/kubernetes/overlays/${o}`));
}

export const objects = (overlay: string): JsonObject[] => rendered.get(overlay) ?? [];
export const deployment = (overlay: string) => one(objects(overlay), "Deployment", "tollgate");
export const podSpec = (overlay: string) =>
  asObject(at(deployment(overlay), "spec", "template", "spec"), "pod");
export const container = (overlay: string) => asObject(at(podSpec(overlay), "containers", 0), "container");
export const list = (v: JsonValue | undefined): JsonObject[] =>
  v === undefined ? [] : asArray(v, "list").map((x) => asObject(x, "item"));
export const env = (overlay: string): Map<string, JsonObject> =>
  new Map(list(container(overlay).env).map((e) => [String(e.name), e]));
export const envValue = (overlay: string, name: string) => String(at(env(overlay).get(name), "value"));
/** Whether every label of a selector is on `labels`. */
export const labelsMatch = (selector: JsonValue, labels: JsonValue) =>
  Object.entries(asObject(selector, "selector")).every(([k, v]) => asObject(labels, "labels")[k] === v);
export const podLabels = (overlay: string) =>
  at(deployment(overlay), "spec", "template", "metadata", "labels");

/** Ports of NetworkPolicy ingress rules, with the namespaces each admits (`*` = any). */
export function ingressPorts(overlay: string): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const rule of list(at(one(objects(overlay), "NetworkPolicy"), "spec", "ingress"))) {
    const from = list(rule.from).map((f) => {
      const labels = asObject(f.namespaceSelector ?? {}, "namespaceSelector").matchLabels;
      return labels === undefined ? "*" : String(at(labels, "kubernetes.io/metadata.name"));
    });
    for (const p of list(rule.ports)) out.set(Number(p.port), [...(out.get(Number(p.port)) ?? []), ...from]);
  }
  return out;
}

/** Ports the NetworkPolicy lets the pods reach. */
export const egressPorts = (overlay: string) =>
  list(at(one(objects(overlay), "NetworkPolicy"), "spec", "egress")).flatMap((r) =>
    list(r.ports).map((p) => Number(p.port)),
  );
