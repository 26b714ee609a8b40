// The intake HTTP handler against the real emulators (dynalite, fauxqs, local bus) through the real
// SDK: request parsing, status codes and error bodies of docs/http-api.md, and that refused input stores nothing.
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiEvent, recordingLogger, startTestStack, TEST_NOW } from "../local/testing/stack-fixture.ts";
import { LOCAL_TABLE_NAME } from "../local/stack.ts";
import { createIntakeApiHandler } from "./intake-api.ts";
import { MAX_BODY_BYTES } from "./http/http.ts";

// Response bodies are read loosely: each assertion states the shape it expects.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let handler: ReturnType<typeof createIntakeApiHandler>;

const CLAIM = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" };

beforeAll(async () => {
  stack = await startTestStack();
  handler = stack.handlers.intakeApi;
});
afterAll(() => stack?.stop());

async function call(method: string, path: string, init: Parameters<typeof apiEvent>[2] = {}) {
  const result = await handler(apiEvent(method, path, init));
  return {
    status: result.statusCode,
    headers: result.headers ?? {},
    body: result.body ?? "",
    json: () => JSON.parse(result.body ?? "null") as Json,
  };
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  call("POST", "/claims", { body: typeof body === "string" ? body : JSON.stringify(body), headers });

/** Items in the table (claims, idempotency keys, audit, sessions…) once the pipeline is idle, to show refused requests store nothing. */
async function itemCount(): Promise<number> {
  await stack.drained();
  const out = await stack.clients.dynamo.send(new ScanCommand({ TableName: LOCAL_TABLE_NAME, Select: "COUNT" }));
  return out.Count ?? 0;
}

describe("POST /claims", () => {
  it("answers 202 with the claim id and RECEIVED, and the claim is stored", async () => {
    const res = await post({ claim: CLAIM, label: "api test" });
    expect(res.status).toBe(202);
    const { claim_id, status } = res.json();
    expect(status).toBe("RECEIVED");
    expect(res.headers.location).toBe(`/claims/${claim_id}`);
    expect((await stack.deps.claims.getClaim(claim_id))?.claim).toEqual(CLAIM);
  });

  it.each([
    ["not JSON", "{not json", "INVALID_JSON", "(body)"],
    ["an empty body", "", "INVALID_JSON", "(body)"],
    ["a wrong type", JSON.stringify({ claim: { ...CLAIM, amount_eur: "a lot" } }), "INVALID_INPUT", "claim.amount_eur"],
    [
      "both claim and claim_text",
      JSON.stringify({ claim: CLAIM, claim_text: "I bought order ord_001" }),
      "INVALID_INPUT",
      "(body)",
    ],
    ["an unknown field", JSON.stringify({ claim: CLAIM, refund_now: true }), "INVALID_INPUT", "(body)"],
  ])("answers 400 with issues for %s and stores nothing", async (_case, body, code, path) => {
    const before = await itemCount();
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe(code);
    expect(res.json().error.issues.map((i: { path: string }) => i.path)).toContain(path);
    expect(await itemCount()).toBe(before);
  });

  it("answers 413 for a body one byte over 16 KB and stores nothing", async () => {
    const before = await itemCount();
    const res = await post("x".repeat(MAX_BODY_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.json().error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(await itemCount()).toBe(before);
  });

  it("reads a body of exactly 16 KB (and refuses it only for its content)", async () => {
    const body = JSON.stringify({ claim_text: "" }).replace('""', `"${"a".repeat(MAX_BODY_BYTES - 17)}"`);
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    expect((await post(body)).status).toBe(400);
  });

  it("decodes a base64 body as API Gateway sends binary content", async () => {
    const body = Buffer.from(JSON.stringify({ claim: { ...CLAIM, order_id: "ord_004" } })).toString("base64");
    const res = await call("POST", "/claims", { body, isBase64Encoded: true });
    expect(res.status).toBe(202);
    expect((await stack.deps.claims.getClaim(res.json().claim_id))?.claim?.order_id).toBe("ord_004");
  });

  it("returns the same claim for a repeated Idempotency-Key and body, and 409 for another body", async () => {
    const key = { "Idempotency-Key": "key-409-test" };
    const first = await post({ claim: CLAIM }, key);
    const again = await post({ claim: CLAIM }, key);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.json().claim_id).toBe(first.json().claim_id);
    const before = await itemCount();
    const conflict = await post({ claim: { ...CLAIM, amount_eur: 1 } }, key);
    expect(conflict.status).toBe(409);
    expect(conflict.json().error.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(await itemCount()).toBe(before);
  });

  it("answers 400 for an Idempotency-Key that is not visible ASCII", async () => {
    const res = await post({ claim: CLAIM }, { "Idempotency-Key": "two words" });
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe("INVALID_IDEMPOTENCY_KEY");
  });
});

describe("POST /claims on lines (docs/orders.md#claims-on-lines)", () => {
  // ord_041 (the bundled config): headphones 12800 JPY and two mugs 3960 JPY, bought 2 days ago.
  const onLines = (lines: unknown) => ({ claim: { order_id: "ord_041", lines, reason: "Damaged in transit" } });

  it("decides a claim on two lines with per-line amounts, and refunds each line its amount in JPY", async () => {
    const res = await post(
      onLines([
        { line_id: "l1", amount: 10000 },
        { line_id: "l2", quantity: 1, amount: "1980" },
      ]),
    );
    expect(res.status).toBe(202);
    const { claim_id } = res.json();
    await stack.runtime.settle(claim_id);
    const view = (await call("GET", `/claims/${claim_id}`)).json();
    const line = (line_id: string, value: string) => ({
      line_id,
      verdict: "ACCEPT",
      reason_code: "VALIDATION_PASSED",
      amount: { value, currency: "JPY" },
    });
    expect(view).toMatchObject({ verdict: "ACCEPT", amount: { value: "11980", currency: "JPY" } });
    expect(view.lines).toEqual([line("l1", "10000"), line("l2", "1980")]);
    expect(view).not.toHaveProperty("amount_eur");
    const entry = await stack.deps.ledger.get("ord_041");
    expect(entry?.claim_lines?.[claim_id]).toEqual({ lines: { l1: 10_000, l2: 1_980 } });
  });

  it("answers 400 naming the line's field for a line the order lacks, more units than bought, or yen decimals", async () => {
    const before = await itemCount();
    for (const [lines, path] of [
      [[{ line_id: "l7" }], "claim.lines.0.line_id"],
      [[{ line_id: "l2", quantity: 3 }], "claim.lines.0.quantity"],
      [[{ line_id: "l1", amount: "99.5" }], "claim.lines.0.amount"],
    ] as const) {
      const res = await post(onLines(lines));
      expect(res.status).toBe(400);
      expect(res.json().error).toMatchObject({ code: "INVALID_INPUT", issues: [{ path }] });
    }
    expect(await itemCount()).toBe(before);
  });
});

describe("GET /claims/{id}", () => {
  it("answers 200 with the public view once the claim is decided", async () => {
    const { claim_id } = (await post({ claim: CLAIM, simulation_id: "sim_api_view" })).json();
    await stack.runtime.settle(claim_id);
    const res = await call("GET", `/claims/${claim_id}`);
    expect(res.status).toBe(200);
    const view = res.json();
    expect(view).toMatchObject({
      claim_id,
      status: "DECIDED",
      dfid: `dfid_${claim_id}`,
      simulation_id: "sim_api_view",
    });
    expect(["ACCEPT", "ESCALATE", "REJECT"]).toContain(view.verdict);
    expect(view.input).toBeUndefined();
  });

  it("answers 404 for an unknown claim and 400 for a malformed id", async () => {
    expect((await call("GET", "/claims/clm_unknown")).status).toBe(404);
    expect((await call("GET", "/claims/clm_unknown")).json().error.code).toBe("NOT_FOUND");
    expect((await call("GET", "/claims/bad%20id")).status).toBe(400);
  });
});

/** The intake token, as the report routes check it themselves. */
const bearer = () => ({ authorization: `Bearer ${stack.apiToken}` });
const report = (path: string, headers: Record<string, string> = {}) =>
  call("GET", path, { headers: { ...bearer(), ...headers } });

describe("GET /reports/{simulation_id}", () => {
  it("renders the run's audit as HTML, and 404s an unknown run", async () => {
    const { claim_id } = (await post({ claim: CLAIM, simulation_id: "sim_api_report" })).json();
    await stack.runtime.settle(claim_id);
    const res = await report("/reports/sim_api_report");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.body).toContain(claim_id);
    // Claims sent to the API under a simulation_id have no batch around them: the served view, not a "crashed run".
    expect(res.body).toContain('<section class="group" id="group-sim_sim_api_report" data-group="sim_api_report"');
    expect(res.body).not.toContain("Run incomplete");
    expect(res.headers["content-security-policy"]).toMatch(/^default-src 'none'; script-src 'sha256-/);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect((await report("/reports/sim_never_ran")).status).toBe(404);
  });
});

/** GET /reports with query parameters (apiEvent builds events without a query string). */
async function served(query: Record<string, string>) {
  const result = await handler({ ...apiEvent("GET", "/reports", { headers: bearer() }), queryStringParameters: query });
  return {
    status: result.statusCode,
    headers: result.headers ?? {},
    body: result.body ?? "",
    json: () => JSON.parse(result.body ?? "null") as Json,
  };
}

describe("GET /reports", () => {
  it("renders the most recent claims sent without a simulation_id, and no others", async () => {
    stack.clock.advance(1); // received after every claim above: the served view lists claims by receipt time
    const { claim_id } = (await post({ claim: CLAIM, label: "served report" })).json();
    const { claim_id: simClaim } = (await post({ claim: CLAIM, simulation_id: "sim_api_served" })).json();
    await stack.runtime.settle(claim_id);
    await stack.runtime.settle(simClaim);
    const res = await served({ limit: "200" });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.body).toContain(`<tr data-claim-id="${claim_id}" data-verdict="`);
    expect(res.body).not.toContain(simClaim);
    const latest = await served({ limit: "1" });
    expect([...latest.body.matchAll(/<tr data-claim-id="([^"]+)"/g)].map((m) => m[1])).toEqual([claim_id]);
  });

  it("answers 400 naming the limit when it is out of range", async () => {
    for (const limit of ["0", "201", "1.5", "x"]) {
      const res = await served({ limit });
      expect(res.status, limit).toBe(400);
      expect(res.json().error.issues[0].path).toBe("limit");
    }
  });
});

describe("the report routes without a token", () => {
  const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

  it("answer a browser with the page that asks for the intake token, holding nothing of a claim", async () => {
    const { claim_id } = (await post({ claim: CLAIM, simulation_id: "sim_token_page" })).json();
    await stack.runtime.settle(claim_id);
    for (const path of ["/reports", "/reports/sim_token_page"]) {
      const res = await call("GET", path, { headers: { accept: BROWSER } });
      expect(res.status, path).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toContain('id="token"');
      expect(res.body).toContain("sessionStorage");
      expect(res.body).not.toContain(claim_id);
      expect(res.body).not.toContain("sim_token_page");
      expect(res.body).not.toContain(stack.apiToken);
      expect(res.headers["content-security-policy"]).toContain("connect-src 'self'");
      expect(res.headers["cache-control"]).toBe("no-store");
    }
  });

  it("answer 401 to any other request, 403 to a wrong token, and the report to the intake token", async () => {
    for (const accept of [undefined, "application/json", "*/*", "application/json, text/html;q=0.5"]) {
      const res = await call("GET", "/reports", { headers: accept === undefined ? {} : { accept } });
      expect(res.status, accept).toBe(401);
      expect(res.json().error.code).toBe("UNAUTHORIZED");
    }
    const wrong = await call("GET", "/reports", {
      headers: { accept: BROWSER, authorization: "Bearer not-the-token" },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.json().error.code).toBe("FORBIDDEN");
    const right = await report("/reports", { accept: BROWSER });
    expect(right.status).toBe(200);
    expect(right.body).toContain("served");
    expect(right.body).not.toContain('id="token"');
  });
});

describe("routing and failures", () => {
  it("answers /health without touching any dependency", async () => {
    const isolated = createIntakeApiHandler(
      () => {
        throw new Error("no dependencies here");
      },
      { logger: recordingLogger().logger },
    );
    const res = await isolated(apiEvent("GET", "/health"));
    expect(res.statusCode).toBe(200);
  });

  it("answers 404 for a route the API does not have", async () => {
    const res = await call("DELETE", "/claims/clm_x");
    expect(res.status).toBe(404);
    expect(res.json().error.code).toBe("NOT_FOUND");
  });

  it("answers 400 for an event that is not API Gateway payload 2.0", async () => {
    const res = await handler({ ...apiEvent("GET", "/claims/x"), version: "1.0" });
    expect(res.statusCode).toBe(400);
  });

  it("answers 500 without internals when a dependency fails, and logs the cause", async () => {
    const log = recordingLogger();
    const broken = createIntakeApiHandler(
      () => {
        throw new Error("DynamoDB table arn:aws:dynamodb:secret-table unreachable");
      },
      { logger: log.logger },
    );
    const res = await broken(apiEvent("POST", "/claims", { body: JSON.stringify({ claim: CLAIM }) }));
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain("secret-table");
    expect(JSON.parse(res.body ?? "{}").error.code).toBe("INTERNAL");
    expect(log.text()).toContain("secret-table");
  });

  it("never logs the claim text at info level", async () => {
    const log = recordingLogger();
    const logged = createIntakeApiHandler(() => stack.deps, { logger: log.logger });
    const res = await logged(
      apiEvent("POST", "/claims", {
        body: JSON.stringify({ claim_text: "my secret kettle story about order ord_008" }),
      }),
    );
    expect(res.statusCode).toBe(202);
    expect(log.lines.some((l) => l.level === "info")).toBe(true);
    expect(log.text()).not.toContain("kettle");
  });
});

describe("GET /claims", () => {
  // Runs last in this file: it moves the stack's clock forward, past every claim submitted above.
  const later = TEST_NOW + 3600_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const submitted: string[] = [];

  beforeAll(async () => {
    // Three claims a minute apart, received after everything else in this file: one accepted, one escalated, one rejected.
    const bodies = [
      { claim: { order_id: "ord_007", amount_eur: 20, category: "electronics", reason: "cracked" } },
      { claim: { order_id: "ord_016", amount_eur: 900, category: "electronics", reason: "dead on arrival" } },
      { claim: { order_id: "ord_unknown", amount_eur: 20, category: "electronics", reason: "which order?" } },
    ];
    for (const [i, body] of bodies.entries()) {
      stack.clock.set(later + i * 60_000);
      const { claim_id } = (await post(body)).json();
      submitted.push(claim_id);
      await stack.runtime.settle(claim_id);
    }
  });

  it("lists claim views newest first, page by page through next_cursor", async () => {
    const first = await call("GET", `/claims?since=${iso(later)}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.json().items.map((v: Json) => v.claim_id)).toEqual([submitted[2], submitted[1]]);
    const cursor = first.json().next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const second = await call("GET", `/claims?since=${iso(later)}&limit=2&cursor=${encodeURIComponent(cursor)}`);
    expect(second.json().items.map((v: Json) => v.claim_id)).toEqual([submitted[0]]);
    expect(second.json().next_cursor).toBeUndefined();
    // The same views GET /claims/{id} gives, the escalated one with its review.
    for (const view of [...first.json().items, ...second.json().items])
      expect(view).toEqual((await call("GET", `/claims/${view.claim_id}`)).json());
    expect(first.json().items[1]).toMatchObject({ verdict: "ESCALATE", review: { status: "PENDING" } });
  });

  it("filters by status, verdict and since", async () => {
    const ids = async (query: string) =>
      (await call("GET", `/claims?since=${iso(later)}&${query}`)).json().items.map((v: Json) => v.claim_id);
    expect(await ids("verdict=ACCEPT")).toEqual([submitted[0]]);
    expect(await ids("verdict=escalate")).toEqual([submitted[1]]);
    expect(await ids("status=DECIDED&verdict=REJECT")).toEqual([submitted[2]]);
    expect(await ids("status=RECEIVED,RUNNING")).toEqual([]);
    expect(await ids(`limit=10`)).toEqual([...submitted].reverse());
    expect(
      (await call("GET", `/claims?since=${iso(later + 61_000)}`)).json().items.map((v: Json) => v.claim_id),
    ).toEqual([submitted[2]]);
    // Without since: the newest are the three above, then the claims of the other tests.
    const all = (await call("GET", "/claims?limit=200")).json().items.map((v: Json) => v.claim_id);
    expect(all.slice(0, 3)).toEqual([...submitted].reverse());
    expect(all.length).toBeGreaterThan(3);
  });

  it.each([
    ["status=DONE", "status"],
    ["verdict=MAYBE", "verdict"],
    ["since=yesterday", "since"],
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["limit=ten", "limit"],
    ["cursor=not-a-cursor", "cursor"],
    ["order=ord_001", "order"],
  ])("answers 400 naming the parameter for ?%s", async (query, parameter) => {
    const res = await call("GET", `/claims?${query}`);
    expect(res.status).toBe(400);
    expect(res.json().error).toMatchObject({
      code: "INVALID_QUERY",
      message: expect.stringMatching(new RegExp(`^${parameter}: `)),
      issues: [{ path: parameter }],
    });
  });
});

describe("back-pressure", () => {
  it("answers 429 with Retry-After when the gate refuses, after validating the body, and stores nothing", async () => {
    const refusing = createIntakeApiHandler(() => stack.deps, {
      logger: recordingLogger().logger,
      admit: async () => ({ ok: false, open: 7, bound: 7, retryAfterS: 3 }),
    });
    const before = await itemCount();
    const res = await refusing(
      apiEvent("POST", "/claims", { body: JSON.stringify({ claim: CLAIM }), headers: { "idempotency-key": "busy-1" } }),
    );
    expect(res.statusCode).toBe(429);
    expect(res.headers?.["retry-after"]).toBe("3");
    expect(JSON.parse(res.body ?? "{}").error).toMatchObject({
      code: "OVERLOADED",
      message: expect.stringContaining("7 claims are open"),
    });
    expect((await refusing(apiEvent("POST", "/claims", { body: "{oops" }))).statusCode).toBe(400);
    expect(await itemCount()).toBe(before);
  });

  it("bounds the open claims of the local stack: the claim past --max-open is refused until claims are worked off", async () => {
    const bounded = await startTestStack({ maxOpenClaims: 2 });
    try {
      // Nothing starts the crews: every accepted claim stays open.
      await bounded.pollers.crewEvents.stop();
      const send = (i: number) =>
        bounded.handlers.intakeApi(
          apiEvent("POST", "/claims", { body: JSON.stringify({ claim: { ...CLAIM, reason: `claim ${i}` } }) }),
        );
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push((await send(i)).statusCode);
      expect(answers).toEqual([202, 202, 429, 429]);
      expect((await bounded.deps.claims.listClaims({ limit: 10 })).items).toHaveLength(2);
    } finally {
      await bounded.stop();
    }
  });
});
