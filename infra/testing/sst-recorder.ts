// A recording stand-in for SST's globals: bundles sst.config.ts with esbuild, evaluates it without Pulumi
// or AWS, and keeps every component's constructor args, resource options and method calls (for
// infra/wiring.test.ts). Where SST itself creates resources or grants rights on the config's behalf, the
// stand-ins do what SST 4.17.1's component source does (.sst/platform/src/components after `npm run
// check:infra`), so the wiring test sees them too: a link's own permissions (`getSSTLink`, and
// `sst.Linkable.wrap` replacing it), the open queue policy of `Bus.subscribeQueue`, the event-source mapping
// and receive rights of `Queue.subscribe`, and the role of a function (its `permissions`, its links'
// permissions, the basic execution policy, and `transform.role`).
import { RecordingError } from "../errors.ts";
import { build } from "esbuild";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const CONFIG_PATH = fileURLToPath(new URL("../../sst.config.ts", import.meta.url));
/** Where each evaluation's copy of the bundle is written (removed after it): node_modules/.cache, ignored by git. */
const EVALUATIONS_DIR = fileURLToPath(new URL("../../node_modules/.cache/sst-recorder", import.meta.url));
const ACCOUNT = "111122223333";
const REGION = "eu-west-1";

/** Stands in for a Pulumi Output: the value is known at once and `apply` runs immediately. */
export class FakeOutput<T> {
  constructor(readonly value: T) {}
  apply<U>(fn: (value: T) => U): FakeOutput<U> {
    return new FakeOutput(unwrap(fn(this.value)) as U);
  }
}

/** Replaces every FakeOutput inside plain objects and arrays by its value (as Pulumi's `output()` does). */
export function unwrap(value: unknown): unknown {
  if (value instanceof FakeOutput) return unwrap(value.value);
  if (Array.isArray(value)) return value.map(unwrap);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrap(v)]));
  }
  return value;
}

/** One method call on a recorded component. */
export interface RecordedCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

/** One component the config created, as SST would have received it. */
export interface Recorded {
  readonly type: string;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** The resource options (third constructor argument: deleteBeforeReplace, dependsOn, …). */
  readonly opts: Readonly<Record<string, unknown>>;
  readonly calls: RecordedCall[];
  /** The ARN the stand-in handed out for it, if it has one. */
  readonly arn?: string;
}

/** One statement of an IAM policy as SST builds it (`sst.aws.permission`, FunctionPermissionArgs). */
export interface PolicyStatement {
  readonly actions: readonly string[];
  readonly resources: readonly unknown[];
  /** IAM conditions (SST's FunctionPermissionArgs `conditions`). */
  readonly conditions?: readonly { test: string; variable: string; values: readonly string[] }[];
}

/** The role SST would create for a function: its inline statements and managed policies. */
export interface FunctionRole {
  readonly statements: readonly PolicyStatement[];
  readonly managedPolicyArns: readonly string[];
}

/** What SST's Link.getInclude("aws.permission", …) collects: the permissions a link brings. */
interface LinkDefinition {
  readonly properties: Record<string, unknown>;
  readonly include?: readonly ({ type: string } & Partial<PolicyStatement>)[];
}

/** SST's `permission()`: an include of type aws.permission. */
const permission = (actions: string[], resources: unknown[]) => ({ type: "aws.permission", actions, resources });

/** The managed policy SST attaches to every function role whose logging is on. */
export const BASIC_EXECUTION_ROLE = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole";

/** SST's `transform()`: a function transform edits args and opts in place; an object is merged shallowly over args. */
function applyTransform(
  transform: unknown,
  args: Record<string, unknown>,
  opts: Record<string, unknown> = {},
): Record<string, unknown> {
  if (typeof transform === "function") {
    (transform as (a: unknown, o: unknown, n: string) => void)(args, opts, "");
    return args;
  }
  return { ...args, ...(transform as Record<string, unknown> | undefined) };
}

/** What one evaluation of sst.config.ts produced. */
export interface Recording {
  readonly app: Readonly<Record<string, unknown>>;
  /** The SST classes whose link definition the config replaced with `sst.Linkable.wrap` (by class name). */
  readonly wrappedLinks: readonly string[];
  readonly outputs: unknown;
  readonly components: readonly Recorded[];
  /** Components of one type (`"sst.aws.Queue"`, `"sst.Secret"`, `"aws.sqs.QueuePolicy"`, …). */
  ofType(type: string): Recorded[];
  /** The component of `type` called `name`; throws if there is none. */
  get(type: string, name: string): Recorded;
  /** The component a link entry, an ARN or an Output of an ARN refers to; throws if none. */
  resolve(ref: unknown): Recorded;
}

