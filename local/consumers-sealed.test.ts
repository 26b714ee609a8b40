// The local stack's queue consumers with serve's vault: whoever hands a consumer a record — the event-source poller,
// a second consumer racing it (chaos on the emulators), a redelivery — hands it the body as sent, sealed. A kernel
// handed a sealed proposal hashed the pd1: token into the proposal's idempotency key, refused it
// IDEMPOTENCY_KEY_MISMATCH and recorded a second verdict of the claim; wired with the vault it opens the body first.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { servedVault } from "../adapters/vault/key-files.ts";
import { sealText } from "../adapters/vault/sealed-table.ts";
import { bundledConfig } from "../pipeline/bundled-config.test-kit.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { handleCrewMessage } from "../pipeline/orchestrator.ts";
import { handleAgentStep } from "../pipeline/worker.ts";
import { QUEUES } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";
import type { createLogger } from "../functions/observability/logger.ts";
import { createQueueConsumers } from "./consumers.ts";
import { recordingLogger, sqsEvent } from "./testing/stack-fixture.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const QUEUE_SETTINGS = Object.fromEntries(
  (Object.keys(QUEUES) as QueueRole[]).map((r) => [r, { url: `q-${r}`, maxReceives: QUEUES[r].maxReceives }]),
) as Record<QueueRole, { url: string; maxReceives: number }>;

/** A claim run up to its proposal, and that proposal's message body as the worker sent it (plain). */
async function proposal() {
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
  const claim = { order_id: "ord_001", amount_eur: 49.99, category: "electronics", reason: "Zelda Quirinius: it hums" };
  const submitted = await p.submit({ claim }, { claimId: "clm_s" });
  if (!submitted.ok) throw new Error(submitted.message);
  for (let work = p.queues.take(); work; work = p.queues.take()) {
    if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
    else if (work.queue === "agent-steps") await handleAgentStep(work.message, p.deps);
    else if (work.queue === "proposals") return { p, body: JSON.stringify(work.message) };
  }
  throw new Error("the claim never reached the kernel");
}

/** The proposal handed, sealed as the SQS client sent it, to the kernel consumer (wired with the vault or not). */
async function decideSealed(wired: "with the vault" | "without") {
  const vault = servedVault(join(mkdtempSync(join(tmpdir(), "consumers-sealed-")), "keys"));
  const { p, body } = await proposal();
  const sealed = await sealText(vault, body);
  expect(sealed).not.toContain("Quirinius");
  const consumers = createQueueConsumers(
    () => () => p.deps,
    () => ({ logger: recordingLogger().logger as ReturnType<typeof createLogger> }),
    QUEUE_SETTINGS,
    wired === "with the vault" ? vault : undefined,
  );
  await consumers.proposals(sqsEvent([{ body: sealed }]), {} as Context);
  return p.claims.getClaim("clm_s");
}

describe("the local stack's queue consumers with serve's vault", () => {
  it("open a sealed proposal they are handed and decide it on the proposal as sent", async () => {
    const decided = await decideSealed("with the vault");
    expect(decided).toMatchObject({ status: "DECIDED" });
    expect(decided?.reason_code).not.toBe("IDEMPOTENCY_KEY_MISMATCH");
  });

  it("without the vault, a kernel hashes the sealed proposal and refuses it (what chaos found)", async () => {
    expect(await decideSealed("without")).toMatchObject({ reason_code: "IDEMPOTENCY_KEY_MISMATCH" });
  });
});
