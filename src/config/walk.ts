/**
 * Walks a parsed YAML document against a `ConfigSchema`, producing plain validated values with
 * positions, and reporting every type problem (unknown key, wrong scalar type, list item that is
 * not a map, missing required key) without stopping at the first.
 */
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type LineCounter,
  type Node,
  Scalar,
  type YAMLMap,
} from "yaml";
import { parseDuration } from "./duration.js";
import type { ConfigSchema, FieldDef, FieldType } from "./schema.js";
import { closest } from "./suggest.js";

/** 1-based position in a file. */
export interface Pos {
  readonly line: number;
  readonly column: number;
}

/** A validated mapping of one schema context. Only keys that passed their type check are present. */
export interface CheckedObject {
  readonly context: string;
  /** YAML path of this object, e.g. `descriptors[0].rate_limit`; `""` for the document. */
  readonly path: string;
  readonly pos: Pos;
  /** Validated values: string, boolean, number (uint, duration ms), CheckedObject, CheckedObject[], or JSON. */
  readonly values: ReadonlyMap<string, unknown>;
  /** Position of each present key's value node (also for keys whose value failed validation). */
  readonly valuePos: ReadonlyMap<string, Pos>;
}

/** Receives each problem found, positioned. */
export type ProblemSink = (pos: Pos, path: string, message: string) => void;

/** Join a YAML path with a key. */
export function childPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** Describe a node for an error message: `a list`, `a map`, `"10" (a quoted string)`, `1.5`. */
function describe(node: unknown): string {
  if (isMap(node)) return "a map";
  if (isSeq(node)) return "a list";
  if (isScalar(node)) {
    if (node.value === null) return "nothing";
    if (node.type === Scalar.QUOTE_DOUBLE || node.type === Scalar.QUOTE_SINGLE) {
      return `${JSON.stringify(String(node.value))} (a quoted string)`;
    }
    return node.source ?? String(node.value);
  }
  return "an alias or tag";
}

const INTEGER_TEXT = /^[-+]?(0x[0-9a-f]+|0o[0-7]+|[0-9]+)$/i;

/** Walker state for one document. */
export class SchemaWalker {
  readonly #schema: ConfigSchema;
  readonly #lines: LineCounter;
  readonly #report: ProblemSink;
  readonly #doc: Document;

  constructor(options: {
    schema: ConfigSchema;
    doc: Document;
    lineCounter: LineCounter;
    report: ProblemSink;
  }) {
    this.#schema = options.schema;
    this.#doc = options.doc;
    this.#lines = options.lineCounter;
    this.#report = options.report;
  }

  /** Position of a node's start. */
  pos(node: Node | null | undefined): Pos {
    const offset = node?.range?.[0];
    if (offset === undefined) return { line: 1, column: 1 };
    const lp = this.#lines.linePos(offset);
    return { line: lp.line, column: lp.col };
  }

  /** Follow an alias (`*anchor`) to the node it names. */
  #deref(node: unknown): unknown {
    return isAlias(node) ? node.resolve(this.#doc) : node;
  }

  /** Validate `node` as an object of `context`; undefined when it is not a map (reported). */
  object(raw: unknown, context: string, path: string): CheckedObject | undefined {
    const pos = this.pos(raw as Node);
    const node = this.#deref(raw);
    if (!isMap(node)) {
      this.#report(pos, path, `must be a map, got ${describe(node)}`);
      return undefined;
    }
    return this.#fields(node, context, path, pos);
  }

