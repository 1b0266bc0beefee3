/**
 * Compile-time links between the value lists of the two schemas (settings: src/settings-schema.ts,
 * config: src/config/schema.ts) and the domain unions that consume the parsed values. A value added
 * to a list but not to the union (or the other way round) fails `npm run typecheck` here, naming the
 * pair, instead of reaching a `switch` that does not know it. Types only: nothing here runs.
 */
import type { LevelWithSilent } from "pino";
import type { ALGORITHMS, FAILURE_POLICIES, UNITS } from "./config/schema.js";
import type { HeaderFormat } from "./engine/headers.js";
import type { Algorithm, FailurePolicy, Unit } from "./engine/types.js";
import type { GrpcTransport } from "./protocol/grpc/server.js";
import type { Settings } from "./settings.js";

/** `true` when `A` and `B` are the same union (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** A type error unless `T` is `true`. */
type Linked<T extends true> = T;

/** Each entry must be `Linked<true>`; a drifted pair is a compiler error on its line. */
export type SchemaDomainLinks = readonly [
  Linked<Same<Settings["defaultAlgorithm"], Algorithm>>,
  Linked<Same<Settings["onStoreError"], FailurePolicy>>,
  Linked<Same<Settings["responseHeaders"], HeaderFormat>>,
  Linked<Same<Settings["grpcTransport"], GrpcTransport>>,
  Linked<Same<Settings["logLevel"], LevelWithSilent>>,
  Linked<Same<(typeof ALGORITHMS)[number], Algorithm>>,
  Linked<Same<(typeof FAILURE_POLICIES)[number], FailurePolicy>>,
  Linked<Same<(typeof UNITS)[number], Unit>>,
];
