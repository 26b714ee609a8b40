// `claims teardown`: the plan it prints and the order it deletes in, against moto's EventBridge, Cognito and
// DynamoDB (an independent implementation of the AWS APIs, when installed) through the real SDK clients. The
// `sst remove` step is a stand-in that checks what the real one needs before it can succeed — no rule of anyone
// else on the bus, no deletion protection on the pool — and then deletes what SST would.
import {
  CognitoIdentityProviderClient,
  CreateUserPoolCommand,
  DeleteUserPoolCommand,
  DescribeUserPoolCommand,
  ListUserPoolsCommand,
} from "@aws-sdk/client-cognito-identity-provider";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListBackupsCommand,
  ListTablesCommand,
} from "@aws-sdk/client-dynamodb";
import {
  CreateEventBusCommand,
  DeleteEventBusCommand,
  DeleteRuleCommand,
  EventBridgeClient,
  ListRulesCommand,
  ListTargetsByRuleCommand,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoAvailable, motoClientConfig, useMoto } from "../adapters/aws/testing/moto.ts";
import { describeTeardown, discoverTeardown, executeTeardown, STAGE_SECRETS, stageTablePattern } from "./teardown.ts";
import type { TeardownClients, TeardownPlan } from "./teardown.ts";

describe("the teardown plan", () => {
  const plan: TeardownPlan = {
    stage: "production",
    bus: "claims",
    othersRules: [{ name: "shop-analytics", targetIds: ["t1", "t2"] }],
    pool: { id: "eu-west-1_abc", name: "claims-crew-production-reviewers", protected: true },
    table: { name: "claims-crew-production-TableTable-a1b2c3d4", protected: true },
    production: true,
  };

  it("prints, in order, others' rules, the pool's protection, sst remove, the retained table with its backup, the secrets", () => {
    const lines = describeTeardown(plan, { keepTable: false, backup: true });
    expect(lines.slice(1, 6)).toEqual([
      "  1. the rules others added to the bus claims, with their targets: shop-analytics (2 targets)",
      "  2. deletion protection of the reviewers' user pool claims-crew-production-reviewers (eu-west-1_abc): turned off",
      expect.stringMatching(
        /^ {2}3\. `sst remove --stage production` \(its protect lifted for this command\): .*the bus claims and its rules.*the reviewers' pool and every reviewer in it$/,
      ),
      "  4. the retained table claims-crew-production-TableTable-a1b2c3d4: an on-demand backup first (it survives the table), then deletion protection off, deleted",
      `  5. the stage's secrets: ${STAGE_SECRETS.join(", ")} (those that are set)`,
    ]);
    expect(describeTeardown(plan, { keepTable: true, backup: true }).join("\n")).toContain("is KEPT (--keep-table)");
  });

  it("finds the stage's table by SST's name for it, and no other stage's", () => {
    expect(stageTablePattern("dev").test("claims-crew-dev-TableTable-a1b2c3d4")).toBe(true);
    expect(stageTablePattern("dev").test("claims-crew-dev-a-TableTable-a1b2c3d4")).toBe(false);
    expect(stageTablePattern("dev").test("claims-crew-dev2-TableTable-a1b2c3d4")).toBe(false);
  });

  it("stops at a failed sst remove and deletes nothing after it", async () => {
    const sent: string[] = [];
    const send = async (command: object) => {
      sent.push(command.constructor.name);
      return { UserPool: {} };
    };
    const clients = { events: { send }, cognito: { send }, dynamo: { send } } as unknown as TeardownClients;
    const sst: string[][] = [];
    await expect(
      executeTeardown(
        plan,
        clients,
        async (args) => (sst.push([...args]), 1),
        { keepTable: false, backup: true },
        () => undefined,
      ),
    ).rejects.toThrow(/`sst remove --stage production` failed \(exit 1\); nothing after it was done/);
    expect(sent).toEqual([
      "RemoveTargetsCommand",
      "DeleteRuleCommand",
      "DescribeUserPoolCommand",
      "UpdateUserPoolCommand",
    ]);
    expect(sst).toEqual([["remove", "--stage", "production"]]);
  });
});

const moto = useMoto();