  #fields(map: YAMLMap, context: string, path: string, pos: Pos): CheckedObject {
    const fields = this.#schema.contexts.get(context) ?? new Map<string, FieldDef>();
    const values = new Map<string, unknown>();
    const valuePos = new Map<string, Pos>();
    for (const pair of map.items) {
      const keyNode = pair.key as Node | null;
      if (!isScalar(keyNode) || typeof keyNode.value !== "string") {
        this.#report(this.pos(keyNode), path, `keys must be strings, got ${describe(keyNode)}`);
        continue;
      }
      const key = keyNode.value;
      const def = fields.get(key);
      if (def === undefined) {
        const hint = closest(key, [...fields.keys()]);
        const help =
          hint === undefined ? `allowed here: ${[...fields.keys()].join(", ")}` : `did you mean "${hint}"?`;
        this.#report(this.pos(keyNode), childPath(path, key), `unknown key "${key}" (${help})`);
        continue;
      }
      const valueNode = this.#deref(pair.value) as Node | null;
      valuePos.set(key, valueNode === null ? this.pos(keyNode) : this.pos(valueNode));
      const value = this.#value(valueNode, def.type, childPath(path, key));
      if (value !== undefined) values.set(key, value);
    }
    for (const def of fields.values()) {
      if (def.required === true && !valuePos.has(def.name)) {
        this.#report(pos, path, `missing required key "${def.name}"`);
      }
    }
    return Object.freeze({ context, path, pos, values, valuePos });
  }

  #value(node: Node | null, type: FieldType, path: string): unknown {
    const pos = this.pos(node);
    const bad = (expected: string): undefined => {
      this.#report(pos, path, `must be ${expected}, got ${describe(node)}`);
      return undefined;
    };
    switch (type.kind) {
      case "object":
        return this.object(node, type.context, path);
      case "list": {
        if (!isSeq(node)) return bad("a list");
        const out = [];
        for (const [i, raw] of node.items.entries()) {
          const item = this.#deref(raw);
          const itemPath = `${path}[${i}]`;
          if (!isMap(item)) {
            this.#report(this.pos(raw as Node), itemPath, `list item must be a map, got ${describe(item)}`);
            continue;
          }
          out.push(this.#fields(item, type.context, itemPath, this.pos(item)));
        }
        return Object.freeze(out);
      }
      case "freeMap":
        return isMap(node) ? Object.freeze(node.toJSON()) : bad("a map");
      default:
        return this.#scalar(node, type, path, bad);
    }
  }

  #scalar(node: Node | null, type: FieldType, path: string, bad: (expected: string) => undefined): unknown {
    const pos = this.pos(node);
    if (!isScalar(node) || node.value === null) return bad(expectation(type));
    const plain = node.type === Scalar.PLAIN;
    const text = plain ? (node.source ?? String(node.value)) : String(node.value);
    switch (type.kind) {
      case "string":
        // Like envoyproxy/ratelimit (yaml.v2), a plain scalar into a string field keeps its text.
        if (typeof node.value === "object") return bad("a string");
        // envoyproxy/ratelimit rejects floats anywhere (its key check accepts only strings, ints
        // and bools): an unquoted `1.50` would silently become 1.5. Ints and bools keep their text.
        if (plain && typeof node.value === "number" && !INTEGER_TEXT.test(text)) {
          this.#report(
            pos,
            path,
            `must be a string, got the float ${text}: quote it (${path.slice(path.lastIndexOf(".") + 1)}: "${text}"); unquoted floats are rejected, as by envoyproxy/ratelimit, because 1.50 would read as 1.5`,
          );
          return undefined;
        }
        return text;
      case "bool":
        return typeof node.value === "boolean" ? node.value : bad("true or false");
      case "enum": {
        const v = type.anyCase === true ? text.toLowerCase() : text;
        if (type.values.includes(v)) return v;
        const what = path.slice(path.lastIndexOf(".") + 1);
        this.#report(pos, path, `unknown ${what} ${JSON.stringify(text)} (use ${listOr(type.values)})`);
        return undefined;
      }
      case "duration": {
        const ms = parseDuration(text);
        return ms !== undefined && ms > 0 ? ms : bad('a duration such as "250ms", "5s" or "1m"');
      }
      case "uint": {
        const min = type.min ?? 0;
        const max = type.max ?? Number.MAX_SAFE_INTEGER;
        const range = `an integer from ${min} to ${max}`;
        if (!plain || typeof node.value !== "number" || !INTEGER_TEXT.test(text)) return bad(range);
        return node.value < min || node.value > max ? bad(range) : node.value;
      }
      default:
        return bad(expectation(type));
    }
  }
}

/** `a, b or c`. */
function listOr(values: readonly string[]): string {
  return values.length < 2 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

function expectation(type: FieldType): string {
  switch (type.kind) {
    case "enum":
      return `one of ${listOr(type.values)}`;
    case "bool":
      return "true or false";
    case "uint":
      return `an integer from ${type.min ?? 0} to ${type.max ?? Number.MAX_SAFE_INTEGER}`;
    default:
      return `a ${type.kind}`;
  }
}
