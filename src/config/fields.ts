/**
 * Typed readers of a schema-validated object (`CheckedObject`), one per field kind. Each takes the
 * schema row itself (e.g. `ROWS.unit` of schema.ts), not a key string, so the value comes back with
 * the row's type: a string, a number, a boolean, the union of an enum's values, a nested object or
 * list. The walker already checked the types; these narrow the stored value with a type guard (no
 * casts), and reading a row in an object of another context is a programming error that throws.
 */
import type { FieldType } from "./schema.js";
import type { CheckedObject } from "./walk.js";

/** A schema row whose type is `T` (rows keep their literal types when declared `as const`). */
export interface Row<T extends FieldType = FieldType> {
  readonly name: string;
  readonly in: readonly string[];
  readonly type: T;
}

type Of<K extends FieldType["kind"]> = Extract<FieldType, { readonly kind: K }>;

/** The walker's output for an `object` or `list` item. */
export function isCheckedObject(v: unknown): v is CheckedObject {
  return typeof v === "object" && v !== null && "valuePos" in v && "values" in v && "context" in v;
}

const isRecord = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const isOneOf = <V extends readonly string[]>(values: V, v: unknown): v is V[number] =>
  typeof v === "string" && values.includes(v);

function raw(o: CheckedObject, row: Row): unknown {
  if (!row.in.includes(o.context))
    throw new Error(`config reader: "${row.name}" is no key of "${o.context}" (rows: ${row.in.join(", ")})`);
  return o.values.get(row.name);
}

/** Whether the key was written (also when its value failed validation). */
export function has(o: CheckedObject, row: Row): boolean {
  raw(o, row);
  return o.valuePos.has(row.name);
}

/** A `string` field. */
export function text(o: CheckedObject, row: Row<Of<"string">>): string | undefined {
  const v = raw(o, row);
  return typeof v === "string" ? v : undefined;
}

/** A `uint` or `duration` (milliseconds) field. */
export function count(o: CheckedObject, row: Row<Of<"uint"> | Of<"duration">>): number | undefined {
  const v = raw(o, row);
  return typeof v === "number" ? v : undefined;
}

/** A `bool` field: true, false, or undefined when absent. */
export function bool(o: CheckedObject, row: Row<Of<"bool">>): boolean | undefined {
  const v = raw(o, row);
  return typeof v === "boolean" ? v : undefined;
}

/** A `bool` field that is `true` (absent is false). */
export function flag(o: CheckedObject, row: Row<Of<"bool">>): boolean {
  return bool(o, row) === true;
}

/** An `enum` field, typed as the union of the row's values. */
export function choice<const V extends readonly string[]>(
  o: CheckedObject,
  row: Row<{ readonly kind: "enum"; readonly values: V; readonly anyCase?: boolean }>,
): V[number] | undefined {
  const v = raw(o, row);
  return isOneOf(row.type.values, v) ? v : undefined;
}

/** An `object` field. */
export function child(o: CheckedObject, row: Row<Of<"object">>): CheckedObject | undefined {
  const v = raw(o, row);
  return isCheckedObject(v) ? v : undefined;
}

/** A `list` field's valid items; undefined when absent. */
export function items(o: CheckedObject, row: Row<Of<"list">>): readonly CheckedObject[] | undefined {
  const v = raw(o, row);
  return Array.isArray(v) ? v.filter(isCheckedObject) : undefined;
}

/** A `freeMap` field (plain JSON). */
export function freeMap(
  o: CheckedObject,
  row: Row<Of<"freeMap">>,
): Readonly<Record<string, unknown>> | undefined {
  const v = raw(o, row);
  return isRecord(v) ? v : undefined;
}
