/* global process, console */
// check:infra, step 5: runs sst.config.ts through SST's OWN component code (the .sst/platform that `sst install`
// unpacked) under Pulumi's mocks — no engine, no AWS — and checks what SST really generates: the functions'
// IAM roles, the event-source mappings, the queue policies, the API stage's throttles, the reserved concurrency
// against the account's quota (read through the real SDK from a Lambda stand-in), an alarm on every function and
// queue, and what survives `sst remove` named in infra/README.md's teardown. The SST CLI's RPC
// (function builds, the asset bucket) is answered by a stub server; the functions' code is a placeholder.
// Run: node --import tsx scripts/sst-offline-run.mjs <repo root> [config] (after `sst install`). Exits 1 listing
// every fault; scripts/check-infra.sh also runs it on infra/fixtures/unhardened.config.ts, where it must fail.
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = resolve(process.argv[2] ?? ".");
const configPath = resolve(root, process.argv[3] ?? "sst.config.ts");
const platform = join(root, ".sst", "platform");
const out = mkdtempSync(join(tmpdir(), "sst-offline-"));
writeFileSync(join(out, "index.mjs"), "export const handler = async () => ({});\n");

// The SST CLI's RPC, as far as a deploy of this app asks it.
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const { method } = JSON.parse(body);
    const answers = {
      "Provider.Aws.Bootstrap": { asset: "sst-asset-offline", assetEcrRegistryId: "", assetEcrUrl: "", state: "" },
      "Runtime.Build": { handler: "index.handler", out, sourcemaps: [], errors: [] },
      "Runtime.AddTarget": {},
      "Provider.Aws.Appsync": {},
    };
    const result = answers[method];
    res.end(JSON.stringify(result === undefined ? { error: `rpc: can't find ${method}` } : { result }));
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
process.env.SST_SERVER = `http://127.0.0.1:${server.address().port}`;

// The account the deploy reads its Lambda quota from (infra/account.ts, through the real SDK): a stand-in speaking
// Lambda's wire protocol, a new account of 10 concurrent executions unless SST_OFFLINE_ACCOUNT_CONCURRENCY says
// otherwise. With the default CLAIMS_RESERVED_CONCURRENCY (auto) nothing may be reserved on it.
const { startAccountStandIn } = await import(pathToFileURL(join(root, "adapters/aws/testing/account-standin.ts")).href);
const accountConcurrency = Number(process.env.SST_OFFLINE_ACCOUNT_CONCURRENCY ?? 10);
const account = await startAccountStandIn({ concurrentExecutions: accountConcurrency });
Object.assign(process.env, account.env());
const reservationAllowed = (process.env.CLAIMS_RESERVED_CONCURRENCY ?? "auto") === "on";

const pulumi = await import(pathToFileURL(join(platform, "node_modules/@pulumi/pulumi/index.js")).href);
const created = [];
pulumi.runtime.setMocks(
  {
    newResource(args) {
      created.push({ type: args.type, name: args.name, inputs: args.inputs });
      const arnOf = {
        "aws:sqs/queue:Queue": `arn:aws:sqs:eu-west-1:111122223333:${args.name}`,
        "aws:cloudwatch/eventRule:EventRule": `arn:aws:events:eu-west-1:111122223333:rule/${args.name}`,
        "aws:cloudwatch/eventBus:EventBus": `arn:aws:events:eu-west-1:111122223333:event-bus/${args.name}`,
        "aws:dynamodb/table:Table": `arn:aws:dynamodb:eu-west-1:111122223333:table/${args.name}`,
      };
      return {
        id: `${args.name}-id`,
        state: {
          ...args.inputs,
          arn: arnOf[args.type] ?? `arn:aws:mock:eu-west-1:111122223333:${args.name}`,
          url: `https://sqs.eu-west-1.amazonaws.com/111122223333/${args.name}`,
          name: args.inputs.name ?? args.name,
          executionArn: `arn:aws:execute-api:eu-west-1:111122223333:${args.name}`,
          apiEndpoint: `https://${args.name}.execute-api.eu-west-1.amazonaws.com`,
        },
      };
    },
    call(args) {
      if (args.token === "aws:iam/getPolicyDocument:getPolicyDocument")
        return { json: JSON.stringify(args.inputs), statements: args.inputs.statements };
      return {
        accountId: "111122223333",
        region: "eu-west-1",
        name: "eu-west-1",
        partition: "aws",
        dnsSuffix: "amazonaws.com",
        id: "x",
      };
    },
  },
  "claims-crew",
  "production",
  false,
);

