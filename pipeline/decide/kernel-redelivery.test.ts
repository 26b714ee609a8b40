// The kernel's decider, without ports, on a redelivery (a verdict stored by a delivery a crash stopped) and when the
// order source or its data fails: what it asks and does, in order, and the outcome.
import { describe, expect, it } from "vitest";
import { policy } from "./decide.test-kit.ts";
import { decideKernel, DEFAULT_ORDER_SOURCE_WAIT_MS, kernelStart } from "./kernel.ts";
import type { KernelOutcome, KernelState } from "./kernel-protocol.ts";
import { accept, PUBLISH_ACCEPT, running, walk } from "./kernel.test-kit.ts";
import type { World } from "./kernel.test-kit.ts";

describe("decideKernel: a redelivery finishes what a crash left", () => {
  const first = walk({ claim: running }, accept).verdict!;
  const pending = {
    ...first,
    execution: "PENDING" as const,
    audit: first.audit!.slice(0, 2),
    events: first.events.slice(0, 1),
  };

  it.each<[string, World, string[]]>([
    [
      "a verdict stored PENDING: executed from the order read now (no decision again)",
      { claim: running, verdict: pending },
      [
        "? verdict",
        "? now",
        "? order",
        "? reserve",
        "? record_execution",
        "? claim",
        ...PUBLISH_ACCEPT,
        "publish ClaimVerdict,RefundExecuted",
        "? now",
        "? claim_update",
      ],
    ],
    [
      "a settled verdict not yet proven published: the claim read again, then published and recorded",
      { claim: running, verdict: first },
      ["? verdict", "? claim", ...PUBLISH_ACCEPT, "publish ClaimVerdict,RefundExecuted", "? now", "? claim_update"],
    ],
    [
      "a settled verdict whose claim proves its publication: only the claim's update repeated (a no-op)",
      {
        claim: { ...running, status: "DECIDED", verdict_id: first.record.verdict_id },
        verdict: first,
        taken: false,
      },
      ["? verdict", "? now", "? claim_update"],
    ],
  ])("%s", (_name, world, trace) => {
    const walked = walk(world, accept);
    expect(walked.trace).toEqual(trace);
    expect(walked.outcome).toMatchObject({ outcome: "DECIDED", verdict: { execution: "EXECUTED" } });
  });
});

describe("decideKernel: the order source or its data failing", () => {
  const created = Date.parse((accept.proposal as { created_at: string }).created_at);
  it.each<[string, World, { finalAttempt?: boolean }, string[], KernelOutcome]>([
    [
      "a source that cannot answer, within the wait: the message retried, nothing decided or written",
      { claim: running, orderFails: "ORDER_SOURCE_UNAVAILABLE", now: created + 60_000 },
      {},
      ["? verdict", "? now", "? order", "? now"],
      { outcome: "RETRY", reason: "the shop said no (waited 60 s of 600 s)" },
    ],
    [
      "a source that cannot answer on the queue's last delivery: a person decides",
      { claim: running, orderFails: "ORDER_SOURCE_UNAVAILABLE", now: created + 60_000 },
      { finalAttempt: true },
      [
        "? verdict",
        "? now",
        "? order",
        "? now",
        "audit CLAIM_NEEDS_REVIEW",
        "audit REVIEW_REQUESTED",
        "review_open",
        "publish ClaimNeedsReview,ReviewRequested",
        "claim_update",
      ],
      { outcome: "NEEDS_REVIEW", reasonCode: "ORDER_SOURCE_UNAVAILABLE" },
    ],
    [
      "a source that cannot answer past the wait: a person decides",
      { claim: running, orderFails: "ORDER_SOURCE_UNAVAILABLE", now: created + DEFAULT_ORDER_SOURCE_WAIT_MS },
      {},
      [
        "? verdict",
        "? now",
        "? order",
        "? now",
        "audit CLAIM_NEEDS_REVIEW",
        "audit REVIEW_REQUESTED",
        "review_open",
        "publish ClaimNeedsReview,ReviewRequested",
        "claim_update",
      ],
      { outcome: "NEEDS_REVIEW", reasonCode: "ORDER_SOURCE_UNAVAILABLE" },
    ],
    [
      "corrupt order data: a person decides at once",
      { claim: running, orderFails: "ORDER_DATA_INVALID" },
      {},
      [
        "? verdict",
        "? now",
        "? order",
        "? now",
        "audit CLAIM_NEEDS_REVIEW",
        "audit REVIEW_REQUESTED",
        "review_open",
        "publish ClaimNeedsReview,ReviewRequested",
        "claim_update",
      ],
      { outcome: "NEEDS_REVIEW", reasonCode: "ORDER_DATA_INVALID" },
    ],
  ])("%s", (_name, world, delivery, trace, outcome) => {
    expect(walk(world, accept, delivery)).toMatchObject({ trace, outcome });
  });

  it("sends a contract whose automatic limit cannot be read to a person, before reserving anything", () => {
    const contract = { ...policy.agent.contract, max_refund_without_escalation: 0.001 };
    const stored = walk({ claim: running }, accept).verdict!;
    const pending = { ...stored, execution: "PENDING" as const };
    const walked = walk(
      { claim: running, verdict: pending },
      accept,
      {},
      {
        ...policy,
        agent: { ...policy.agent, contract },
      },
    );
    expect(walked.trace).not.toContain("? reserve");
    expect(walked.outcome).toEqual({ outcome: "NEEDS_REVIEW", reasonCode: "ORDER_DATA_INVALID" });
  });

  it("takes a failure answered to a request that reads no order as a bug of the shell", () => {
    const state: KernelState = { ...kernelStart(accept), at: "verdict", record: running, key: "k" };
    expect(() => decideKernel(state, { kind: "failed", code: "ORDER_DATA_INVALID", message: "m" }, policy)).toThrow(
      /a failure answered verdict/,
    );
  });
});
