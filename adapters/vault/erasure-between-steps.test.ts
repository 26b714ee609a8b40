// An erasure landing between two steps that compare what they stored (issue 38), made to land there by the test
// (no timing): intake's repair of a half-written submission, and a crew-queue answer resent from a session. What
// they compare is what survives an erasure, so a retry is never a conflict and a resend never a second message.
// And an erasure landing during a handler invocation, whose key states are remembered until it ends (issue 37):
// it holds from the next invocation on.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { createAuditEvent } from "../../core/integrity/audit.ts";
import type { AuditEvent } from "../../core/integrity/audit.ts";
import { ERASED } from "../../core/privacy/sealing.ts";
import { localClientConfig } from "../../local/emulators.ts";
import type { CrewQueueMessage } from "../../pipeline/messages.ts";
import { crewMessageDedupeId } from "../../pipeline/messages.ts";
import { openAuditEvents, sealAuditEvents } from "../../pipeline/personal-data.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { claimFixture } from "../aws/contract.test-kit.ts";
import { createDynamoPorts } from "../aws/dynamo-ports.ts";
import { useEmulatedAws } from "../aws/emulators.test-kit.ts";
import { envelopeVault } from "./envelope.ts";
import { inKeyInvocation, rememberedPerInvocation } from "./invocation-keys.ts";
import { keyFileStore } from "./key-files.ts";
import { sealTableClient } from "./sealed-table.ts";

const aws = useEmulatedAws();
const WORDS = "Kettle leaks. Zelda Quirinius, zelda@example.com";
const keysIn = () => keyFileStore(join(mkdtempSync(join(tmpdir(), "erasure-steps-")), "keys"));

describe("an erasure between intake's two writes", () => {
  it("leaves the retry that repaired the claim the same request, not a conflict", async () => {
    const store = keysIn();
    const tableName = await aws.newTable();
    const client = sealTableClient(
      DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(aws.emulators.dynamodbEndpoint))),
      envelopeVault(store, { cacheKeys: false }),
    );
    const { claims } = createDynamoPorts({
      client,
      tableName,
      clock: { now: () => Date.parse("2025-03-01T10:00:00Z") },
    });
    const claim = { order_id: "ord_clm_1", amount_eur: 49.99, category: "electronics", reason: WORDS };
    const first: ClaimRecord = claimFixture("clm_1", { input: { claim }, claim });
    const idempotency = { key: "k", requestHash: "h" };
    // The first request has claimed its key; before its claim's put, a retry repairs the claim from the key's item,
    // then the customer is erased. The first request's put then finds the claim, which reads [erased].
    let retry: Awaited<ReturnType<typeof claims.createClaim>> | undefined;
    let armed = true;
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Item?: { entity?: string }; ConditionExpression?: string };
        if (armed && input.Item?.entity === "claim") {
          armed = false;
          retry = await claims.createClaim(claimFixture("clm_2", { input: { claim }, claim }), idempotency);
          await store.destroy("clm_1");
        }
        return next(args);
      },
      { step: "initialize", name: "eraseBetweenWrites", priority: "high" },
    );
    const result = await claims.createClaim(first, idempotency);
    expect(retry).toMatchObject({ created: false, sameRequest: true, record: { claim_id: "clm_1" } });
    expect(result).toMatchObject({ created: true, record: { claim_id: "clm_1", claim: { reason: ERASED } } });
    // The key still names the claim: a third try is the same request again.
    expect(await claims.createClaim(claimFixture("clm_3"), idempotency)).toMatchObject({
      created: false,
      sameRequest: true,
      record: { claim_id: "clm_1" },
    });
  });
});