// The production stage, with the settings it requires: the strictest configuration.
const stage = "production";
process.env.CLAIMS_POLICY_FILE ??= "infra/policy.example.yaml";
process.env.CLAIMS_ALARM_ENDPOINT ??= "ops@example.com";
for (const name of ["LlmApiKey", "ApiToken", "ReviewerToken"])
  process.env[`SST_SECRET_${name}`] = "offline-placeholder";
Object.assign(globalThis, {
  $app: { name: "claims-crew", stage, removal: "retain", protect: true, providers: {} },
  $dev: false,
  $util: pulumi,
  $cli: { paths: { root, platform, work: join(root, ".sst") }, state: { version: {} }, command: "deploy" },
  $jsonStringify: pulumi.jsonStringify,
  $interpolate: pulumi.interpolate,
  $resolve: pulumi.all,
  $config: (c) => c,
});
// SST's modules read the globals above when they load.
globalThis.sst = await import(pathToFileURL(join(platform, "src/components/index.ts")).href);
globalThis.aws = await import(pathToFileURL(join(platform, "node_modules/@pulumi/aws/index.js")).href);

const bundle = await build({
  entryPoints: [configPath],
  bundle: true,
  platform: "node",
  format: "esm",
  write: false,
  logLevel: "silent",
  // As SST bundles it: CommonJS dependencies (yaml) may require node built-ins.
  banner: {
    js: 'import { createRequire as __sstCreateRequire } from "node:module"; const require = __sstCreateRequire(import.meta.url);',
  },
});
const file = join(out, "sst.config.mjs");
writeFileSync(file, bundle.outputFiles[0].text);
const config = (await import(pathToFileURL(file).href)).default;
await config.run();
// Every registration, including those SST makes inside outputs' callbacks, has reached the mocks.
await pulumi.runtime.disconnect();
await account.stop();
if (process.env.SST_OFFLINE_TYPES) {
  const t = {};
  for (const c of created) t[c.type] = (t[c.type] ?? 0) + 1;
  console.log(t);
}
server.close();

const of = (type) => created.filter((c) => c.type === type);
const problems = [];
const roles = of("aws:iam/role:Role");
if (process.env.SST_OFFLINE_ROLES) for (const r of roles) console.log(r.name, JSON.stringify(r.inputs.inlinePolicies));
for (const role of roles) {
  for (const p of role.inputs.inlinePolicies ?? []) {
    const doc = JSON.parse(p.policy);
    for (const s of doc.statements ?? [])
      for (const a of s.actions ?? []) if (a.includes("*")) problems.push(`role ${role.name}: action ${a}`);
    // A PutEvents to a bus that does not exist succeeds and drops the event: whoever publishes checks the bus
    // first (DescribeEventBus, once per container), on the same bus ARN and nothing wider.
    for (const s of doc.statements ?? []) {
      if (!(s.actions ?? []).includes("events:PutEvents")) continue;
      const describes = (doc.statements ?? []).some(
        (d) =>
          (d.actions ?? []).includes("events:DescribeEventBus") &&
          JSON.stringify([...(d.resources ?? [])].sort()) === JSON.stringify([...(s.resources ?? [])].sort()),
      );
      if (!describes) problems.push(`role ${role.name}: events:PutEvents without events:DescribeEventBus on its bus`);
    }
  }
  for (const arn of role.inputs.managedPolicyArns ?? []) problems.push(`role ${role.name}: managed policy ${arn}`);
}
for (const p of of("aws:sqs/queuePolicy:QueuePolicy")) {
  const doc = JSON.parse(p.inputs.policy);
  for (const s of doc.Statement ?? doc.statements ?? [])
    if (!JSON.stringify(s.Condition ?? s.conditions ?? {}).includes("aws:SourceArn"))
      problems.push(`queue policy ${p.name}: no aws:SourceArn condition`);
}
for (const m of of("aws:lambda/eventSourceMapping:EventSourceMapping")) {
  if (!(m.inputs.scalingConfig?.maximumConcurrency >= 2))
    problems.push(`event source ${m.name}: no maximumConcurrency`);
  // Lambda refuses a batch above 10 without a batching window of at least 1 s (and any window above 300 s).
  const window = m.inputs.maximumBatchingWindowInSeconds ?? 0;
  if ((m.inputs.batchSize ?? 10) > 10 && !(window >= 1))
    problems.push(`event source ${m.name}: batch of ${m.inputs.batchSize} without a batching window`);
  if (window > 300) problems.push(`event source ${m.name}: batching window ${window} s (at most 300)`);
}
const reserved = of("aws:lambda/function:Function")
  .filter((f) => f.inputs.reservedConcurrentExecutions > 0)
  .map((f) => f.inputs.name);
