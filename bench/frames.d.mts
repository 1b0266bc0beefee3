/** Types of bench/frames.mjs (the harness is plain ESM run by node; tests import it). */
export interface Point {
  readonly tenant: string;
  readonly route: string;
  readonly ip: string;
}
export const DOMAIN: string;
export const RLS_PATH: string;
export const TENANTS: number;
export const ROUTE_CLASSES: readonly string[];
export function grpcFrame(message: Buffer): Buffer;
export function scenarioPoints(opts: {
  scenario: "hot" | "tenants";
  connections: number;
  round: number;
}): Point[];
export function encodeFrames(points: readonly Point[]): Buffer[];
export function decodeResponse(frame: Buffer): { overall_code: string; statuses: unknown[] };
