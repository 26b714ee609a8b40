// The EventBridge publisher against the local bus through the real SDK: request limits, per-entry
// failures retried (the bus's failure hook), permanent entry errors and refused requests not retried.
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { afterEach, describe, expect, it } from "vitest";
import { busEntry, DETAIL_TYPES, KERNEL_SOURCE } from "../../core/kernel/events.ts";
import type { BusEntry } from "../../core/kernel/events.ts";
import { BUS_NAME } from "../../app/manifest.ts";
import type { BusEvent } from "../../local/eventbridge/server.ts";
import { localClientConfig } from "../../local/emulators.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { createEventBridgePublisher, putEventsEntrySize } from "./eventbridge-publisher.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";

const aws = useEmulatedAws();
const removals: (() => void)[] = [];

afterEach(async () => {
  await aws.emulators.bus.settled();
  aws.emulators.bus.setFailureHook(undefined);
  for (const remove of removals.splice(0)) remove();
});

function setup(options: { busName?: string; limits?: { maxRequestBytes?: number }; checkBus?: boolean } = {}) {
  const client = new EventBridgeClient(localClientConfig(aws.emulators.eventsEndpoint));
  const counter = createRequestCounter();
  countRequests(client, counter);
  const seen: BusEvent[] = [];
  removals.push(
    aws.emulators.bus.addTarget("verdicts", (e) => void seen.push(e)),
    () => client.destroy(),
  );
  const publisher = createEventBridgePublisher({
    client,
    busName: options.busName ?? BUS_NAME,
    sleep: async () => undefined,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.checkBus ? { checkBus: true } : {}),
  });
  const delivered = async () => {
    await aws.emulators.bus.settled();
    return seen.map((e) => e.detail);
  };
  return { publisher, counter, delivered, seen };
}

/** `n` valid ClaimVerdict entries; `pad` lengthens each reason to reach a size. */
const verdicts = (n: number, pad = 0): Extract<BusEntry, { detailType: "ClaimVerdict" }>[] =>
  Array.from({ length: n }, (_, i) =>
    busEntry("ClaimVerdict", {
      verdict_id: `vrd_${i}`,
      claim_id: `clm_${i}`,
      dfid: `dfid_clm_${i}`,
      verdict: "ACCEPT",
      reason_code: "VALIDATION_PASSED",
      reason: `ok${"p".repeat(pad)}`,
      order_id: "ord_001",
      amount_eur: 10,
      policy_kind: "REFUND",
      idempotency_key: "a".repeat(64),
      decided_at: "2026-06-01T12:00:00.000Z",
    }),
  );

describe("putEventsEntrySize", () => {
  it("counts UTF-8 bytes of Source, DetailType, Detail and Resources, and 14 for Time", () => {
    expect(putEventsEntrySize({ Source: "ab", DetailType: "c", Detail: '{"€":1}' })).toBe(2 + 1 + 9);
    expect(
      putEventsEntrySize({ Source: "a", DetailType: "b", Detail: "{}", Resources: ["rr"], Time: new Date(0) }),
    ).toBe(1 + 1 + 2 + 2 + 14);
  });
});

