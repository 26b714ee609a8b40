#!/usr/bin/env node
// Stripe's refunds API on loopback for trying PAYMENT_PROVIDER=stripe locally (README.md): the wire stand-in the
// tests use (standin.mjs), with what a payment_ref does told by its name. Settings from the environment:
// STRIPE_API_KEY (required: the key Claims Crew sends), PORT (default 4020; 0 = any free port), HOST (127.0.0.1).
import process from "node:process";
import { setInterval } from "node:timers";
import { startStripeStandin } from "./standin.mjs";

const apiKey = process.env.STRIPE_API_KEY?.trim();
if (!apiKey) {
  process.stderr.write(
    "stripe-standin: set STRIPE_API_KEY (any test key, e.g. sk_test_local; Claims Crew sends the same)\n",
  );
  process.exit(2);
}
const port = Number(process.env.PORT ?? 4020);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`stripe-standin: PORT must be a port number, got ${process.env.PORT}\n`);
  process.exit(2);
}
const standin = await startStripeStandin(apiKey, {}, { port, host: process.env.HOST ?? "127.0.0.1", byName: true });
let seen = 0;
setInterval(() => {
  for (; seen < standin.refunds.length; seen++) {
    const r = standin.refunds[seen];
    process.stdout.write(
      `refund ${r.id} ${r.status} ${r.amount} cents on ${r.payment_intent ?? r.charge} (claim ${r.metadata.claim_id})\n`,
    );
  }
}, 200).unref();
process.stdout.write(`stripe-standin listening on ${standin.base} (give it to claims serve as STRIPE_API_BASE)\n`);
const stop = () => standin.close().then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
setInterval(() => {}, 1 << 30);