const stages = of("aws:apigatewayv2/stage:Stage");
const routeKeys = (stages[0]?.inputs.routeSettings ?? []).map((r) => r.routeKey);
if (!routeKeys.includes("POST /claims")) problems.push("stage: no route settings for POST /claims");
// The stage names POST /claims in its route settings, so it must be created after every route.
const order = (type) => created.flatMap((c, i) => (c.type === type ? [i] : []));
if (
  stages.length > 0 &&
  Math.max(...order("aws:apigatewayv2/route:Route")) > Math.min(...order("aws:apigatewayv2/stage:Stage"))
)
  problems.push("stage: created before a route");
for (const q of of("aws:sqs/queue:Queue").filter((q) => q.inputs.fifoQueue && q.inputs.redrivePolicy))
  if (q.inputs.deduplicationScope !== "messageGroup" || q.inputs.fifoThroughputLimit !== "perMessageGroupId")
    problems.push(`queue ${q.name}: FIFO without high throughput`);
// Lambda's own lines at the stage's system level: WARN (no platform.start/platform.report, issue 37) unless
// CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL asks for INFO (memory sizing: platform.report).
const systemLogLevel = (process.env.CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL?.trim() || "WARN").toUpperCase();
for (const f of of("aws:lambda/function:Function"))
  if (f.inputs.loggingConfig?.systemLogLevel !== systemLogLevel)
    problems.push(
      `function ${f.name}: system log level ${f.inputs.loggingConfig?.systemLogLevel}, not ${systemLogLevel}`,
    );
// No reservation above what the account can give: on the default new account (10, Lambda keeps 100 unreserved)
// nothing, unless CLAIMS_RESERVED_CONCURRENCY=on says the operator's account can.
const reservedTotal = of("aws:lambda/function:Function").reduce(
  (sum, f) => sum + (f.inputs.reservedConcurrentExecutions > 0 ? f.inputs.reservedConcurrentExecutions : 0),
  0,
);
if (!reservationAllowed && reservedTotal > Math.max(0, accountConcurrency - 100))
  problems.push(
    `reserved concurrency: ${reservedTotal} on an account of ${accountConcurrency} concurrent executions (Lambda keeps 100 unreserved); set CLAIMS_RESERVED_CONCURRENCY=on only for an account that has it`,
  );
// An alarm covers every function (Errors and Throttles by FunctionName) and every queue (by QueueName: the depth of a
// DLQ, the age of any other queue's oldest message).
const alarmDims = of("aws:cloudwatch/metricAlarm:MetricAlarm").map((a) => ({
  metric: a.inputs.metricName,
  dims: a.inputs.dimensions ?? {},
}));
const alarmed = (metric, dim, value) => alarmDims.some((a) => a.metric === metric && a.dims[dim] === value);
for (const f of of("aws:lambda/function:Function"))
  for (const metric of ["Errors", "Throttles"])
    if (!alarmed(metric, "FunctionName", f.inputs.name)) problems.push(`function ${f.inputs.name}: no ${metric} alarm`);
