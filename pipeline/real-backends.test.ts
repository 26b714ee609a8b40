// What real backends do to a claim, end to end: the in-process pipeline with the openai adapter against
// the scripted OpenAI-compatible server (adapters/llm/scripted-server.ts). Down, slow, failing and wrong
// models each end a claim in a decision or in NEEDS_REVIEW naming why; never in a customer-facing
// verdict caused by garbage. Waits are short budgets, never real 30 s waits.
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAiModel } from "../adapters/llm/openai.ts";
import { guardWithPreflight, preflightLlm } from "../adapters/llm/preflight.ts";
import {
  chatCompletion,
  closedPort,
  errorReply,
  startScriptedLlmServer,
  type RecordedRequest,
  type ScriptedLlmServer,
  type ScriptedReply,
} from "../adapters/llm/scripted-server.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
// The seed's two-agent crew (`crew_shape: two_agents`): these tests follow its Decision Maker's steps.
const config = bundledConfig(NOW, { crewShape: "two_agents" });
const CLAIM = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "The screen is dead." };
// No category: the patterns cannot read it alone, so its extraction asks the model (docs/llm.md, "Extraction by patterns").
const TEXT = "I bought order ord_001 for 299.99 EUR on 29 May 2026, it stopped working. Please refund me.";
const PROPOSAL = {
  action: "REFUND",
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "Within the contract's bounds.",
  confidence: 0.9,
};
const EXTRACTION = {
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "The screen is dead.",
  purchase_date: "2026-05-29",
  currency: "EUR",
};
/** The stand-in's garbled proposal from the issue. */
const GARBLED = { action: "REPLACE", order_id: ")", amount_eur: -9, category: "", reason: "", confidence: 1.7 };

type Role = "extract" | "analyst" | "decision" | "fixer";

function roleOf(request: RecordedRequest): Role {
  const system = (request.body as { messages: Array<{ content: string }> }).messages[0]?.content ?? "";
  if (system.startsWith("You extract")) return "extract";
  if (system.startsWith("You are the Claims Analyst")) return "analyst";
  if (system.startsWith("You are the Decision Maker")) return "decision";
  return "fixer";
}

const good: Record<Role, () => ScriptedReply> = {
  extract: () => chatCompletion(JSON.stringify(EXTRACTION)),
  analyst: () => chatCompletion("The claim is within every boundary as stated."),
  decision: () => chatCompletion(JSON.stringify(PROPOSAL)),
  fixer: () => chatCompletion(JSON.stringify({ ...PROPOSAL, reason: "Fallback proposal." })),
};

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A scripted backend: `bad[role](n)` answers the n-th request of that role (from 0), or undefined for a good answer. */
async function backend(
  bad: Partial<Record<Role, (n: number) => ScriptedReply | undefined>>,
  timeoutMs = 2_000,
): Promise<LlmPort> {
  const seen: Record<Role, number> = { extract: 0, analyst: 0, decision: 0, fixer: 0 };
  server = await startScriptedLlmServer((request) => {
    const role = roleOf(request);
    const n = seen[role]++;
    return bad[role]?.(n) ?? good[role]();
  });
  return createOpenAiModel({
    baseURL: server.baseURL,
    apiKey: "local-no-key",
    model: "scripted",
    timeoutMs,
    maxRetries: 2,
    sleep: async () => undefined,
  });
}

async function decide(llm: LlmPort, body: object = { claim: CLAIM }) {
  const p = createInProcessPipeline({ agent: config.agent, orders: config.orders, llm, clock: { now: () => NOW } });
  const { record } = await p.decide(body);
  const published = p.publisher.published.map(
    (e) => `${e.detailType}${"verdict" in e.detail ? ` ${e.detail.verdict}` : ""}`,
  );
  return { p, record, published };
}

