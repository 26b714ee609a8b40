// The payment-provider registry: names that settlements can record, secrets whose links and variables are each
// one provider's, webhook routes served only with their provider, the functions and links each configuration
// deploys — and docs/payments.md's tables, which must say what the registry holds.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PaymentProviderNameSchema } from "../core/kernel/settlement.ts";
import { LINKS, ROUTES, WEBHOOK_ROUTES, awsFunctionKeys, linksOf, servedRouteKeys } from "./manifest.ts";
import type { RouteKey } from "./manifest.ts";
import {
  PAYMENT_PROVIDERS,
  PROVIDER_SECRET_LINKS,
  missingExecutorSecrets,
  paymentEnvironment,
  secretsOf,
  settingsOf,
  webhookSecretLink,
} from "./payment-provider.ts";
import { ORDER_SOURCE_SECRET_LINKS } from "./order-source.ts";

const docs = readFileSync(new URL("../docs/payments.md", import.meta.url), "utf8");

describe("the registry's declarations", () => {
  it("name each provider once, as a name settlements and RefundSettled / RefundFailed can record", () => {
    const names = PAYMENT_PROVIDERS.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(PaymentProviderNameSchema.safeParse(name).success, name).toBe(true);
  });

  it("give every secret a link and a variable of its own, apart from the app's own links", () => {
    const all = PAYMENT_PROVIDERS.flatMap((p) => secretsOf(p).map((s) => s.secret));
    const appLinks = [...Object.values(LINKS).filter((l) => typeof l === "string"), ...ORDER_SOURCE_SECRET_LINKS];
    expect(new Set(all.map((s) => s.link)).size).toBe(all.length);
    expect(new Set(all.map((s) => s.env)).size).toBe(all.length);
    expect(PROVIDER_SECRET_LINKS).toEqual(all.map((s) => s.link));
    for (const s of all) expect(appLinks).not.toContain(s.link);
  });

  it("sign each webhook with a secret of the provider that the webhook function reads", () => {
    for (const p of PAYMENT_PROVIDERS) {
      if (!("webhook" in p)) {
        expect(webhookSecretLink(p.name), p.name).toBeUndefined();
        continue;
      }
      const signing = secretsOf(p).find((s) => s.role === p.webhook.secret);
      expect(signing?.secret.readBy, p.name).toBe("paymentWebhook");
      expect(webhookSecretLink(p.name)).toBe(signing?.secret.link);
    }
  });
});

describe("what each configuration deploys", () => {
  it("routes each webhook to the webhook function, open, and serves it only with its provider", () => {
    const withWebhook = PAYMENT_PROVIDERS.filter((p) => "webhook" in p);
    expect(Object.keys(WEBHOOK_ROUTES).sort()).toEqual(withWebhook.map((p) => `POST ${p.webhook.path}`).sort());
    const webhookKeys = Object.keys(WEBHOOK_ROUTES) as RouteKey[];
    for (const key of webhookKeys) expect(ROUTES[key]).toMatchObject({ auth: "none", fn: "paymentWebhook" });
    const others = (Object.keys(ROUTES) as RouteKey[]).filter((k) => !webhookKeys.includes(k));
    expect(servedRouteKeys(undefined).sort()).toEqual(others.sort());
    expect(servedRouteKeys("simulated").sort()).toEqual(others.sort());
    expect(servedRouteKeys("stripe").sort()).toEqual([...others, "POST /webhooks/stripe"].sort());
  });

  it("deploys the refund executor with any provider and the webhook function only with one that has a webhook", () => {
    expect(awsFunctionKeys(undefined)).not.toContain("refundExecutor");
    expect(awsFunctionKeys(undefined)).not.toContain("paymentWebhook");
    expect(awsFunctionKeys("simulated")).toContain("refundExecutor");
    expect(awsFunctionKeys("simulated")).not.toContain("paymentWebhook");
    expect(awsFunctionKeys("stripe")).toEqual(expect.arrayContaining(["refundExecutor", "paymentWebhook"]));
  });

  it("links each payment function to exactly the configured provider's secrets it reads", () => {
    expect(linksOf("refundExecutor", { paymentProvider: "stripe" })).toContain("StripeApiKey");
    expect(linksOf("refundExecutor", { paymentProvider: "stripe" })).not.toContain("StripeWebhookSecret");
    expect(linksOf("paymentWebhook", { paymentProvider: "stripe" })).toContain("StripeWebhookSecret");
    expect(linksOf("paymentWebhook", { paymentProvider: "stripe" })).not.toContain("StripeApiKey");
    for (const fn of ["refundExecutor", "paymentWebhook"] as const)
      for (const provider of ["simulated", undefined] as const)
        expect(
          linksOf(fn, { paymentProvider: provider }).filter((l) => PROVIDER_SECRET_LINKS.includes(l as never)),
        ).toEqual([]);
    expect(linksOf("kernel", { paymentProvider: "stripe" })).not.toContain("StripeApiKey");
  });

  it("passes PAYMENT_PROVIDER and only the deployed settings that are set to the payment functions", () => {
    expect(paymentEnvironment("stripe", { STRIPE_API_BASE: "http://127.0.0.1:1", STRIPE_API_KEY: "sk" })).toEqual({
      PAYMENT_PROVIDER: "stripe",
    });
    expect(paymentEnvironment("simulated", {})).toEqual({ PAYMENT_PROVIDER: "simulated" });
  });

  it("names the secrets a provider's refund executor cannot pay without", () => {
    expect(missingExecutorSecrets("stripe", {}).map((s) => s.env)).toEqual(["STRIPE_API_KEY"]);
    expect(missingExecutorSecrets("stripe", { STRIPE_API_KEY: "  " }).map((s) => s.env)).toEqual(["STRIPE_API_KEY"]);
    expect(missingExecutorSecrets("stripe", { STRIPE_API_KEY: "sk_x" })).toEqual([]);
    expect(missingExecutorSecrets("simulated", {})).toEqual([]);
  });
});

describe("docs/payments.md says what the registry holds", () => {
  it("lists every provider with what it does, in registry order", () => {
    const rows = PAYMENT_PROVIDERS.map((p) => `| \`${p.name}\` | ${p.description} |`);
    expect(docs).toContain(["| provider | what it does |", "|---|---|", ...rows].join("\n"));
  });

  it("lists every secret and setting with its variable, where it lives on AWS and who reads it", () => {
    const rows = PAYMENT_PROVIDERS.flatMap((p) => [
      ...secretsOf(p).map(
        ({ secret }) =>
          `| \`${p.name}\` | \`${secret.env}\` | secret \`${secret.link}\` | \`${secret.readBy}\` | ${secret.description} |`,
      ),
      ...settingsOf(p).map(
        ({ setting }) =>
          `| \`${p.name}\` | \`${setting.env}\` | ${setting.deployed ? "variable" : "not deployed"} | the payment functions | ${setting.description} |`,
      ),
    ]);
    expect(docs).toContain(
      ["| provider | variable (locally) | on AWS | read by | what it is |", "|---|---|---|---|---|", ...rows].join(
        "\n",
      ),
    );
  });

  it("names files for adding a provider that exist", () => {
    const section = docs.slice(docs.indexOf("## Adding a payment provider"), docs.indexOf("## What could not be"));
    const files = [...section.matchAll(/`((?:app|adapters|functions|infra)\/[^`<>]+\.ts)`/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThan(4);
    for (const file of files) expect(() => readFileSync(new URL(`../${file}`, import.meta.url)), file).not.toThrow();
  });
});
