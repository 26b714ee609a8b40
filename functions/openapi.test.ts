// GET /openapi.json: an OpenAPI 3.1 description of every route of app/manifest.ts, generated from the handlers'
// zod schemas, checked in (functions/openapi.json) and kept in step; the handlers' real answers on the local
// stack match the schemas it documents.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { ROUTES } from "../app/manifest.ts";
import type { RouteKey } from "../app/manifest.ts";
import { matchRoute } from "../local/http-front.ts";
import { apiEvent, startTestStack } from "../local/testing/stack-fixture.ts";
import { openApiDocument } from "./http/openapi.ts";
import { ROUTE_DOCS } from "./http/openapi-route-docs.ts";
import { ApiErrorSchema } from "./http/openapi-schemas.ts";
import { OpenApiError } from "./http/errors.ts";

const root = new URL("..", import.meta.url);
const version = (JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string }).version;
const checkedIn = JSON.parse(readFileSync(new URL("functions/openapi.json", root), "utf8")) as OpenApi;
const generated = openApiDocument(version) as unknown as OpenApi;

interface Operation {
  operationId: string;
  security: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  responses: Record<string, unknown>;
}
interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

describe("the OpenAPI document", () => {
  it("is the checked-in functions/openapi.json (run `npm run openapi` after changing a route or a schema)", () => {
    expect(checkedIn).toEqual(generated);
  });

  it("describes every route of app/manifest.ts with its method, path parameters and token", () => {
    expect(generated.openapi).toBe("3.1.0");
    const documented = Object.entries(generated.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(Object.keys(ROUTES).sort());
    for (const [key, route] of Object.entries(ROUTES)) {
      const op = generated.paths[route.path]![route.method.toLowerCase()]!;
      const scheme = { intake: "intakeToken", reviewer: "reviewerToken", none: undefined }[route.auth];
      expect(op.security, key).toEqual(scheme ? [{ [scheme]: [] }] : []);
      const pathParams = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => `{${p.name}}`);
      expect(pathParams, key).toEqual(route.path.match(/\{[^}]+\}/g) ?? []);
      if (route.auth !== "none") expect(Object.keys(op.responses), key).toEqual(expect.arrayContaining(["401", "403"]));
    }
  });

  it("refuses a route that has no description, naming it", () => {
    const { "GET /health": _health, ...withoutHealth } = ROUTE_DOCS;
    expect(() => openApiDocument(version, withoutHealth)).toThrow(OpenApiError);
    expect(() => openApiDocument(version, withoutHealth)).toThrow(/route GET \/health .* has no description/);
  });

  it("resolves every $ref to a component", () => {
    const refs = [...JSON.stringify(generated).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
      (m) => m[1]!,
    );
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(Object.keys(generated.components.schemas), ref).toContain(ref);
  });

  it("documents the request bodies from the schemas intake and review parse with", () => {
    const schemas = generated.components.schemas as Record<
      string,
      { properties?: Record<string, unknown>; required?: string[] }
    >;
    expect(Object.keys(schemas.ClaimSubmission!.properties!)).toEqual([
      "claim",
      "claim_text",
      "simulation_id",
      "label",
    ]);
    expect(schemas.Claim!.required).toEqual(["order_id", "amount_eur", "category"]);
    // The claim as submitted: with `lines`, intake completes amount_eur and category from the order.
    expect(schemas.SubmittedClaim!.required).toEqual(["order_id"]);
    expect(Object.keys(schemas.SubmittedClaim!.properties!)).toContain("lines");
    expect(Object.keys(schemas.ReviewDecision!.properties!)).toEqual([
      "decision",
      "note",
      "reviewer",
      "amount_eur",
      "claim",
      "review_id",
      "paid_out_of_band",
    ]);
  });

  it("is an open route (no authorizer), locally as on AWS", () => {
    expect(matchRoute("GET", "/openapi.json")).toMatchObject({ auth: "none", fn: "intakeApi" });
  });
});

describe("the handlers answer what the document says", () => {
  type Stack = Awaited<ReturnType<typeof startTestStack>>;
  let stack: Stack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack?.stop());

  /** The schema ROUTE_DOCS gives `key`'s `status` answer (strict where the schema is); 400 and 500 are the common error body. */
  const documented = (key: RouteKey, status: number) => {
    const schema =
      ROUTE_DOCS[key]?.responses[status]?.schema ?? (status === 400 || status === 500 ? ApiErrorSchema : undefined);
    expect(schema, `${key} documents ${status}`).toBeDefined();
    return schema as z.ZodType;
  };
  const call = async (fn: "intakeApi" | "reviewApi", method: string, path: string, body?: unknown) => {
    const res = await stack.handlers[fn](
      apiEvent(method, path, body === undefined ? {} : { body: JSON.stringify(body) }),
    );
    return { status: res.statusCode ?? 0, json: JSON.parse(res.body ?? "null") as unknown, raw: res.body ?? "" };
  };

  it("serves functions/openapi.json at GET /openapi.json", async () => {
    const res = await call("intakeApi", "GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.json).toEqual(checkedIn);
  });

  it("matches the documented bodies for a claim's life: submitted, decided, escalated, reviewed, and errors", async () => {
    const accepted = await call("intakeApi", "POST", "/claims", {
      claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" },
    });
    expect(accepted.status).toBe(202);
    documented("POST /claims", 202).parse(accepted.json);
    const escalated = await call("intakeApi", "POST", "/claims", {
      claim_text: "I bought order ord_002 for 1200 EUR, it arrived broken",
    });
    const ids = [accepted.json, escalated.json].map((j) => (j as { claim_id: string }).claim_id);
    for (const id of ids) await stack.runtime.settle(id);

    for (const id of ids) {
      const view = await call("intakeApi", "GET", `/claims/${id}`);
      expect(view.status).toBe(200);
      documented("GET /claims/{id}", 200).parse(view.json);
    }
    const reviews = await call("reviewApi", "GET", "/reviews");
    expect(reviews.status).toBe(200);
    documented("GET /reviews", 200).parse(reviews.json);
    expect((reviews.json as { items: unknown[] }).items).toHaveLength(1);
    const decided = await call("reviewApi", "POST", `/claims/${ids[1]}/review`, {
      decision: "APPROVE",
      amount_eur: 1000,
      note: "200 withheld for damage",
    });
    expect(decided.status, decided.raw).toBe(200);
    documented("POST /claims/{id}/review", 200).parse(decided.json);
    documented("GET /claims/{id}", 200).parse((await call("intakeApi", "GET", `/claims/${ids[1]}`)).json);

    const again = await call("reviewApi", "POST", `/claims/${ids[1]}/review`, {
      decision: "DENY",
      note: "changed my mind",
    });
    expect(again.status).toBe(409);
    documented("POST /claims/{id}/review", 409).parse(again.json);
    const invalid = await call("intakeApi", "POST", "/claims", { claim: { order_id: "ord_001" } });
    expect(invalid.status).toBe(400);
    documented("POST /claims", 400).parse(invalid.json);
    const missing = await call("intakeApi", "GET", "/claims/clm_nothing_here");
    expect(missing.status).toBe(404);
    documented("GET /claims/{id}", 404).parse(missing.json);
    const health = await call("intakeApi", "GET", "/health");
    documented("GET /health", 200).parse(health.json);
  });
});
