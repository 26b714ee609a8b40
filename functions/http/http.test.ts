// The HTTP shell's failure path: a route that throws is answered 500 without internals and counted as a
// RequestFailures of its route (Lambda's Errors never sees it, so infra/monitoring.ts alarms on this metric).
import { describe, expect, it } from "vitest";
import { apiEvent, recordingLogger } from "../../local/testing/stack-fixture.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { createApiHandler, json } from "./http.ts";

function shell(route: () => Promise<ReturnType<typeof json>>) {
  const emitted: { metrics: Record<string, number>; dimensions: readonly Record<string, string>[] }[] = [];
  const log = recordingLogger();
  const handler = createApiHandler(
    { "GET /claims/{id}": route, "POST /claims": async () => json(202, { ok: true }) },
    () => ({}) as PipelineDeps,
    log.logger,
    { emit: (r) => void emitted.push(r as (typeof emitted)[number]) },
  );
  return { handler, emitted, log };
}

describe("createApiHandler: a route that throws", () => {
  it("answers 500 with the request id and no internals, and counts one RequestFailures of that route", async () => {
    const { handler, emitted, log } = shell(async () => {
      throw new Error("AccessDeniedException: not authorized to perform dynamodb:GetItem on arn:aws:dynamodb:…");
    });
    const res = await handler(apiEvent("GET", "/claims/clm_1"));
    expect(res.statusCode).toBe(500);
    expect(String(res.body)).not.toContain("AccessDenied");
    expect(JSON.parse(String(res.body))).toEqual({
      error: { code: "INTERNAL", message: "internal error (request req-GET-/claims/clm_1)" },
    });
    expect(emitted).toEqual([{ metrics: { RequestFailures: 1 }, dimensions: [{ Route: "GET /claims/{id}" }] }]);
    expect(log.lines.map((l) => l.message)).toEqual(["request failed"]);
  });

  it("counts nothing for answered requests, whatever their status: 2xx, 4xx, an unserved route, /health", async () => {
    const { handler, emitted } = shell(async () => json(404, { error: { code: "CLAIM_NOT_FOUND" } }));
    expect((await handler(apiEvent("GET", "/claims/clm_1"))).statusCode).toBe(404);
    expect((await handler(apiEvent("POST", "/claims", { body: "{}" }))).statusCode).toBe(202);
    expect((await handler(apiEvent("GET", "/reviews"))).statusCode).toBe(404);
    expect((await handler(apiEvent("GET", "/health"))).statusCode).toBe(200);
    expect(emitted).toEqual([]);
  });
});