describe("a model that cannot be reached", () => {
  it("ends structured and free-text claims in NEEDS_REVIEW LLM_UNREACHABLE naming the endpoint, without a single request (the endpoint check)", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const settings = {
      provider: "openai",
      baseURL: url,
      model: "gemma3:4b",
      apiKey: "k",
      timeoutMs: 2_000,
      maxRetries: 2,
      temperature: 0,
    } as const;
    const guarded = guardWithPreflight(createOpenAiModel({ ...settings, sleep: async () => undefined }), () =>
      preflightLlm(settings),
    );
    for (const body of [{ claim: CLAIM }, { claim_text: TEXT }]) {
      const { record, published } = await decide(guarded.port, body);
      expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
      expect(record?.reason).toContain(`LLM endpoint ${url} (model gemma3:4b) is unreachable: ECONNREFUSED`);
      expect(published).toEqual(["ClaimNeedsReview", "ReviewRequested", "ReviewOpened"]);
    }
  });

  it("names the endpoint even without the check: the crew fails on LLM_UNREACHABLE and the claim says so", async () => {
    const port = await closedPort();
    const llm = createOpenAiModel({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k", model: "m", maxRetries: 0 });
    const { record } = await decide(llm);
    expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
    expect(record?.reason).toMatch(
      /The model could not be used: LLM endpoint http:\/\/127\.0\.0\.1:\d+\/v1 is unreachable: ECONNREFUSED/,
    );
  });
});

describe("a slow or failing model", () => {
  it("a decision step that stalls past its budget is stood in for by the fixer, and the claim is decided on its facts", async () => {
    // The per-call timeout is what a stalled call runs into; the other calls must answer within it, so it leaves room
    // for a loaded machine (at 300 ms the analyst's honest answer timed out too at load 20–30, and the claim went to a person).
    const llm = await backend({ decision: () => ({ kind: "stall" }) }, 1_500);
    const { record, published } = await decide(llm);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", proposal: { reason: "Fallback proposal." } });
    expect(published).toEqual(["ClaimVerdict ACCEPT", "RefundExecuted"]);
  });

  it("a model that stalls on every call ends the claim in NEEDS_REVIEW, saying it did not answer in time", async () => {
    const llm = await backend({ analyst: () => ({ kind: "stall" }), fixer: () => ({ kind: "stall" }) }, 200);
    const { record, published } = await decide(llm);
    expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "CREW_FAILED" });
    expect(published).toEqual(["ClaimNeedsReview", "ReviewRequested", "ReviewOpened"]);
  });

  it("500s then success: the retries carry the claim to its decision", async () => {
    const llm = await backend({
      analyst: (n) => (n < 2 ? errorReply(500, "overloaded") : undefined),
      decision: (n) => (n < 1 ? errorReply(503, "busy") : undefined),
    });
    const { record } = await decide(llm);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" });
  });

  it("400 on json_schema: structured output falls back and the claim is decided", async () => {
    const seen: string[] = [];
    server = await startScriptedLlmServer((request) => {
      const body = request.body as { response_format?: { type: string } };
      seen.push(body.response_format?.type ?? "none");
      if (body.response_format?.type === "json_schema")
        return errorReply(400, "json_schema is not supported by this server");
      return good[roleOf(request)]();
    });
    const llm = createOpenAiModel({
      baseURL: server.baseURL,
      apiKey: "k",
      model: "m",
      timeoutMs: 2_000,
      sleep: async () => undefined,
    });
    const { record } = await decide(llm, { claim_text: TEXT });
    expect(record, record?.reason).toMatchObject({
      status: "DECIDED",
      verdict: "ACCEPT",
      claim: { order_id: "ord_001", amount_eur: 299.99 },
    });
    expect(seen.filter((t) => t === "json_schema")).toHaveLength(1);
  });
});