describe("EventBridge publisher", () => {
  it("publishes 25 entries in 3 PutEvents calls, in order, with the kernel source on the claims bus", async () => {
    const { publisher, counter, delivered, seen } = setup();
    const entries = verdicts(25);
    await publisher.publish(entries);
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 3 });
    expect(await delivered()).toEqual(entries.map((e) => e.detail));
    expect(new Set(seen.map((e) => `${e.source}|${e["detail-type"]}`))).toEqual(
      new Set([`${KERNEL_SOURCE}|${DETAIL_TYPES.verdict}`]),
    );
  });

  it("splits requests by size: three 100 KB entries take two calls", async () => {
    const { publisher, counter, delivered } = setup();
    await publisher.publish(verdicts(3, 100_000));
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 2 });
    expect(await delivered()).toHaveLength(3);
  });

  it("refuses an entry over 256 KiB before sending anything", async () => {
    const { publisher, counter } = setup();
    await expect(publisher.publish([...verdicts(1), ...verdicts(1, 300_000)])).rejects.toMatchObject({
      code: "MESSAGE_TOO_LARGE",
    });
    expect(counter.snapshot().total).toBe(0);
  });

  it("sends again the entries the bus failed, and each event arrives once", async () => {
    const { publisher, counter, delivered } = setup();
    const failedOnce = new Set<string>();
    aws.emulators.bus.setFailureHook((entry) => {
      const id = JSON.parse(String(entry.Detail)).verdict_id as string;
      if (Number(id.slice(4)) % 2 === 1 && !failedOnce.has(id)) {
        failedOnce.add(id);
        return { errorCode: "InternalFailure", errorMessage: "injected" };
      }
      return undefined;
    });
    const entries = verdicts(10);
    await publisher.publish(entries);
    expect(failedOnce.size).toBe(5);
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 2 });
    expect(((await delivered()) as { verdict_id: string }[]).map((d) => d.verdict_id).sort()).toEqual(
      entries.map((e) => e.detail.verdict_id).sort(),
    );
  });

  it("gives up on an entry that keeps failing after the bounded attempts, naming bus and error", async () => {
    const { publisher, counter, delivered } = setup();
    aws.emulators.bus.setFailureHook((entry) =>
      String(entry.Detail).includes('"vrd_1"')
        ? { errorCode: "ThrottlingException", errorMessage: "slow down" }
        : undefined,
    );
    const publish = publisher.publish(verdicts(3));
    await expect(publish).rejects.toMatchObject({
      code: "PUBLISH_FAILED",
      retryable: true,
      failures: [{ detailType: "ClaimVerdict", errorCode: "ThrottlingException", errorMessage: "slow down" }],
    });
    await expect(publish).rejects.toThrow(/1 of 3 events not published to claims/);
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 4 });
    expect(((await delivered()) as { verdict_id: string }[]).map((d) => d.verdict_id)).toEqual(["vrd_0", "vrd_2"]);
  });

  it("does not retry an entry error that cannot heal (a bus that does not exist)", async () => {
    const { publisher, counter } = setup({ busName: "no-such-bus" });
    await expect(publisher.publish(verdicts(2))).rejects.toMatchObject({
      code: "PUBLISH_FAILED",
      retryable: false,
      message: expect.stringContaining("NotFoundException"),
    });
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 1 });
  });

  it("checking the bus, refuses to publish to a bus that does not exist, loudly and before any PutEvents (AWS would accept and drop them)", async () => {
    const { publisher, counter, delivered } = setup({ busName: "no-such-bus", checkBus: true });
    for (let i = 0; i < 2; i++)
      await expect(publisher.publish(verdicts(2))).rejects.toMatchObject({
        code: "PUBLISH_REJECTED",
        message: expect.stringContaining("the event bus no-such-bus does not exist"),
      });
    // Checked once: the answer stands for the container's life.
    expect(counter.snapshot().byService.EventBridge).toEqual({ DescribeEventBus: 1 });
    expect(await delivered()).toEqual([]);
  });

  it("checking the bus, checks it once and then publishes as before", async () => {
    const { publisher, counter, delivered } = setup({ checkBus: true });
    await publisher.publish(verdicts(2));
    await publisher.publish(verdicts(3));
    expect(counter.snapshot().byService.EventBridge).toEqual({ DescribeEventBus: 1, PutEvents: 2 });
    expect(await delivered()).toHaveLength(5);
  });

  it.each([
    "NotAuthorizedForSourceException",
    "NotAuthorizedForDetailTypeException",
    "InvalidAccountIdException",
    "RedactionFailure",
  ])("does not retry an entry that fails with %s (not transient, as AWS documents it)", async (errorCode) => {
    const { publisher, counter } = setup();
    aws.emulators.bus.setFailureHook(() => ({ errorCode, errorMessage: "refused" }));
    await expect(publisher.publish(verdicts(2))).rejects.toMatchObject({
      code: "PUBLISH_FAILED",
      retryable: false,
      failures: [{ errorCode }, { errorCode }],
    });
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 1 });
  });

  it("does not retry a request the service refuses (ValidationException)", async () => {
    // Limits raised past the real ones so that the bus, not the publisher, refuses the request.
    const { publisher, counter } = setup({ limits: { maxRequestBytes: 1_000_000 } });
    await expect(publisher.publish(verdicts(2, 200_000))).rejects.toMatchObject({
      code: "PUBLISH_REJECTED",
      message: expect.stringContaining("ValidationException"),
    });
    expect(counter.snapshot().byService.EventBridge).toEqual({ PutEvents: 1 });
  });

  it("publishes nothing for an empty list, and nothing at all when one entry breaks its event's schema", async () => {
    const { publisher, counter } = setup();
    await publisher.publish([]);
    const [good] = verdicts(1);
    const bad = [
      { detailType: "ClaimVerdict", detail: [] },
      { detailType: "ClaimVerdict", detail: { ...good!.detail, verdict: "MAYBE" } },
      { detailType: "RefundExecuted", detail: { ...good!.detail } },
      { detailType: "Unheard", detail: {} },
    ];
    for (const entry of bad) {
      await expect(publisher.publish([good!, entry as unknown as BusEntry])).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringMatching(/entry 2/),
      });
    }
    expect(counter.snapshot().total).toBe(0);
  });
});
