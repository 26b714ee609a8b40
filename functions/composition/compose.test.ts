// The composition root: the deployed `handler` exports run on SST links plus the SDK's standard
// endpoint environment (here pointing at the emulators), ports read their link only when used, and a
// refused agent stops what needs it.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frozenClock } from "../../core/crew/index.ts";
import { CONFIG_PATH, TEST_NOW, apiEvent, startTestStack } from "../../local/testing/stack-fixture.ts";
import { pipelineWaitsFor } from "../../pipeline/deps.ts";
import { composeDeps, retentionFrom } from "./compose.ts";
import { loadConfig } from "./config-file.ts";
import { ConfigLoadError } from "./errors.ts";
import { policyFromConfig } from "../../app/policy-format.ts";
import type { ClaimsPolicy } from "../../app/policy-format.ts";
import { loadPolicyFile, policyPathFrom } from "./policy.ts";
import { composeLlmDeps } from "./llm.ts";
import { AgentRefusedError, ResourceLinkError } from "./errors.ts";

/** Writes the deployed policy of scenarios/config.yaml (as infra/policy.ts does), changed by `edit`, and returns its path. */
function writePolicy(edit: (policy: ClaimsPolicy) => unknown = (p) => p): string {
  const policy = policyFromConfig(loadConfig(CONFIG_PATH, TEST_NOW), readFileSync(CONFIG_PATH, "utf8"), {
    source: "scenarios/config.yaml",
    demo: true,
  });
  const path = join(mkdtempSync(join(tmpdir(), "policy-")), "claims-policy.json");
  writeFileSync(path, JSON.stringify(edit(policy)));
  return path;
}
import { linkedResources } from "./resources.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

describe("productionDeps", () => {
  it("lets the deployed intake handler store and read a claim through Resource and the AWS_ENDPOINT_URL_* settings", async () => {
    Object.assign(process.env, {
      AWS_REGION: "us-east-1",
      // The run's credentials, as an operator's tool reads them from local-credentials.json.
      AWS_ACCESS_KEY_ID: stack.emulators.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: stack.emulators.credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: stack.emulators.dynamodbEndpoint,
      AWS_ENDPOINT_URL_SQS: stack.emulators.sqsEndpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: stack.emulators.eventsEndpoint,
      CLAIMS_POLICY_PATH: writePolicy(),
      LLM_PROVIDER: "rules",
    });
    const { handler } = await import("../intake-api.ts");
    const body = JSON.stringify({
      claim: { order_id: "ord_004", amount_eur: 50, category: "prohibited_category", reason: "Not as described" },
    });
    const posted = await handler(apiEvent("POST", "/claims", { body }));
    expect(posted.statusCode).toBe(202);
    const { claim_id } = JSON.parse(posted.body ?? "{}") as { claim_id: string };
    expect((await stack.deps.claims.getClaim(claim_id))?.claim?.order_id).toBe("ord_004");
    const read = await handler(apiEvent("GET", `/claims/${claim_id}`));
    expect(read.statusCode).toBe(200);
  });
});