describe("a model that answers badly", () => {
  it("empty content from the Decision Maker (also after the repair round) goes to the fixer", async () => {
    const llm = await backend({ decision: () => chatCompletion("") });
    const { record, p } = await decide(llm);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", proposal: { reason: "Fallback proposal." } });
    expect(
      p
        .auditEvents()
        .some(
          (e) =>
            e.event_type === "LLM_CALL" &&
            (e.details.error as { code?: string } | undefined)?.code === "LLM_EMPTY_RESPONSE",
        ),
    ).toBe(true);
  });

  it("cut-off JSON is repaired in one round", async () => {
    const llm = await backend({
      decision: (n) =>
        n === 0 ? chatCompletion(JSON.stringify(PROPOSAL).slice(0, 40), { finishReason: "length" }) : undefined,
    });
    const { record } = await decide(llm);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", proposal: { reason: PROPOSAL.reason } });
  });

  it("valid JSON with garbled values never becomes a verdict: the schema and the self-check stop it, then a person decides", async () => {
    const llm = await backend({
      decision: () => chatCompletion(JSON.stringify(GARBLED)),
      fixer: () => chatCompletion(JSON.stringify(GARBLED)),
    });
    const { record, published } = await decide(llm);
    expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "CREW_FAILED" });
    expect(published).toEqual(["ClaimNeedsReview", "ReviewRequested", "ReviewOpened"]);
  });

  it("a schema-valid garbled proposal (confidence 1) fails the self-check, gets one repair round, then goes to review, never REJECT ORDER_NOT_FOUND", async () => {
    const garbled = { ...GARBLED, confidence: 1 };
    const llm = await backend({ decision: () => chatCompletion(JSON.stringify(garbled)) });
    const { record, published, p } = await decide(llm);
    expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "CLAIMS_SELF_CHECK_FAILED" });
    expect(record?.reason).toMatch(/Order id "\)" is not the claim's order id "ord_001"/);
    expect(published).toEqual(["ClaimNeedsReview", "ReviewRequested", "ReviewOpened"]);
    const checks = p.auditEvents().filter((e) => e.event_type === "CLAIMS_SELF_CHECK_FAILED");
    expect(checks.map((e) => e.state)).toEqual(["RUNNING", "NEEDS_REVIEW"]);
    const repair = server!.requests.filter((r) => roleOf(r) === "decision")[1]!.body as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(repair.messages.at(-1)?.content).toMatch(
      /failed the agent's self-check[^]*<step_error>\n(- .*\n)+<\/step_error>[^]*<customer_claim>\n\{"order_id":"ord_001","amount_eur":299\.99\}\n<\/customer_claim>[^]*an amount_eur of at most 299\.99 and above 0/,
    );
  });

  it("a garbled first proposal that the repair round fixes is decided on the repaired one", async () => {
    const llm = await backend({
      decision: (n) =>
        n === 0 ? chatCompletion(JSON.stringify({ ...PROPOSAL, order_id: "ord_999", amount_eur: 2999.9 })) : undefined,
    });
    const { record, p } = await decide(llm);
    expect(record).toMatchObject({
      status: "DECIDED",
      verdict: "ACCEPT",
      proposal: { order_id: "ord_001", amount_eur: 299.99 },
    });
    expect(
      p
        .auditEvents()
        .filter((e) => e.event_type === "CLAIMS_SELF_CHECK_FAILED")
        .map((e) => [e.state, e.details.failures]),
    ).toEqual([
      ["RUNNING", [expect.objectContaining({ check: "order_id" }), expect.objectContaining({ check: "amount" })]],
    ]);
  });

  it("an extractor that returns an amount the text does not state sends the claim to review instead of the crew", async () => {
    const llm = await backend({ extract: () => chatCompletion(JSON.stringify({ ...EXTRACTION, amount_eur: 450 })) });
    const { record, published } = await decide(llm, { claim_text: TEXT });
    expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "AMOUNT_NOT_IN_TEXT" });
    expect(published).toEqual(["ClaimNeedsReview", "ReviewRequested", "ReviewOpened"]);
  });
});
