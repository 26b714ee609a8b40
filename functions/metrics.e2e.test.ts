// Every handler writes the CloudWatch EMF records of what it did, on the local stack (the production
// handlers over the real SDK and the emulators), read back from stdout as CloudWatch Logs would read them:
// claims taken in through the intake API, decided by the kernel (ACCEPT, ESCALATE), one ending NEEDS_REVIEW,
// an escalation approved by a reviewer, the sweep's backlog, the scheduled batch as a simulation.
import type { APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiEvent, sqsEvent, startTestStack } from "../local/testing/stack-fixture.ts";
import { LOCAL_METRICS_NAMESPACE, METRICS, METRICS_SERVICE } from "../app/metrics-catalog.ts";
import type { MetricName } from "../app/metrics-catalog.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;

/** One EMF record as CloudWatch reads it: `_aws` metadata, then dimensions, metadata and values at the root. */
interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit?: string }[] }[];
  };
  [key: string]: unknown;
}

/** A metric value as one record states it: its directive's dimension sets (names) and values, and who wrote it. */
interface Point {
  readonly name: MetricName;
  readonly value: number;
  readonly dims: Record<string, string>;
  readonly sets: string[][];
  readonly fn: string;
}

const CLAIM = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" };
const ESCALATED = { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Arrived broken" };

let stack: Stack;
const stdout: string[] = [];
const lines: Emf[] = [];
let points: Point[] = [];
let claims: { accept: string; text: string; escalate: string; review: string };
const restore: (() => void)[] = [];

/**
 * Checks one line against the EMF specification and the catalogue, and returns its points: a line may hold several
 * metric directives (one per group of dimension sets), each reading its values from the root.
 */
function readEmf(line: string): Point[] {
  const emf = JSON.parse(line) as Emf;
  lines.push(emf);
  expect(typeof emf._aws.Timestamp).toBe("number");
  expect(emf._aws.CloudWatchMetrics.length).toBeGreaterThanOrEqual(1);
  expect(emf.service).toBe(METRICS_SERVICE);
  const fn = typeof emf.function === "string" ? emf.function : String(emf.function_name);
  return emf._aws.CloudWatchMetrics.flatMap((directive) => {
    expect(directive.Namespace).toBe(LOCAL_METRICS_NAMESPACE);
    const dims: Record<string, string> = {};
    for (const set of directive.Dimensions) {
      expect(set).toContain("service");
      for (const key of set) {
        expect(typeof emf[key], `dimension ${key} is a string at the root`).toBe("string");
        dims[key] = emf[key] as string;
      }
    }
    const sets = directive.Dimensions.map((set) => set.filter((k) => k !== "service"));
    return directive.Metrics.map((m) => {
      expect(Object.hasOwn(METRICS, m.Name), `${m.Name} is in the catalogue`).toBe(true);
      const fact = METRICS[m.Name as MetricName];
      // A unit left out is EMF's default, None.
      expect(m.Unit ?? "None").toBe(fact.unit);
      for (const set of sets)
        expect(
          fact.dimensions.map((d) => d.join(",")),
          `${m.Name} is published under a catalogued dimension set`,
        ).toContain(set.join(","));
      const value = emf[m.Name];
      expect(typeof value, `${m.Name} has a number at the root`).toBe("number");
      return { name: m.Name as MetricName, value: value as number, dims, sets, fn };
    });
  });
}

const of = (fn: string, name: MetricName) => points.filter((p) => p.fn === fn && p.name === name);

function authorizerEvent(token: string): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: "2.0",
    type: "REQUEST",
    routeArn: "arn:test",
    routeKey: "POST /claims",
    rawPath: "/claims",
    rawQueryString: "",
    cookies: [],
    identitySource: [`Bearer ${token}`],
    headers: { authorization: `Bearer ${token}` },
    requestContext: {} as APIGatewayRequestAuthorizerEventV2["requestContext"],
  };
}