describe("composeDeps", () => {
  const noLinks = linkedResources((name) => {
    throw new Error(`"${name}" is not linked`);
  });

  it("reads no link while composing, and names the link a port needs when it is used", async () => {
    const deps = composeDeps({
      resources: noLinks,
      clients: stack.clients,
      clock: frozenClock(TEST_NOW),
      policy: stack.config,
    });
    await expect(async () => deps.claims.getClaim("clm_x")).rejects.toThrow(ResourceLinkError);
    await expect(async () => deps.claims.getClaim("clm_x")).rejects.toThrow(/Resource\.Table is not available/);
    await expect(async () => deps.queues.requestExtraction("clm_x")).rejects.toThrow(
      /Resource\.ExtractionQueue is not available/,
    );
    await expect(async () => deps.publisher.publish([])).rejects.toThrow(/Resource\.Bus is not available/);
  });

  it("reads the deployed policy from CLAIMS_POLICY_PATH, and refuses an agent the registry refuses when the agent is first needed", () => {
    const path = writePolicy((p) => ({ ...p, agent: { ...p.agent, version: "2.0.0" } }));
    const deps = composeDeps({
      resources: noLinks,
      clients: stack.clients,
      clock: frozenClock(TEST_NOW),
      env: { CLAIMS_POLICY_PATH: path },
    });
    expect(() => deps.agent.agentId).toThrow(AgentRefusedError);
    expect(() => deps.registry.agents).toThrow(/refused by the registry/);
  });

  it("gives a model only to the functions composed with functions/composition/llm.ts; the others refuse, naming them", async () => {
    const env = { LLM_PROVIDER: "rules" };
    const plain = composeDeps({
      resources: noLinks,
      clients: stack.clients,
      clock: frozenClock(TEST_NOW),
      policy: stack.config,
      env,
    });
    expect(() => plain.llm.provider).toThrow(/only worker and intake-extract call a model/);
    await expect(plain.llm.complete({ task: "extract_claim", system: "s", messages: [] })).rejects.toThrow(
      /only worker and intake-extract/,
    );
    const withLlm = composeLlmDeps({
      resources: noLinks,
      clients: stack.clients,
      clock: frozenClock(TEST_NOW),
      policy: stack.config,
      env,
    });
    expect(withLlm.llm.provider).toBe("rules");
    const extracted = await withLlm.llm.complete({
      task: "extract_claim",
      system: "s",
      messages: [],
      facts: { task: "extract_claim", claim_text: "Order ord_001, 45 EUR, the kettle leaks" },
    });
    expect(extracted.ok).toBe(true);
  });

  it("puts a network model behind its endpoint check: on a cold start with the model down, a call fails at once naming URL and model", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const env = {
      LLM_PROVIDER: "openai",
      LLM_BASE_URL: `http://127.0.0.1:${port}`,
      LLM_MODEL: "gemma3:4b",
      LLM_API_KEY: "k",
    };
    const deps = composeLlmDeps({
      resources: noLinks,
      clients: stack.clients,
      clock: frozenClock(TEST_NOW),
      policy: stack.config,
      env,
    });
    const result = await deps.llm.complete({
      task: "analyze_claim",
      system: "s",
      messages: [{ role: "user", content: "u" }],
    });
    expect(result).toMatchObject({
      ok: false,
      code: "LLM_UNREACHABLE",
      attempts: 0,
      retryable: false,
      message: `LLM endpoint http://127.0.0.1:${port}/v1 (model gemma3:4b) is unreachable: ECONNREFUSED`,
    });
  });

  it("checks the order API beside the first read of a cold start (ORDER_SOURCE=http), once, and says what is wrong", async () => {
    const asked: string[] = [];
    const shop = createServer((req, res) => {
      asked.push(`${req.url} ${req.headers.authorization}`);
      res.writeHead(401).end();
    });
    await new Promise<void>((resolve) => shop.listen(0, "127.0.0.1", () => resolve()));
    try {
      const heard: unknown[] = [];
      const deps = composeDeps({
        resources: linkedResources((name) => (name === "OrderApiToken" ? { value: "wrong-token" } : undefined)),
        clients: stack.clients,
        clock: frozenClock(TEST_NOW),
        policy: stack.config,
        env: { ORDER_SOURCE: "http", ORDER_API_URL: `http://127.0.0.1:${(shop.address() as AddressInfo).port}/api` },
        onOrderApiCheck: (check) => heard.push(check),
      });
      await expect(deps.orders.getOrder("ord_001")).rejects.toThrow(/refused the token/);
      await expect(deps.orders.getOrder("ord_002")).rejects.toThrow(/refused the token/);
      await expect.poll(() => heard).toHaveLength(1);
      expect(heard[0]).toEqual({
        ok: false,
        problem: expect.stringMatching(/claims-crew-order-api-check: answered HTTP 401/),
      });
      expect(asked.filter((a) => a.includes("claims-crew-order-api-check"))).toEqual([
        "/api/orders/claims-crew-order-api-check Bearer wrong-token",
      ]);
    } finally {
      shop.closeAllConnections();
      await new Promise<void>((resolve) => shop.close(() => resolve()));
    }
  });

  it("derives the crew's step deadlines from the LLM budget (LLM_TIMEOUT_MS over the config's timeout_ms)", () => {
    const from = (env: Record<string, string>) =>
      composeDeps({
        resources: noLinks,
        clients: stack.clients,
        clock: frozenClock(TEST_NOW),
        policy: stack.config,
        env,
      }).settings.timeouts;
    expect(from({})).toEqual(pipelineWaitsFor(30_000).timeouts);
    expect(from({ LLM_TIMEOUT_MS: "90000" })).toEqual(pipelineWaitsFor(90_000).timeouts);
  });
});

