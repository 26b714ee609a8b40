// `claims deploy-check` against a stand-in account speaking Lambda's and Service Quotas' wire protocols, through
// the real AWS SDK clients: what a 10-quota account gets, what stops a deploy, what a big account gets.
import { LambdaClient } from "@aws-sdk/client-lambda";
import { ServiceQuotasClient } from "@aws-sdk/client-service-quotas";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountReadError } from "../adapters/aws/errors.ts";
import { startAccountStandIn } from "../adapters/aws/testing/account-standin.ts";
import type { AccountStandIn } from "../adapters/aws/testing/account-standin.ts";
import { formatDeployCheck, runDeployCheck } from "./deploy-check.ts";

let standIn: AccountStandIn;
let lambda: LambdaClient;
let serviceQuotas: ServiceQuotasClient;

beforeAll(async () => {
  standIn = await startAccountStandIn();
  const config = {
    region: "eu-west-1",
    endpoint: standIn.endpoint,
    credentials: { accessKeyId: standIn.accessKeyId, secretAccessKey: standIn.secretAccessKey },
    maxAttempts: 1,
  };
  lambda = new LambdaClient(config);
  serviceQuotas = new ServiceQuotasClient(config);
});
afterAll(async () => {
  lambda.destroy();
  serviceQuotas.destroy();
  await standIn.stop();
});

const check = (env: Record<string, string> = {}, stage = "production") =>
  runDeployCheck({ stage, region: "eu-west-1", env, lambda, serviceQuotas });

describe("claims deploy-check", () => {
  it("on a new account (10): deployable without reservation, warns of throttles and says how to ask for more", async () => {
    standIn.account.concurrentExecutions = 10;
    const result = await check();
    expect(result.exitCode).toBe(0);
    expect(result.quotas.lambda).toEqual({
      concurrentExecutions: 10,
      unreservedConcurrentExecutions: 10,
      reservedByThisStage: 0,
    });
    const text = formatDeployCheck("production", result);
    expect(text).toContain(
      "ok    Lambda concurrent executions: eu-west-1 has 10 concurrent executions (10 unreserved), below the 140 that reserving needs: no reserved concurrency",
    );
    expect(text).toMatch(
      /warn {2}Lambda concurrent executions: the queue consumers may run 55 at once \(LLM_MAX_CONCURRENCY=10\), the HTTP API and its authorizer up to 40 more, but eu-west-1 allows 10 in all: under load invocations are throttled/,
    );
    expect(text).toContain("request-service-quota-increase --service-code lambda --quota-code L-B99A9384");
    // EventBridge's defaults, read by name from Service Quotas.
    expect(result.quotas).toMatchObject({ putEventsPerSecond: 10_000, invocationsPerSecond: 18_750, rulesPerBus: 300 });
    expect(text).toContain("ok    EventBridge rules per event bus: 3 of 300");
    expect(text).toContain("deployable: nothing above stops `sst deploy`");
    expect(standIn.calls).toEqual(
      expect.arrayContaining(["GetAccountSettings", "ListServiceQuotas events", "ListAWSDefaultServiceQuotas events"]),
    );
  });

  it("stops (exit 1) when CLAIMS_RESERVED_CONCURRENCY=on asks more than the account has, naming the quota", async () => {
    standIn.account.concurrentExecutions = 50;
    const result = await check({ CLAIMS_RESERVED_CONCURRENCY: "on" });
    expect(result.exitCode).toBe(1);
    expect(formatDeployCheck("production", result)).toMatch(
      /stop {2}Lambda concurrent executions: CLAIMS_RESERVED_CONCURRENCY=on reserves 40 concurrent executions \(intakeApi 20, authorizer 20\), but eu-west-1 has 50 concurrent executions/,
    );
  });

  it("on a 1,000 account: reserves the request path, no throttling warning; an applied quota beats the default", async () => {
    standIn.account.concurrentExecutions = 1000;
    standIn.account.applied = { events: [{ QuotaName: "Rules per event bus", QuotaCode: "L-X", Value: 2 }] };
    try {
      const result = await check({ CLAIMS_RESERVED_CONCURRENCY: "on", PAYMENT_PROVIDER: "stripe" });
      expect(result.findings.find((f) => f.quota === "Lambda concurrent executions")).toMatchObject({ level: "ok" });
      expect(result.findings.filter((f) => f.level === "warn")).toEqual([]);
      // With payments the app puts 4 rules on its bus: an account allowing 2 cannot take them.
      expect(result.findings.find((f) => f.quota === "EventBridge rules per event bus")).toMatchObject({
        level: "stop",
        message: expect.stringContaining("the app puts 4 rules on its bus, but eu-west-1 allows 2"),
      });
      expect(result.exitCode).toBe(1);
    } finally {
      standIn.account.applied = {};
    }
  });

  it("warns when the bus's publishing rate at the submit limit exceeds the region's PutEvents quota", async () => {
    standIn.account.concurrentExecutions = 1000;
    standIn.account.applied = {
      events: [{ QuotaName: "PutEvents throttle limit in transactions per second", QuotaCode: "L-Y", Value: 100 }],
    };
    try {
      const result = await check({ CLAIMS_API_RATE_LIMIT: "100", CLAIMS_API_SUBMIT_RATE_LIMIT: "50" });
      expect(result.findings.find((f) => f.quota === "EventBridge PutEvents per second")).toMatchObject({
        level: "warn",
        message: expect.stringContaining("publishes up to 200 events a second; eu-west-1 allows 100"),
      });
    } finally {
      standIn.account.applied = {};
    }
  });

  it("says it cannot read the account (no rights) instead of guessing, and names the setting it cannot use", async () => {
    standIn.account.denied = true;
    try {
      await expect(check()).rejects.toThrow(AccountReadError);
      await expect(check()).rejects.toThrow(/lambda:GetAccountSettings failed: AccessDeniedException/);
    } finally {
      standIn.account.denied = false;
    }
    await expect(check({ LLM_MAX_CONCURRENCY: "1" })).rejects.toThrow(
      /LLM_MAX_CONCURRENCY="1" is invalid: expected an integer from 2 to 1000/,
    );
  });
});