beforeAll(async () => {
  // Outside Lambda metrics are opt-in (a local run's stdout is the CLI's), and Powertools counts a cold start only
  // on an on-demand instance, which Lambda announces in AWS_LAMBDA_INITIALIZATION_TYPE. Handlers read both when built.
  const env = { POWERTOOLS_METRICS_DISABLED: "false", AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand" };
  for (const [key, value] of Object.entries(env)) {
    const saved = process.env[key];
    process.env[key] = value;
    restore.push(() => (saved === undefined ? delete process.env[key] : (process.env[key] = saved)));
  }
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return true;
  });
  restore.push(() => write.mockRestore());
  stack = await startTestStack();
  const h = stack.handlers;
  const post = async (body: unknown) =>
    JSON.parse((await h.intakeApi(apiEvent("POST", "/claims", { body: JSON.stringify(body) }))).body ?? "{}")
      .claim_id as string;

  expect(await h.authorizer(authorizerEvent(stack.apiToken))).toEqual({ isAuthorized: true });
  expect(await h.reviewerAuthorizer(authorizerEvent(stack.reviewerToken))).toEqual({
    isAuthorized: true,
    context: { reviewer_id: "reviewer" }, // CLAIMS_REVIEWER_TOKEN alone is the reviewer "reviewer"
  });
  claims = {
    accept: await post({ claim: CLAIM }),
    text: await post({ claim_text: "I bought order ord_006 for 299.99 EUR, the screen is dead" }),
    escalate: await post({ claim: ESCALATED }),
    review: await post({
      claim_text: "Hi, the sofa I bought last month is falling apart, I paid 300 EUR. Please help.",
    }),
  };
  for (const id of Object.values(claims)) await stack.runtime.settle(id);
  await h.sweep();
  const approved = await h.reviewApi(
    apiEvent("POST", `/claims/${claims.escalate}/review`, {
      body: JSON.stringify({ decision: "APPROVE" }), // recorded under the credential's reviewer
    }),
  );
  expect(approved.statusCode, approved.body).toBe(200);
  await h.timers(
    sqsEvent([{ body: JSON.stringify({ claim_id: claims.accept, due_ms: stack.clock.now() }) }]),
    {} as never,
  );
  const run = await h.batch();
  expect(run.mode).toBe("simulation");
  await stack.drained();
  await stack.stop();
  for (const undo of restore.splice(0).reverse()) undo();
  points = stdout
    .join("")
    .split("\n")
    .filter((l) => l.includes('"_aws"'))
    .flatMap(readEmf);
}, 120_000);

afterAll(async () => {
  for (const undo of restore.splice(0).reverse()) undo();
  await stack?.stop();
});