describe("the deployed policy (pre-parsed JSON)", () => {
  it("is found under LAMBDA_TASK_ROOT, or at CLAIMS_POLICY_PATH (relative paths under the function's root)", () => {
    expect(policyPathFrom({ LAMBDA_TASK_ROOT: "/var/task" })).toBe("/var/task/claims-policy.json");
    expect(policyPathFrom({ LAMBDA_TASK_ROOT: "/var/task", CLAIMS_POLICY_PATH: "p/x.json" })).toBe(
      "/var/task/p/x.json",
    );
    expect(policyPathFrom({ CLAIMS_POLICY_PATH: "/etc/x.json" })).toBe("/etc/x.json");
  });

  it("round-trips the config file's contract and LLM defaults", () => {
    const config = loadConfig(CONFIG_PATH, TEST_NOW);
    const policy = loadPolicyFile(writePolicy());
    expect(policy.agent).toEqual(config.agent);
    // The four-eyes bound reaches the deployed functions (the bundled config's second_approval_above_eur).
    expect(policy.agent.review).toEqual({ secondApprovalAboveEur: 1500, dueMs: 24 * 3_600_000 });
    expect(policy.llm).toEqual(config.llm);
    expect(policy).toMatchObject({
      run_id: config.simulationId,
      demo: true,
      source: "scenarios/config.yaml",
      contract_format: "claims-crew",
    });
    const shadow = { ...config.agent, contract: { ...config.agent.contract, max_refund_without_escalation: 100 } };
    expect(loadPolicyFile(writePolicy((p) => ({ ...p, agent: { ...p.agent, shadow } }))).agent.shadow).toEqual(shadow);
    // The crew shape reaches the deployed functions (docs/llm.md, "Crew shape"); absent in the bundled config.
    expect(policy.agent.crewShape).toBeUndefined();
    const twoAgents = writePolicy((p) => ({ ...p, agent: { ...p.agent, crewShape: "two_agents" } }));
    expect(loadPolicyFile(twoAgents).agent.crewShape).toBe("two_agents");
  });

  it.each([
    [
      "a missing file",
      () => "/nonexistent/claims-policy.json",
      /policy file not found: \/nonexistent\/claims-policy.json/,
    ],
    [
      "a file that is not JSON",
      () => {
        const path = writePolicy();
        writeFileSync(path, "agents: [yaml]");
        return path;
      },
      /is not JSON/,
    ],
    [
      "a limit that is not a number",
      () =>
        writePolicy((p) => ({
          ...p,
          agent: { ...p.agent, contract: { ...p.agent.contract, max_refund_without_escalation: "500" } },
        })),
      /agent\.contract\.max_refund_without_escalation: /,
    ],
    ["another format", () => writePolicy((p) => ({ ...p, format: "claims-crew.policy/v0" })), /format: /],
  ])("refuses %s at cold start with a message naming the problem", (_case, path, message) => {
    expect(() => loadPolicyFile(path())).toThrow(ConfigLoadError);
    expect(() => loadPolicyFile(path())).toThrow(message);
  });
});

describe("retentionFrom", () => {
  it.each([
    [{}, { sessionsMs: 30 * 86_400_000 }],
    [
      { CLAIMS_SESSION_RETENTION_DAYS: "7", CLAIMS_AUDIT_RETENTION_DAYS: "400" },
      { sessionsMs: 7 * 86_400_000, auditMs: 400 * 86_400_000 },
    ],
    [{ CLAIMS_SESSION_RETENTION_DAYS: "never", CLAIMS_AUDIT_RETENTION_DAYS: "" }, {}],
  ])("reads %j as %j", (env, expected) => {
    expect(retentionFrom(env)).toEqual(expected);
  });

  it.each(["0", "-3", "a week"])("refuses %j, naming the variable", (value) => {
    expect(() => retentionFrom({ CLAIMS_AUDIT_RETENTION_DAYS: value })).toThrow(
      /CLAIMS_AUDIT_RETENTION_DAYS must be a positive number of days or "never"/,
    );
  });
});
