// The kernel handler on the proposal queue, when the order source cannot answer: the message is reported as a batch
// item failure (SQS delivers it again after its visibility timeout) until the queue's last receive, which ends the
// claim NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE instead of letting it die in the DLQ.
import type { Context } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { recordingLogger, sqsEvent } from "../local/testing/stack-fixture.ts";
import { OrderSourceUnavailableError } from "../pipeline/errors.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { handleCrewMessage } from "../pipeline/orchestrator.ts";
import { handleAgentStep } from "../pipeline/worker.ts";
import { createKernelHandler } from "./kernel.ts";
import { bundledConfig } from "../pipeline/bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

async function proposalWithTheShopDown() {
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: [],
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
    overrides: {
      orders: {
        getOrder: () => Promise.reject(new OrderSourceUnavailableError("order API GET …/orders/ord_001: HTTP 503")),
      },
    },
  });
  const claim = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead on arrival" };
  const submitted = await p.submit({ claim }, { claimId: "clm_q" });
  if (!submitted.ok) throw new Error(submitted.message);
  for (let work = p.queues.take(); work; work = p.queues.take()) {
    if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
    else if (work.queue === "agent-steps") await handleAgentStep(work.message, p.deps);
    else if (work.queue === "proposals") return { p, body: JSON.stringify(work.message) };
  }
  throw new Error("the claim never reached the kernel");
}

describe("the kernel handler while the order source cannot answer", () => {
  it("fails the message back to the queue before its last receive, and ends the claim in review on the last", async () => {
    const { p, body } = await proposalWithTheShopDown();
    const log = recordingLogger();
    const handler = createKernelHandler(() => p.deps, { logger: log.logger, maxReceives: 5 });
    const context = {} as Context;

    for (const receiveCount of [1, 4]) {
      const out = await handler(sqsEvent([{ body, receiveCount }]), context);
      expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m0" }]);
      expect(await p.claims.getClaim("clm_q")).toMatchObject({ status: "RUNNING" });
    }
    expect(log.lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      "message will be retried",
      "message will be retried",
    ]);
    expect(log.text()).toMatch(/claim clm_q waits for its order \(receive 4 of 5\): order API GET/);

    const last = await handler(sqsEvent([{ body, receiveCount: 5 }]), context);
    expect(last.batchItemFailures).toEqual([]);
    expect(await p.claims.getClaim("clm_q")).toMatchObject({
      status: "NEEDS_REVIEW",
      reason_code: "ORDER_SOURCE_UNAVAILABLE",
    });
  });
});