describe("EMF records of each handler", () => {
  it("every function records its cold start once", () => {
    const cold = points.filter((p) => p.name === "ColdStart");
    for (const fn of [
      "intakeApi",
      "authorizer",
      "reviewerAuthorizer",
      "reviewApi",
      "intakeExtract",
      "orchestrator",
      "worker",
      "kernel",
      "timer",
      "sweep",
      "batch",
    ]) {
      expect(
        cold.filter((p) => p.dims.function_name === fn),
        fn,
      ).toHaveLength(1);
    }
  });

  it("intake-api counts each claim it stores, by input kind", () => {
    const received = of("intakeApi", "ClaimsReceived");
    expect(received).toHaveLength(4);
    expect(received.filter((p) => p.dims.Input === "claim").map((p) => p.dims.Flow)).toEqual(["live", "live"]);
    expect(received.filter((p) => p.dims.Input === "claim_text")).toHaveLength(2);
  });

  it("intake-extract and the worker time every LLM call by task, with tokens and failures", () => {
    const extract = of("intakeExtract", "LlmCalls");
    expect(extract.length).toBeGreaterThanOrEqual(2);
    expect(new Set(extract.map((p) => p.dims.Task))).toEqual(new Set(["extract_claim"]));
    const tasks = new Set(of("worker", "LlmCalls").map((p) => p.dims.Task));
    expect(tasks).toEqual(expect.objectContaining(new Set(["analyze_claim", "decide_refund"])));
    for (const fn of ["intakeExtract", "worker"]) {
      expect(of(fn, "LlmCallLatency").every((p) => p.value >= 0)).toBe(true);
      expect(of(fn, "LlmPromptTokens").some((p) => p.value > 0)).toBe(true);
      expect(
        of(fn, "LlmCallFailures")
          .filter((p) => p.sets.length === 1 && p.sets[0]!.join() === "Task")
          .every((p) => p.value === 0 || p.value === 1),
      ).toBe(true);
    }
  });

  it("intake-extract counts the claim it sends to review, with its reason, review and latency", () => {
    const live = (name: MetricName) => of("intakeExtract", name).filter((p) => p.dims.Flow === "live");
    const needs = live("ClaimsNeedsReview");
    expect(needs).toHaveLength(1);
    expect(needs[0]!.dims.ReasonCode).toMatch(/^[A-Z_]+$/);
    expect(live("ReviewsOpened").map((p) => p.dims.Origin)).toEqual(["NEEDS_REVIEW"]);
    expect(live("DecisionLatency").map((p) => p.dims.Outcome)).toEqual(["NEEDS_REVIEW"]);
  });

  it("the kernel counts each live decision by verdict and reason, the refund it reserves, the review it opens and the latency", () => {
    const decided = of("kernel", "ClaimsDecided").filter((p) => p.dims.Flow === "live");
    expect(decided.map((p) => `${p.dims.Verdict} ${p.dims.ReasonCode}`).sort()).toEqual([
      "ACCEPT VALIDATION_PASSED",
      "ACCEPT VALIDATION_PASSED",
      "ESCALATE AMOUNT_ABOVE_LIMIT",
    ]);
    expect(decided[0]!.sets).toEqual([
      ["Flow", "Verdict"],
      ["Flow", "Verdict", "ReasonCode"],
    ]);
    const refunds = of("kernel", "RefundedAmountEur").filter((p) => p.dims.Flow === "live");
    expect(refunds.map((p) => p.value)).toEqual([299.99, 299.99]);
    expect(refunds.every((p) => p.dims.AuthorisedBy === "kernel")).toBe(true);
    expect(
      of("kernel", "RefundsExecuted")
        .filter((p) => p.dims.Flow === "live")
        .map((p) => p.value),
    ).toEqual([1, 1]);
    expect(
      of("kernel", "ReviewsOpened")
        .filter((p) => p.dims.Flow === "live")
        .map((p) => p.dims.Origin),
    ).toEqual(["ESCALATE"]);
    expect(
      of("kernel", "DecisionLatency")
        .filter((p) => p.dims.Flow === "live")
        .map((p) => p.dims.Outcome)
        .sort(),
    ).toEqual(["ACCEPT", "ACCEPT", "ESCALATE"]);
  });

  it("the review API counts the decision and the refund the reviewer authorised", () => {
    expect(of("reviewApi", "ReviewsDecided").map((p) => p.dims)).toEqual([
      expect.objectContaining({ Flow: "live", Decision: "APPROVED" }),
    ]);
    expect(of("reviewApi", "RefundedAmountEur").map((p) => [p.value, p.dims.AuthorisedBy])).toEqual([
      [1200, "reviewer"],
    ]);
  });

  it("the sweep reports the review backlog per flow", () => {
    const pending = of("sweep", "PendingReviews");
    expect(pending.map((p) => [p.dims.Flow, p.value])).toEqual([
      ["live", 2],
      ["simulation", 0],
    ]);
    expect(of("sweep", "OldestPendingReviewAge").every((p) => p.value >= 0)).toBe(true);
  });

  it("counts each refund in its order's currency, and only EUR orders' refunds as EUR (the batch's USD and JPY apart)", () => {
    const perCurrency = of("kernel", "RefundedAmount");
    expect(perCurrency.every((p) => p.sets.length === 1 && p.sets[0]!.includes("Currency"))).toBe(true);
    const live = perCurrency.filter((p) => p.dims.Flow === "live");
    expect(live.map((p) => [p.value, p.dims.Currency])).toEqual([
      [299.99, "EUR"],
      [299.99, "EUR"],
    ]);
    const simulated = perCurrency.filter((p) => p.dims.Flow === "simulation");
    expect(new Set(simulated.map((p) => p.dims.Currency))).toContain("EUR");
    expect(simulated.some((p) => p.dims.Currency !== "EUR")).toBe(true);
    // The EUR metric holds exactly the EUR refunds: nothing in USD or JPY is added into it.
    const eur = of("kernel", "RefundedAmountEur").filter((p) => p.dims.Flow === "simulation");
    expect(eur.map((p) => p.value).sort()).toEqual(
      simulated
        .filter((p) => p.dims.Currency === "EUR")
        .map((p) => p.value)
        .sort(),
    );
  });

  it("the batch's claims are counted as a simulation, apart from live ones", () => {
    const received = of("batch", "ClaimsReceived");
    expect(received.length).toBeGreaterThan(10);
    expect(new Set(received.map((p) => p.dims.Flow))).toEqual(new Set(["simulation"]));
    expect(of("kernel", "ClaimsDecided").some((p) => p.dims.Flow === "simulation")).toBe(true);
  });

  it("writes what one kernel invocation measured for a claim as one line: its decision, refund and latency together", () => {
    // The invocation that decided the claim (a redelivery under load is another invocation, with lines of its own).
    const kernel = lines.filter(
      (l) =>
        l.function === "kernel" &&
        l.claim_id === claims.accept &&
        l._aws.CloudWatchMetrics.some((d) => d.Metrics.some((m) => m.Name === "ClaimsDecided")),
    );
    expect(kernel).toHaveLength(1);
    // ColdStart joins whichever invocation is the function's first (this claim's, when the kernel met it first).
    const names = kernel[0]!._aws.CloudWatchMetrics.flatMap((d) => d.Metrics.map((m) => m.Name));
    expect(names.filter((name) => name !== "ColdStart").sort()).toEqual(
      ["ClaimsDecided", "DecisionLatency", "RefundedAmount", "RefundedAmountEur", "RefundsExecuted"].sort(),
    );
    // The members the records share are written once: the line holds one `Flow`, one `claim_id`.
    expect(JSON.stringify(kernel[0]).match(/"Flow":/g)).toHaveLength(1);
  });

  it("the timer and the orchestrator only record their cold start here (they end no claim on this path)", () => {
    expect(points.filter((p) => p.fn === "timer" && p.name !== "ColdStart")).toEqual([]);
    expect(points.filter((p) => p.fn === "orchestrator" && p.name !== "ColdStart" && p.dims.Flow === "live")).toEqual(
      [],
    );
  });
});