describe.skipIf(!motoAvailable())("claims teardown on moto (EventBridge, Cognito, DynamoDB through the SDK)", () => {
  let clients: TeardownClients & {
    events: EventBridgeClient;
    cognito: CognitoIdentityProviderClient;
    dynamo: DynamoDBClient;
  };
  const stage = "production";
  const table = "claims-crew-production-TableTable-a1b2c3d4";
  beforeAll(async () => {
    const config = motoClientConfig(moto.endpoint);
    clients = {
      events: new EventBridgeClient(config),
      cognito: new CognitoIdentityProviderClient(config),
      dynamo: new DynamoDBClient(config),
    };
    // The stage as a deploy leaves it: the bus with the app's rule, and a consumer's rule added from elsewhere.
    await clients.events.send(new CreateEventBusCommand({ Name: "claims" }));
    for (const rule of ["claims-crew-production-verdicts", "shop-analytics"]) {
      await clients.events.send(
        new PutRuleCommand({ Name: rule, EventBusName: "claims", EventPattern: '{"source":["claims.kernel"]}' }),
      );
      await clients.events.send(
        new PutTargetsCommand({
          Rule: rule,
          EventBusName: "claims",
          Targets: [{ Id: "q", Arn: `arn:aws:sqs:eu-west-1:123456789012:${rule}` }],
        }),
      );
    }
    await clients.cognito.send(
      new CreateUserPoolCommand({
        PoolName: "claims-crew-production-reviewers",
        DeletionProtection: "ACTIVE",
        MfaConfiguration: "OFF",
      }),
    );
    await clients.dynamo.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
        DeletionProtectionEnabled: true,
      }),
    );
  }, 60_000);
  afterAll(() => {
    clients?.events.destroy();
    clients?.cognito.destroy();
    clients?.dynamo.destroy();
  });

  /** `sst remove` as far as it matters here: it fails on the bus's foreign rules or a protected pool, else deletes. */
  const sstRemove = async (args: readonly string[], env: Readonly<Record<string, string>>) => {
    if (args[0] === "secret") return 0;
    expect(env).toEqual({ CLAIMS_TEARDOWN_STAGE: stage });
    const rules = (await clients.events.send(new ListRulesCommand({ EventBusName: "claims" }))).Rules ?? [];
    if (rules.some((r) => r.Name !== "claims-crew-production-verdicts")) return 1;
    const pools = (await clients.cognito.send(new ListUserPoolsCommand({ MaxResults: 60 }))).UserPools ?? [];
    const pool = pools.find((p) => p.Name === "claims-crew-production-reviewers");
    const described = await clients.cognito.send(new DescribeUserPoolCommand({ UserPoolId: pool!.Id! }));
    if (described.UserPool?.DeletionProtection === "ACTIVE") return 1;
    for (const rule of rules) {
      const targets = await clients.events.send(
        new ListTargetsByRuleCommand({ Rule: rule.Name!, EventBusName: "claims" }),
      );
      await clients.events.send(
        new RemoveTargetsCommand({
          Rule: rule.Name!,
          EventBusName: "claims",
          Ids: (targets.Targets ?? []).map((t) => t.Id!),
        }),
      );
      await clients.events.send(new DeleteRuleCommand({ Name: rule.Name!, EventBusName: "claims" }));
    }
    await clients.events.send(new DeleteEventBusCommand({ Name: "claims" }));
    await clients.cognito.send(new DeleteUserPoolCommand({ UserPoolId: pool!.Id! }));
    return 0;
  };

  it("finds others' rules, the protected pool and the protected table, and deletes them in the order that works", async () => {
    const plan = await discoverTeardown(stage, clients);
    expect(plan.othersRules).toEqual([{ name: "shop-analytics", targetIds: ["q"] }]);
    expect(plan.pool).toMatchObject({ name: "claims-crew-production-reviewers", protected: true });
    expect(plan.table).toEqual({ name: table, protected: true });

    // In the documented order sst remove succeeds; the retained table goes after it, with a backup first.
    const log: string[] = [];
    const calls: string[][] = [];
    await executeTeardown(
      plan,
      clients,
      async (args, env) => (calls.push([...args]), sstRemove(args, env)),
      { keepTable: false, backup: true },
      (l) => log.push(l),
      () => new Date("2026-12-06T00:00:00Z"),
    );
    expect(calls[0]).toEqual(["remove", "--stage", "production"]);
    expect(calls.slice(1).map((c) => c[2])).toEqual([...STAGE_SECRETS]);
    expect(log.slice(0, 3)).toEqual([
      "removed rule shop-analytics from claims",
      "turned off deletion protection of claims-crew-production-reviewers",
      "sst remove --stage production: done",
    ]);
    const tables = (await clients.dynamo.send(new ListTablesCommand({}))).TableNames ?? [];
    expect(tables).not.toContain(table);
    const backups = (await clients.dynamo.send(new ListBackupsCommand({ TableName: table }))).BackupSummaries ?? [];
    expect(backups.map((b) => b.BackupName)).toEqual([`${table.slice(0, 40)}-teardown-2026-12-06`]);
    await expect(clients.dynamo.send(new DescribeTableCommand({ TableName: table }))).rejects.toThrow();
  });
});
