/**
 * The shape of one setting in the schema (src/settings-schema.ts): flag, `TOLLGATE_*` environment
 * twin, kind, default, unit and meaning.
 */

export type Kind = "string" | "int" | "bool" | "duration" | "enum" | "addr";

/**
 * One setting. `V` is the literal tuple of an `enum` setting's values (`["gcra", "fixed_window"]`), so
 * the parsed setting is typed as their union (see `Settings` in src/settings.ts).
 */
export interface Spec<K extends Kind = Kind, V extends readonly string[] = readonly string[]> {
  readonly kind: K;
  readonly flag: string;
  readonly env: string;
  readonly default: string;
  readonly unit?: string;
  readonly values?: V;
  readonly min?: number;
  /** Largest allowed value of an `int`. */
  readonly max?: number;
  readonly doc: string;
  /** Shown as a placeholder instead of the value in logs (`***`). */
  readonly secret?: boolean;
  /**
   * Deprecated names still accepted for this setting (a renamed setting keeps its old flag and
   * variable working); the current flag and variable win over them.
   */
  readonly deprecatedAliases?: readonly { readonly flag: string; readonly env: string }[];
}

/**
 * One setting (an identity function that keeps the literal kind and, for an `enum`, the literal value
 * list for the Settings type).
 */
export function spec<K extends Kind, const V extends readonly string[] = readonly string[]>(
  s: Spec<K, V>,
): Spec<K, V> {
  return s;
}