function createStandIns(components: Recorded[], handles: WeakMap<object, Recorded>) {
  class Component {
    protected readonly recorded: Recorded;
    constructor(type: string, name: string, args: unknown, arn?: string, opts?: unknown) {
      this.recorded = {
        type,
        name,
        args: (args ?? {}) as Record<string, unknown>,
        opts: (opts ?? {}) as Record<string, unknown>,
        calls: [],
        ...(arn === undefined ? {} : { arn }),
      };
      components.push(this.recorded);
      handles.set(this, this.recorded);
    }
    protected call(method: string, args: unknown[]): void {
      this.recorded.calls.push({ method, args });
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
  }

  /** An AWS resource the config (or SST on its behalf) creates directly. */
  const resource = (type: string, arnOf?: (name: string, args: Record<string, unknown>) => string) =>
    class extends Component {
      constructor(name: string, args: Record<string, unknown>, opts?: unknown) {
        super(type, name, args, arnOf?.(name, args), opts);
      }
      get name() {
        return new FakeOutput(this.recorded.name);
      }
    };

  const QueuePolicy = resource("aws.sqs.QueuePolicy");
  const EventSourceMapping = resource("aws.lambda.EventSourceMapping");
  const EventRule = resource(
    "aws.cloudwatch.EventRule",
    (name, args) => `arn:aws:events:${REGION}:${ACCOUNT}:rule/${String(unwrap(args.eventBusName))}/${name}`,
  );
  const EventTarget = resource("aws.cloudwatch.EventTarget");
  const TopicSubscription = resource("aws.sns.TopicSubscription");
  const Dashboard = resource("aws.cloudwatch.Dashboard");
  const UserGroup = resource("aws.cognito.UserGroup");
  const MetricAlarm = resource(
    "aws.cloudwatch.MetricAlarm",
    (name, args) => `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${String(unwrap(args.name ?? name))}`,
  );

  class Queue extends Component {
    constructor(name: string, args?: unknown, opts?: unknown) {
      super("sst.aws.Queue", name, args, `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`, opts);
    }
    get url() {
      return new FakeOutput(`https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${this.recorded.name}`);
    }
    /** As SST's QueueLambdaSubscriber: receive rights on this queue for the function, and an event-source mapping. */
    subscribe(subscriber: unknown, args: Record<string, unknown> = {}) {
      this.call("subscribe", [subscriber, args]);
      const batch = (unwrap(args.batch) ?? {}) as { size?: number; partialResponses?: boolean; window?: string };
      const transform = (args.transform ?? {}) as { eventSourceMapping?: unknown };
      new EventSourceMapping(
        `${this.recorded.name}Subscriber`,
        applyTransform(transform.eventSourceMapping, {
          functionResponseTypes: batch.partialResponses ? ["ReportBatchItemFailures"] : [],
          batchSize: batch.size ?? 10,
          maximumBatchingWindowInSeconds: batch.window === undefined ? 0 : durationSeconds(batch.window),
          eventSourceArn: this.recorded.arn,
          functionName: subscriber,
        }),
      );
      return new FakeOutput({});
    }
    /** SST's own link: the url, and every SQS action on the queue. */
    getSSTLink(): LinkDefinition {
      return { properties: { url: this.url }, include: [permission(["sqs:*"], [this.arn])] };
    }
  }

  class Dynamo extends Component {
    constructor(name: string, args: unknown, opts?: unknown) {
      super("sst.aws.Dynamo", name, args, `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`, opts);
    }
    get name() {
      return new FakeOutput(this.recorded.name);
    }
    /** SST's own link: the name, and every DynamoDB action on the table and its indexes. */
    getSSTLink(): LinkDefinition {
      return {
        properties: { name: this.name },
        include: [permission(["dynamodb:*"], [this.arn, `${this.recorded.arn}/*`])],
      };
    }
  }

  class Bus extends Component {
    constructor(name: string, args?: unknown, opts?: unknown) {
      super("sst.aws.Bus", name, args, `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${name}`, opts);
    }
    get name() {
      return new FakeOutput(this.recorded.name);
    }
    subscribe(...args: unknown[]) {
      this.call("subscribe", args);
      return new FakeOutput({});
    }
    /** As SST's BusQueueSubscriber: a rule, a target and a queue policy open to three services, with no condition. */
    subscribeQueue(name: string, queue: Queue, args: { transform?: { rule?: unknown; target?: unknown } } = {}) {
      this.call("subscribeQueue", [name, queue, args]);
      const queueArn = unwrap(queue.arn);
      new QueuePolicy(`${this.recorded.name}Subscriber${name}Policy`, {
        queueUrl: queue.url,
        policy: JSON.stringify({
          Statement: [
            {
              Effect: "Allow",
              Action: ["sqs:SendMessage"],
              Resource: [queueArn],
              Principal: { Service: ["sns.amazonaws.com", "s3.amazonaws.com", "events.amazonaws.com"] },
            },
          ],
        }),
      });
      const rule = new EventRule(
        `${this.recorded.name}Subscriber${name}Rule`,
        applyTransform(args.transform?.rule, { eventBusName: this.name }),
      );
      new EventTarget(
        `${this.recorded.name}Subscriber${name}Target`,
        applyTransform(args.transform?.target, { arn: queueArn, rule: rule.name, eventBusName: this.name }),
      );
      return new FakeOutput({});
    }
    /** SST's own link: name and arn, and every EventBridge action on the bus. */
    getSSTLink(): LinkDefinition {
      return { properties: { name: this.name, arn: this.arn }, include: [permission(["events:*"], [this.arn])] };
    }
  }

  class Function extends Component {
    constructor(name: string, args: unknown, opts?: unknown) {
      super("sst.aws.Function", name, args, `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`, opts);
    }
    get name() {
      return new FakeOutput(this.recorded.name);
    }
  }

  class ApiGatewayV2 extends Component {
    constructor(name: string, args?: unknown, opts?: unknown) {
      super("sst.aws.ApiGatewayV2", name, args, undefined, opts);
    }
    get url() {
      return new FakeOutput(`https://${this.recorded.name}.execute-api.${REGION}.amazonaws.com`);
    }
    /** As SST's: the underlying API Gateway API, whose id is the ApiId of its CloudWatch metrics. */
    get nodes() {
      return { api: { id: new FakeOutput(`apiid-${this.recorded.name}`) } };
    }
    /** As SST's route component: `nodes.route` is the API Gateway Route, named by its route key. */
    route(...args: unknown[]) {
      this.call("route", args);
      return { nodes: { route: { routeKey: String(args[0]) } } };
    }
    addAuthorizer(args: { name: string }) {
      this.call("addAuthorizer", [args]);
      return { id: new FakeOutput(`authorizer/${args.name}`) };
    }
  }

  /** A user pool: its id as Cognito formats it (`<region>_<name>` here); addClient hands out a client id. */
  class CognitoUserPool extends Component {
    constructor(name: string, args?: unknown, opts?: unknown) {
      super(
        "sst.aws.CognitoUserPool",
        name,
        args,
        `arn:aws:cognito-idp:${REGION}:${ACCOUNT}:userpool/${REGION}_${name}`,
        opts,
      );
    }
    get id() {
      return new FakeOutput(`${REGION}_${this.recorded.name}`);
    }
    addClient(name: string, args?: unknown) {
      this.call("addClient", [name, args]);
      return { id: new FakeOutput(`client-${name}`) };
    }
  }

  class CronV2 extends Component {
    constructor(name: string, args: unknown, opts?: unknown) {
      super("sst.aws.CronV2", name, args, undefined, opts);
    }
  }

  class Cron extends Component {
    constructor(name: string, args: unknown, opts?: unknown) {
      super("sst.aws.Cron", name, args, undefined, opts);
    }
  }

  class Secret extends Component {
    constructor(name: string, placeholder?: unknown) {
      super("sst.Secret", name, { placeholder });
    }
    get value() {
      return new FakeOutput(`secret:${this.recorded.name}`);
    }
    /** SST's own link: the value, no IAM (it travels encrypted in the function's package). */
    getSSTLink(): LinkDefinition {
      return { properties: { value: this.value } };
    }
  }

  class SnsTopic extends Component {
    constructor(name: string, args?: unknown, opts?: unknown) {
      super("sst.aws.SnsTopic", name, args, `arn:aws:sns:${REGION}:${ACCOUNT}:${name}`, opts);
    }
  }

  /** `aws.kms.Key`: its ARN and its id (the UUID the ARN ends with). */
  class KmsKey extends Component {
    constructor(name: string, args: Record<string, unknown>, opts?: unknown) {
      super("aws.kms.Key", name, args, `arn:aws:kms:${REGION}:${ACCOUNT}:key/${name}`, opts);
    }
    get keyId() {
      return new FakeOutput(this.recorded.name);
    }
  }
  const KmsAlias = resource("aws.kms.Alias");

  class Linkable extends Component {
    private readonly definition: LinkDefinition;
    /** As SST's `new sst.Linkable(name, { properties, include })`: a link of the properties given, nothing more. */
    constructor(name: string, definition: LinkDefinition) {
      super("sst.Linkable", name, definition);
      this.definition = definition;
    }
    getSSTLink(): LinkDefinition {
      return this.definition;
    }
    /** As SST's Linkable.wrap: replaces the class's own link definition for every instance. */
    static wrap(cls: { prototype: { getSSTLink?: unknown }; name: string }, cb: (resource: unknown) => LinkDefinition) {
      wrapped.push(cls.name);
      cls.prototype.getSSTLink = function (this: unknown) {
        return cb(this);
      };
    }
  }
  const wrapped: string[] = [];

  return {
    sst: {
      aws: { Queue, Dynamo, Bus, Function, ApiGatewayV2, CognitoUserPool, CronV2, Cron, SnsTopic },
      Secret,
      Linkable,
    },
    aws: {
      sqs: { QueuePolicy },
      sns: { TopicSubscription },
      cloudwatch: { MetricAlarm, Dashboard, EventRule, EventTarget },
      lambda: { EventSourceMapping },
      cognito: { UserGroup },
      kms: { Key: KmsKey, Alias: KmsAlias },
      getRegionOutput: () => new FakeOutput({ region: REGION, name: REGION }),
      getPartitionOutput: () => new FakeOutput({ partition: "aws" }),
      getCallerIdentityOutput: () => new FakeOutput({ accountId: ACCOUNT }),
    },
    wrapped,
  };
}

/**
 * The role SST 4.17.1 would build for function args (.sst/platform/src/components/aws/function.ts `createRole`): the inline
 * statements are `permissions`, then every linked component's aws.permission includes, plus — for a queue
 * consumer — the receive rights SST's QueueLambdaSubscriber adds; the managed policies are the basic execution
 * role, then `transform.role` edits the role's args.
 */
export function roleOf(args: Readonly<Record<string, unknown>>, consumedQueueArn?: string): FunctionRole {
  const links = (args.link ?? []) as { getSSTLink?: () => LinkDefinition }[];
  const fromLinks = links.flatMap((link) =>
    (link.getSSTLink?.().include ?? [])
      .filter((i) => i.type === "aws.permission")
      .map((i) => ({ actions: i.actions ?? [], resources: (i.resources ?? []).map(unwrap) })),
  );
  const own = ((args.permissions ?? []) as PolicyStatement[]).map((p) => ({
    actions: p.actions,
    resources: p.resources.map(unwrap),
    ...(p.conditions ? { conditions: p.conditions } : {}),
  }));
  const receive =
    consumedQueueArn === undefined
      ? []
      : [
          {
            actions: [
              "sqs:ChangeMessageVisibility",
              "sqs:DeleteMessage",
              "sqs:GetQueueAttributes",
              "sqs:GetQueueUrl",
              "sqs:ReceiveMessage",
            ],
            resources: [consumedQueueArn],
          },
        ];
  const roleArgs = applyTransform((args.transform as { role?: unknown } | undefined)?.role, {
    managedPolicyArns: [BASIC_EXECUTION_ROLE],
  });
  return {
    statements: [...own, ...receive, ...fromLinks],
    managedPolicyArns: (unwrap(roleArgs.managedPolicyArns) ?? []) as string[],
  };
}

const bundled = new Map<string, Promise<string>>();

/** The config bundled as esbuild (and SST) would: one ESM file, infra/ inlined. */
function bundleConfig(path: string): Promise<string> {
  const cached = bundled.get(path);
  if (cached !== undefined) return cached;
  const result = build({
    entryPoints: [path],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "silent",
    // Packages stay imports: loaded once per test file, not compiled and run again with each evaluation (the
    // bundle with them was ~2 MB, zod and the AWS SDK most of it, evaluated some 60 times by the wiring test).
    packages: "external",
  }).then((result) => {
    const file = result.outputFiles[0];
    if (file === undefined) throw new RecordingError("esbuild produced no output for sst.config.ts");
    return file.text;
  });
  bundled.set(path, result);
  return result;
}

const GLOBALS = ["$config", "$app", "$dev", "sst", "aws", "$jsonStringify", "$interpolate", "$resolve"] as const;

function interpolate(strings: TemplateStringsArray, ...values: unknown[]): FakeOutput<string> {
  return new FakeOutput(
    strings.reduce((out, s, i) => out + s + (i < values.length ? String(unwrap(values[i])) : ""), ""),
  );
}

/**
 * Evaluates sst.config.ts for `stage` with recording stand-ins for SST's globals. `env` entries are set
 * (or, when undefined, removed) in process.env for the evaluation only.
 */
export async function evaluateSstConfig(options: {
  stage: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Another config to evaluate instead of sst.config.ts (the wiring test's counter-examples). */
  configPath?: string;
}): Promise<Recording> {
  const code = await bundleConfig(options.configPath ?? CONFIG_PATH);
  const components: Recorded[] = [];
  const handles = new WeakMap<object, Recorded>();
  const standIns = createStandIns(components, handles);
  const scope = globalThis as Record<string, unknown>;
  const savedGlobals = new Map(GLOBALS.map((g) => [g, scope[g]] as const));
  const savedEnv = new Map(Object.keys(options.env ?? {}).map((k) => [k, process.env[k]] as const));
  // Inside the repository, so the bundle's package imports resolve from its node_modules.
  await mkdir(EVALUATIONS_DIR, { recursive: true });
  const dir = await mkdtemp(join(EVALUATIONS_DIR, "sst-recorder-"));

  try {
    for (const [key, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    Object.assign(scope, {
      $config: (config: unknown) => config,
      $dev: false,
      sst: standIns.sst,
      aws: standIns.aws,
      $jsonStringify: (value: unknown) => new FakeOutput(JSON.stringify(unwrap(value))),
      $interpolate: interpolate,
      $resolve: (value: unknown) => new FakeOutput(unwrap(value)),
    });

    // A fresh file per evaluation: ES modules are cached per URL, and infra modules run once per import.
    const file = join(dir, "sst.config.mjs");
    await writeFile(file, code);
    const mod = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
      default: { app(input: { stage: string }): Record<string, unknown>; run(): Promise<unknown> };
    };
    const app = mod.default.app({ stage: options.stage });
    scope.$app = { ...app, stage: options.stage };
    const outputs = unwrap(await mod.default.run());

    const byArn = new Map(components.filter((c) => c.arn !== undefined).map((c) => [c.arn, c] as const));
    const recording: Recording = {
      app,
      wrappedLinks: [...standIns.wrapped],
      outputs,
      components,
      ofType: (type) => components.filter((c) => c.type === type),
      get(type, name) {
        const found = components.find((c) => c.type === type && c.name === name);
        if (found === undefined) throw new RecordingError(`no ${type} named ${name} was created`);
        return found;
      },
      resolve(ref) {
        const handle = typeof ref === "object" && ref !== null ? handles.get(ref) : undefined;
        const found = handle ?? byArn.get(String(unwrap(ref)));
        if (found === undefined) throw new RecordingError(`${String(unwrap(ref))} refers to no recorded component`);
        return found;
      },
    };
    return recording;
  } finally {
    for (const [g, value] of savedGlobals) {
      if (value === undefined) delete scope[g];
      else scope[g] = value;
    }
    for (const [key, value] of savedEnv) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** Seconds of an SST duration ("60 seconds", "1 minute"), as SST's queue subscriber converts a batch window. */
function durationSeconds(duration: string): number {
  const m = /^(\d+) (second|seconds|minute|minutes)$/.exec(duration);
  if (!m) throw new RecordingError(`cannot read the duration ${JSON.stringify(duration)}`);
  return Number(m[1]) * (m[2]?.startsWith("minute") ? 60 : 1);
}
