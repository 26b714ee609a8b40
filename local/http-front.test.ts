// The local API Gateway: routes as app/manifest.ts declares them, API Gateway v2 events as the intake
// handler receives them, the authorizer in front of protected routes, and the 16 KB limit enforced
// without reading the rest of the body.
import { request } from "node:http";
import { connect } from "node:net";
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateSstConfig } from "../infra/testing/sst-recorder.ts";
import { matchRoute, startHttpFront } from "./http-front.ts";
import type { HttpFront } from "./http-front.ts";

describe("routes", () => {
  it("match every route infra/api.ts declares, protected exactly where API Gateway runs the authorizer", async () => {
    const r = await evaluateSstConfig({ stage: "dev", env: { CLAIMS_POLICY_FILE: "infra/policy.example.yaml" } });
    const declared = r
      .get("sst.aws.ApiGatewayV2", "Api")
      .calls.filter((c) => c.method === "route")
      .map((c) => ({ routeKey: String(c.args[0]), auth: (c.args[2] as { auth?: unknown }).auth !== false }));
    expect(declared.length).toBeGreaterThan(0);
    for (const route of declared) {
      const [method, template] = route.routeKey.split(" ") as [string, string];
      const matched = matchRoute(method, template.replace(/\{[^}]+\}/g, "x"));
      expect(matched, route.routeKey).toMatchObject({ routeKey: route.routeKey });
      expect(matched?.auth !== "none" && !matched?.tokenPage, route.routeKey).toBe(route.auth);
    }
  });
});

describe("matchRoute", () => {
  it.each([
    ["POST", "/claims", "POST /claims", {}],
    ["GET", "/claims/clm_1", "GET /claims/{id}", { id: "clm_1" }],
    ["GET", "/claims/a%2Fb", "GET /claims/{id}", { id: "a/b" }],
    ["GET", "/reports/sim_1", "GET /reports/{simulation_id}", { simulation_id: "sim_1" }],
    ["GET", "/health", "GET /health", {}],
    ["GET", "/claims", "GET /claims", {}],
    ["DELETE", "/claims", undefined, undefined],
    ["POST", "/claims/clm_1", undefined, undefined],
    ["GET", "/claims/", undefined, undefined],
    ["GET", "/claims/a/b", undefined, undefined],
  ])("%s %s → %s", (method, path, routeKey, params) => {
    const m = matchRoute(method, path);
    expect(m?.routeKey).toBe(routeKey);
    expect(m?.pathParameters).toEqual(params);
  });
});

const TOKEN = "front-test-token";
const REVIEWER = "front-test-reviewer";
let front: HttpFront;
const events: APIGatewayProxyEventV2[] = [];
const authorizations: APIGatewayRequestAuthorizerEventV2[] = [];

beforeAll(async () => {
  const fn = (name: string) => async (event: APIGatewayProxyEventV2) => {
    events.push(event);
    return {
      statusCode: 202,
      headers: { "content-type": "application/json", "x-route": event.routeKey, "x-fn": name },
      body: JSON.stringify({ ok: true }),
    };
  };
  const authorizer = (token: string) => async (event: APIGatewayRequestAuthorizerEventV2) => {
    authorizations.push(event);
    return { isAuthorized: event.headers?.authorization === `Bearer ${token}` };
  };
  front = await startHttpFront({
    port: 0,
    functions: { intakeApi: fn("intake"), reviewApi: fn("review") },
    authorizers: { intake: authorizer(TOKEN), reviewer: authorizer(REVIEWER) },
  });
});
afterAll(() => front?.stop());

/** One raw HTTP exchange (node:http, so the body can be streamed without a length). */
function exchange(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | Buffer[],
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${front.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    for (const chunk of Array.isArray(body) ? body : body ? [body] : []) req.write(chunk);
    req.end();
  });
}

const auth = { authorization: `Bearer ${TOKEN}` };

