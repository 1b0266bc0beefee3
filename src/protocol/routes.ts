/**
 * The HTTP routes: `/healthcheck` (readiness), `/livez` (liveness), `POST /json` (proto3-JSON twin of ShouldRateLimit), `/rlconfig`,
 * `/metrics`.
 */
import type { RateLimitAnswer, RateLimitQuery } from "../engine/types.js";
import { StoreError } from "../store/store.js";
import { answerToJson, parseJsonQuery, type QueryBounds } from "./codec.js";
import { GrpcError, Status } from "./grpc/status.js";
import type { HealthState } from "./health.js";
import { type HttpReply, type Route, textReply } from "./http.js";

export interface RouteDeps {
  readonly health: HealthState;
  readonly decide: (q: RateLimitQuery) => Promise<RateLimitAnswer>;
  readonly bounds: QueryBounds;
  readonly metrics: { text(): Promise<string>; readonly contentType: string };
  readonly rulesText: () => readonly string[];
  readonly storeStatus: () => unknown;
  /** A `/json` request refused for bad input (400), counted as gRPC's INVALID_ARGUMENT answers are. */
  readonly rejected?: (reason: "invalid_argument") => void;
}

export function httpRoutes(deps: RouteDeps): Map<string, Route> {
  const routes = new Map<string, Route>();
  // Readiness: 500 before the first config load and while draining (the same state as gRPC health).
  routes.set("GET /healthcheck", () =>
    deps.health.isServing() ? textReply(200, "OK") : textReply(500, "NOT SERVING"),
  );
  // Liveness: 200 whenever the event loop answers, draining included (a restart would not help).
  routes.set("GET /livez", () => textReply(200, "alive"));
  routes.set("POST /json", async (req): Promise<HttpReply> => {
    let answer: RateLimitAnswer;
    try {
      answer = await deps.decide(parseJsonQuery(req.body, deps.bounds));
    } catch (err) {
      if (err instanceof GrpcError) {
        if (err.code === Status.INVALID_ARGUMENT) deps.rejected?.("invalid_argument");
        return textReply(400, err.message);
      }
      if (err instanceof StoreError) return textReply(503, `rate limit store unavailable (${err.code})`);
      throw err;
    }
    return {
      status: answer.overallCode === "OK" ? 200 : 429,
      body: `${answerToJson(answer)}\n`,
      contentType: "application/json",
    };
  });
  routes.set("GET /rlconfig", () => {
    const status = JSON.stringify(deps.storeStatus());
    return textReply(200, [...deps.rulesText(), `# store: ${status}`].join("\n"));
  });
  routes.set("GET /metrics", async () => ({
    status: 200,
    body: await deps.metrics.text(),
    contentType: deps.metrics.contentType,
  }));
  return routes;
}