describe("an erasure between a crew answer's send and its resend from the session", () => {
  it("gives the resent answer the deduplication id of the first", async () => {
    const store = keysIn();
    const vault = envelopeVault(store, { cacheKeys: false });
    const answer = (text: string, tokens: number): CrewQueueMessage & { audit: AuditEvent[] } => ({
      type: "agent.step.completed",
      crewId: "clm_1",
      correlationId: "corr_1",
      output: {},
      audit: [
        createAuditEvent({
          dfid: "dfid_clm_1",
          type: "LLM_CALL",
          state: "EXTRACTING",
          at: "2025-03-01T10:00:00.000Z",
          details: { claim_id: "clm_1", input: { claim_text: text }, tokens },
        }),
      ],
    });
    const sent = answer(WORDS, 12);
    const kept = await sealAuditEvents(sent.audit, vault); // the session's outbox, sealed
    await store.destroy("clm_1");
    const resent = { ...sent, audit: await openAuditEvents(kept, vault) };
    expect(JSON.stringify(resent)).not.toContain("Quirinius");
    expect(JSON.stringify(resent)).toContain(ERASED);
    expect(crewMessageDedupeId(resent)).toBe(crewMessageDedupeId(sent));
    // Another model call for the step (another audit on the decision path) is still told apart.
    expect(crewMessageDedupeId(answer(WORDS, 13))).not.toBe(crewMessageDedupeId(sent));
  });
});

describe("an erasure during a handler invocation", () => {
  const setup = () => {
    const dir = join(mkdtempSync(join(tmpdir(), "erasure-invocation-")), "keys");
    // The handler's vault as deployed (key states remembered per invocation), and `claims erase` in another process.
    return {
      vault: envelopeVault(rememberedPerInvocation(keyFileStore(dir)), { cacheKeys: false }),
      eraser: keyFileStore(dir),
    };
  };

  it("holds from the next invocation on: what the invocation sealed after it is unreadable once it ends", async () => {
    const { vault, eraser } = setup();
    const before = await inKeyInvocation(() => vault.seal("clm_1", WORDS));
    const during = await inKeyInvocation(async () => {
      expect(await vault.open(before)).toBe(WORDS); // the invocation reads the key
      expect(await eraser.destroy("clm_1")).toBe("destroyed");
      // The rest of this invocation still has the key it read: it finishes its step with the customer's words.
      expect(await vault.open(before)).toBe(WORDS);
      return vault.seal("clm_1", `${WORDS} (a note written after the erasure)`);
    });
    expect(during).not.toBe(ERASED);
    // The next invocation reads the tombstone: nothing of either text opens, nothing is sealed anew.
    await inKeyInvocation(async () => {
      expect(await vault.open(before)).toBeUndefined();
      expect(await vault.open(during)).toBeUndefined();
      expect(await vault.seal("clm_1", WORDS)).toBe(ERASED);
    });
  });

  it("holds at once in the invocation that erases through its own vault", async () => {
    const { vault } = setup();
    await inKeyInvocation(async () => {
      const token = await vault.seal("clm_2", WORDS);
      expect(await vault.destroy("clm_2")).toBe("destroyed");
      expect(await vault.open(token)).toBeUndefined();
      expect(await vault.seal("clm_2", WORDS)).toBe(ERASED);
    });
  });

  it("holds for an invocation that begins after it while one begun before still runs", async () => {
    const { vault, eraser } = setup();
    const token = await vault.seal("clm_3", WORDS);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let didRead: () => void = () => undefined;
    const read = new Promise<void>((resolve) => {
      didRead = resolve;
    });
    const early = inKeyInvocation(async () => {
      const first = await vault.open(token);
      didRead();
      await gate; // still running when the erasure lands and the next invocation starts
      return [first, await vault.open(token)];
    });
    await read;
    await eraser.destroy("clm_3");
    const late = await inKeyInvocation(() => vault.open(token));
    release();
    expect(late).toBeUndefined();
    expect(await early).toEqual([WORDS, WORDS]);
    // Outside any invocation (a CLI command, a test): every use reads the store.
    expect(await vault.open(token)).toBeUndefined();
  });
});