describe("the HTTP front", () => {
  it("maps a request to an API Gateway v2 event", async () => {
    events.length = 0;
    const res = await exchange(
      "POST",
      "/claims?x=1",
      { ...auth, "Content-Type": "application/json", "Idempotency-Key": "k1" },
      Buffer.from('{"claim_text":"hi"}'),
    );
    expect(res.status).toBe(202);
    expect(res.headers["x-route"]).toBe("POST /claims");
    const e = events[0]!;
    expect(e).toMatchObject({
      version: "2.0",
      routeKey: "POST /claims",
      rawPath: "/claims",
      rawQueryString: "x=1",
      body: '{"claim_text":"hi"}',
      isBase64Encoded: false,
      queryStringParameters: { x: "1" },
    });
    expect(e.headers["idempotency-key"]).toBe("k1");
    expect(e.requestContext).toMatchObject({
      http: { method: "POST", path: "/claims" },
      routeKey: "POST /claims",
      stage: "$default",
    });
    expect(e.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("passes path parameters and base64-encodes a binary body", async () => {
    events.length = 0;
    await exchange("GET", "/claims/clm_42", auth);
    await exchange(
      "POST",
      "/claims",
      { ...auth, "content-type": "application/octet-stream" },
      Buffer.from([0xff, 0x00, 0x01]),
    );
    expect(events[0]?.pathParameters).toEqual({ id: "clm_42" });
    expect(events[1]).toMatchObject({
      isBase64Encoded: true,
      body: Buffer.from([0xff, 0x00, 0x01]).toString("base64"),
    });
  });

  it.each([
    ["no Authorization header", "POST", "/claims", {}, 401, "UNAUTHORIZED"],
    ["a wrong token", "POST", "/claims", { authorization: "Bearer nope" }, 403, "FORBIDDEN"],
    [
      "the reviewer token on an intake route",
      "POST",
      "/claims",
      { authorization: `Bearer ${REVIEWER}` },
      403,
      "FORBIDDEN",
    ],
    [
      "the intake token on a review route",
      "POST",
      "/claims/clm_1/review",
      { authorization: `Bearer ${TOKEN}` },
      403,
      "FORBIDDEN",
    ],
    ["the intake token on the review list", "GET", "/reviews", { authorization: `Bearer ${TOKEN}` }, 403, "FORBIDDEN"],
    // API Gateway joins repeated headers with a comma, so a valid token followed by another is refused, as on AWS.
    [
      "a valid token followed by a second Authorization header",
      "POST",
      "/claims",
      { authorization: [`Bearer ${TOKEN}`, "Bearer nope"] },
      403,
      "FORBIDDEN",
    ],
  ] as const)(
    "answers like API Gateway for %s, and no function runs",
    async (_c, method, path, headers, status, code) => {
      events.length = 0;
      const res = await exchange(
        method,
        path,
        headers as unknown as Record<string, string>,
        method === "POST" ? Buffer.from("{}") : undefined,
      );
      expect(res.status).toBe(status);
      expect(JSON.parse(res.body).error.code).toBe(code);
      expect(events).toHaveLength(0);
    },
  );

  it("sends each route to its function behind its own token", async () => {
    const review = await exchange(
      "POST",
      "/claims/clm_1/review",
      { authorization: `Bearer ${REVIEWER}` },
      Buffer.from("{}"),
    );
    expect(review.headers["x-fn"]).toBe("review");
    expect((await exchange("GET", "/reviews", { authorization: `Bearer ${REVIEWER}` })).headers["x-fn"]).toBe("review");
    expect((await exchange("GET", "/claims/clm_1", auth)).headers["x-fn"]).toBe("intake");
  });

  it("hands the report routes to the intake function without a token and without the authorizer, as API Gateway does", async () => {
    authorizations.length = 0;
    for (const path of ["/reports", "/reports/sim_1"]) {
      const res = await exchange("GET", path, { accept: "text/html" });
      expect(res.headers["x-fn"], path).toBe("intake");
    }
    expect(authorizations).toHaveLength(0);
  });

  it("gives the authorizer the Authorization header as identity source", async () => {
    authorizations.length = 0;
    await exchange("GET", "/claims/clm_1", auth);
    expect(authorizations[0]).toMatchObject({
      type: "REQUEST",
      routeKey: "GET /claims/{id}",
      identitySource: [`Bearer ${TOKEN}`],
    });
  });

  it("answers HEAD /health like GET (the same status and headers, no body), and HEAD elsewhere 404", async () => {
    const get = await exchange("GET", "/health", {});
    const head = await exchange("HEAD", "/health", {});
    expect(head.status).toBe(get.status);
    expect(head.headers["x-route"]).toBe("GET /health");
    expect(head.headers["content-length"]).toBe(get.headers["content-length"]);
    expect(head.body).toBe("");
    expect((await exchange("HEAD", "/claims", auth)).status).toBe(404);
  });

  it("serves /health without a token and answers 404 for an unknown route", async () => {
    expect((await exchange("GET", "/health", {})).status).toBe(202);
    const res = await exchange("GET", "/nope", auth);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).error.code).toBe("NOT_FOUND");
  });

  it.each([
    ["a declared length", (big: Buffer) => ({ headers: { ...auth, "content-length": String(big.length) }, body: big })],
    [
      "a streamed body without a length",
      (big: Buffer) => ({
        headers: { ...auth, "transfer-encoding": "chunked" },
        body: [big.subarray(0, 10_000), big.subarray(10_000)],
      }),
    ],
  ])("answers 413 for a body over 16 KB with %s, and the intake handler never runs", async (_c, make) => {
    events.length = 0;
    const { headers, body } = make(Buffer.alloc(16 * 1024 + 1, 0x61));
    const res = await exchange("POST", "/claims", headers, body);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(events).toHaveLength(0);
  });

  it.each([
    ["//", 404],
    ["//claims", 404],
    ["//claims/clm_1", 404],
  ])("takes the path %s as sent (not as a host): %d, never a 500 (found by the chaos fuzz)", async (path, status) => {
    events.length = 0;
    const res = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: front.port, method: "GET", path, headers: auth }, (r) => {
        r.resume();
        r.on("end", () => resolve(r.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end();
    });
    expect(res).toBe(status);
    expect(events).toHaveLength(0);
  });

  it.each([
    [
      "a header byte HTTP forbids",
      "GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n",
      400,
      "MALFORMED_REQUEST",
    ],
    [
      "a Content-Length that is not a number",
      "POST /claims HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
      400,
      "MALFORMED_REQUEST",
    ],
    [
      "headers over Node's limit",
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      431,
      "HEADERS_TOO_LARGE",
    ],
  ])(
    "answers a request with %s like every refusal (JSON error body), and no handler runs",
    async (_c, raw, status, code) => {
      events.length = 0;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(front.port, "127.0.0.1", () => socket.end(raw));
        let text = "";
        socket.on("data", (d: Buffer) => {
          text += d.toString("latin1");
        });
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      });
      const [head, body] = answer.split("\r\n\r\n");
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head?.toLowerCase()).not.toContain("access-control-allow");
      expect(JSON.parse(body ?? "")).toEqual({ error: { code, message: expect.any(String) } });
      expect(events).toHaveLength(0);
    },
  );

  it("passes a body of exactly 16 KB", async () => {
    events.length = 0;
    const res = await exchange("POST", "/claims", auth, Buffer.alloc(16 * 1024, 0x61));
    expect(res.status).toBe(202);
    expect(events[0]?.body).toHaveLength(16 * 1024);
  });
});

describe("/health with the model's state", () => {
  it("says degraded while the model is unreachable and ok once it answers, for GET and HEAD", async () => {
    let down = true;
    const never = async () => {
      throw new Error("the function is not called for /health");
    };
    const withHealth = await startHttpFront({
      functions: { intakeApi: never, reviewApi: never },
      authorizers: { intake: async () => ({ isAuthorized: false }), reviewer: async () => ({ isAuthorized: false }) },
      port: 0,
      health: () => (down ? { status: "degraded", llm: "unreachable" } : { status: "ok" }),
    });
    try {
      const degraded = await fetch(`${withHealth.url}/health`);
      expect(degraded.status).toBe(200);
      expect(await degraded.json()).toEqual({ status: "degraded", llm: "unreachable" });
      const head = await fetch(`${withHealth.url}/health`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(
        String(JSON.stringify({ status: "degraded", llm: "unreachable" }).length),
      );
      down = false;
      expect(await (await fetch(`${withHealth.url}/health`)).json()).toEqual({ status: "ok" });
    } finally {
      await withHealth.stop();
    }
  });
});
