#!/usr/bin/env node
// Signs a test webhook event the way Stripe does and sends it to `claims serve` (README.md): the refund as the
// stand-in created it (GET /v1/refunds/{id}, its metadata naming the claim and the execution), turned into a
// `refund.updated` (or `refund.failed`) event, signed with STRIPE_WEBHOOK_SECRET — header
// `Stripe-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>" in hex>` — and POSTed.
//   node examples/stripe-standin/sign-webhook.mjs RE_ID [--status succeeded|pending|failed] [--failure-reason R]
//        [--to URL] [--print]
// Environment: STRIPE_WEBHOOK_SECRET (required), STRIPE_API_KEY and STRIPE_API_BASE (the stand-in, as for serve).
import { createHmac, randomBytes } from "node:crypto";
import process from "node:process";
import { parseArgs } from "node:util";

function fail(message) {
  process.stderr.write(`sign-webhook: ${message}\n`);
  process.exit(2);
}

/** The Stripe-Signature header of `body` signed at `t` (unix seconds) with `secret`. */
export function stripeSignature(body, secret, t) {
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      status: { type: "string", default: "succeeded" },
      "failure-reason": { type: "string" },
      to: { type: "string", default: "http://127.0.0.1:3000/webhooks/stripe" },
      print: { type: "boolean", default: false },
    },
  });
  const refundId = positionals[0];
  if (!refundId) fail("name the refund: sign-webhook.mjs re_mock_1 (the stand-in prints each refund it creates)");
  if (!["succeeded", "pending", "failed"].includes(values.status))
    fail(`--status must be succeeded, pending or failed, got ${values.status}`);
  const secret = process.env.STRIPE_WEBHOOK_SECRET?.trim();
  if (!secret) fail("set STRIPE_WEBHOOK_SECRET: the secret claims serve verifies with");
  const base = process.env.STRIPE_API_BASE?.trim() || "http://127.0.0.1:4020";
  const answer = await globalThis
    .fetch(`${base}/v1/refunds/${encodeURIComponent(refundId)}`, {
      headers: { authorization: `Bearer ${process.env.STRIPE_API_KEY ?? ""}` },
    })
    .catch((error) => fail(`cannot reach the stand-in at ${base}: ${error.cause?.message ?? error.message}`));
  if (!answer.ok) fail(`the stand-in at ${base} answered ${answer.status} for ${refundId}: ${await answer.text()}`);
  const refund = await answer.json();
  const failed = values.status === "failed";
  const event = {
    id: `evt_${randomBytes(12).toString("hex")}`,
    object: "event",
    type: failed ? "refund.failed" : "refund.updated",
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        ...refund,
        status: values.status,
        ...(failed ? { failure_reason: values["failure-reason"] ?? "expired_or_canceled_card" } : {}),
      },
    },
  };
  const body = JSON.stringify(event);
  const signature = stripeSignature(body, secret, Math.floor(Date.now() / 1000));
  if (values.print) {
    process.stdout.write(`Stripe-Signature: ${signature}\n${body}\n`);
    return;
  }
  const sent = await globalThis
    .fetch(values.to, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body,
    })
    .catch((error) => fail(`cannot reach ${values.to}: ${error.cause?.message ?? error.message}`));
  process.stdout.write(`${event.type} ${refund.id} (${values.status}) → ${sent.status} ${await sent.text()}\n`);
  if (!sent.ok) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) await main();