const redriveTargets = new Set(
  of("aws:sqs/queue:Queue").flatMap((q) =>
    q.inputs.redrivePolicy ? [JSON.parse(q.inputs.redrivePolicy).deadLetterTargetArn.split(":").pop()] : [],
  ),
);
for (const q of of("aws:sqs/queue:Queue")) {
  const metric =
    redriveTargets.has(q.name) || !q.inputs.redrivePolicy
      ? ["ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"]
      : ["ApproximateAgeOfOldestMessage"];
  if (!metric.some((m) => alarmed(m, "QueueName", q.name))) problems.push(`queue ${q.name}: no alarm`);
}
// What survives `sst remove` of this (production) stage — the types SST's "retain" keeps (its own list, read from
// .sst/platform/src/auto/run.ts) and whatever has deletion protection — is named in infra/README.md's teardown.
const runTs = readFileSync(join(platform, "src/auto/run.ts"), "utf8");
const retainBlock = runTs.slice(runTs.indexOf('$app.removal === "retain"'), runTs.indexOf("].includes(args.type)"));
const retainTypes = new Set([...retainBlock.matchAll(/"([a-z0-9]+:[A-Za-z0-9/]+:[A-Za-z0-9]+)"/g)].map((m) => m[1]));
if (!retainTypes.has("aws:dynamodb/table:Table")) problems.push("could not read SST's retained types from run.ts");
const retained = created.filter(
  (c) =>
    retainTypes.has(c.type) || c.inputs.deletionProtection === "ACTIVE" || c.inputs.deletionProtectionEnabled === true,
);
const readme = readFileSync(join(root, "infra/README.md"), "utf8");
const teardown = readme.slice(
  readme.indexOf("### Teardown"),
  readme.indexOf("\n### ", readme.indexOf("### Teardown") + 5),
);
const WORDS = {
  "aws:dynamodb/table:Table": "table",
  "aws:cognito/userPool:UserPool": "user pool",
  "aws:s3/bucketV2:BucketV2": "bucket",
  "aws:s3/bucket:Bucket": "bucket",
};
for (const c of retained) {
  const word = WORDS[c.type] ?? c.type;
  if (!teardown.toLowerCase().includes(word))
    problems.push(`${c.type} ${c.name} survives sst remove but infra/README.md#teardown does not name it (${word})`);
}
const summary = {
  resources: created.length,
  roles: roles.length,
  queuePolicies: of("aws:sqs/queuePolicy:QueuePolicy").length,
  eventSourceMappings: of("aws:lambda/eventSourceMapping:EventSourceMapping").length,
  reservedConcurrency: reserved,
  alarms: alarmDims.length,
  retainedOnRemove: retained.map((c) => `${c.type} ${c.name}`),
};
console.log(JSON.stringify(summary));
// The app itself: the checks above must have had something to check (12 functions, 5 consumers, 3 rules).
if (configPath === resolve(root, "sst.config.ts")) {
  const expected = { roles: 12, queuePolicies: 6, eventSourceMappings: 5 };
  // The timers' event source gathers as app/manifest.ts says (SST's own `batch.window` conversion).
  const { eventSourceBatch } = await import(pathToFileURL(join(root, "app/manifest.ts")).href);
  const timers = eventSourceBatch("timers");
  const timerMappings = of("aws:lambda/eventSourceMapping:EventSourceMapping").filter(
    (m) =>
      m.inputs.batchSize === timers.size && (m.inputs.maximumBatchingWindowInSeconds ?? 0) === timers.windowSeconds,
  );
  if (timerMappings.length !== 1)
    problems.push(
      `event sources: none with the timers' batch of ${timers.size} and window of ${timers.windowSeconds} s`,
    );
  for (const [key, count] of Object.entries(expected))
    if (summary[key] !== count) problems.push(`${key}: ${summary[key]}, expected ${count}`);
  // With CLAIMS_RESERVED_CONCURRENCY=on (check-infra.sh runs it on a 1,000 account): the request path reserves.
  if (reservationAllowed)
    for (const fn of ["authorizer", "intakeApi"])
      if (!reserved.includes(`claims-crew-${stage}-${fn}`)) problems.push(`function ${fn}: no reserved concurrency`);
  // Reviewers: a JWT authorizer against the app's Cognito user pool (its `reviewers` group), on the review routes.
  const jwt = of("aws:apigatewayv2/authorizer:Authorizer").filter((a) => a.inputs.authorizerType === "JWT");
  const issuer = String(jwt[0]?.inputs.jwtConfiguration?.issuer ?? "");
  if (jwt.length !== 1 || !/^https:\/\/cognito-idp\.[a-z0-9-]+\.amazonaws\.com\/\S+$/.test(issuer))
    problems.push(`reviewers: expected one JWT authorizer on a Cognito issuer, got ${jwt.length} (${issuer})`);
  if ((jwt[0]?.inputs.jwtConfiguration?.audiences ?? []).length !== 1)
    problems.push("reviewers: the JWT authorizer should accept the app client's id as its one audience");
  if (!of("aws:cognito/userGroup:UserGroup").some((g) => g.inputs.name === "reviewers"))
    problems.push("reviewers: no Cognito group named reviewers");
  for (const key of ["GET /reviews", "POST /claims/{id}/review"]) {
    const route = of("aws:apigatewayv2/route:Route").find((r) => r.inputs.routeKey === key);
    if (route?.inputs.authorizationType !== "JWT") problems.push(`route ${key}: not behind the JWT authorizer`);
  }
  console.log(
    JSON.stringify({ reviewerIssuer: issuer, reviewerAudiences: jwt[0]?.inputs.jwtConfiguration?.audiences }),
  );
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
