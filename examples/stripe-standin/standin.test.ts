// The Stripe stand-in a person runs (server.mjs) and the webhook signer (sign-webhook.mjs): payment refs scripted by
// name, a created refund readable back, and a signature Stripe's own SDK verifies.
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { behaviourByName, startStripeStandin } from "./standin.mjs";
import { stripeSignature } from "./sign-webhook.mjs";

const KEY = "sk_test_standin";
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function refund(base: string, paymentIntent: string) {
  const answer = await fetch(`${base}/v1/refunds`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ payment_intent: paymentIntent, amount: "1200", "metadata[claim_id]": "clm_1" }),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

describe("the Stripe stand-in", () => {
  it.each([
    ["pi_ok", { kind: "succeeded" }],
    ["pi_declined", { kind: "card_declined" }],
    ["pi_insufficient", { kind: "balance_insufficient" }],
    ["pi_pending", { kind: "pending" }],
    ["pi_flaky", { kind: "server_error", times: 2 }],
  ])("tells what %s does from its name", (ref, behaviour) => {
    expect(behaviourByName(ref)).toEqual(behaviour);
  });

  it("answers by name when run for a person, and reads a created refund back with its metadata", async () => {
    const standin = await startStripeStandin(KEY, {}, { byName: true });
    close = standin.close;
    const declined = await refund(standin.base, "pi_declined");
    expect(declined.status).toBe(402);
    const created = await refund(standin.base, "pi_pending");
    expect(created.body).toMatchObject({ status: "pending", amount: 1200, metadata: { claim_id: "clm_1" } });
    const read = await fetch(`${standin.base}/v1/refunds/${String(created.body.id)}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(await read.json()).toEqual(created.body);
    const missing = await fetch(`${standin.base}/v1/refunds/re_none`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(missing.status).toBe(404);
  });
});

describe("sign-webhook.mjs", () => {
  it("signs an event as Stripe does: the SDK verifies it, and refuses it under another secret", () => {
    const body = JSON.stringify({
      id: "evt_1",
      object: "event",
      type: "refund.updated",
      data: { object: { id: "re_1" } },
    });
    const t = 1_800_000_000;
    const header = stripeSignature(body, "whsec_test", t);
    const event = Stripe.webhooks.constructEvent(body, header, "whsec_test", 300, undefined, t * 1000);
    expect(event.id).toBe("evt_1");
    expect(() => Stripe.webhooks.constructEvent(body, header, "whsec_other", 300, undefined, t * 1000)).toThrow(
      /No signatures found/,
    );
  });
});
