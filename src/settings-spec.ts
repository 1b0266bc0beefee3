/**
 * The shape of one setting in the schema (src/settings-schema.ts): flag, `TOLLGATE_*` environment
 * twin, kind, default, unit and meaning.
 */

export type Kind = "string" | "int" | "bool" | "duration" | "enum" | "addr";

export interface Spec<K extends Kind = Kind> {
  readonly kind: K;
  readonly flag: string;
  readonly env: string;
  readonly default: string;
  readonly unit?: string;
  readonly values?: readonly string[];
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

/** One setting (an identity function that keeps the literal kind for the Settings type). */
export function spec<K extends Kind>(s: Spec<K>): Spec<K> {
  return s;
}
