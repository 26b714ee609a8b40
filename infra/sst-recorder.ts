// A recording stand-in for SST's globals: bundles sst.config.ts with esbuild, evaluates it without Pulumi
// or AWS, and keeps every component's constructor args and method calls (for infra/wiring.test.ts).
import { RecordingError } from "./errors.ts";
import { build } from "esbuild";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const CONFIG_PATH = fileURLToPath(new URL("../sst.config.ts", import.meta.url));
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
  readonly calls: RecordedCall[];
  /** The ARN the stand-in handed out for it, if it has one. */
  readonly arn?: string;
}

/** What one evaluation of sst.config.ts produced. */
export interface Recording {
  readonly app: Readonly<Record<string, unknown>>;
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
    constructor(type: string, name: string, args: unknown, arn?: string) {
      this.recorded = {
        type,
        name,
        args: (args ?? {}) as Record<string, unknown>,
        calls: [],
        ...(arn === undefined ? {} : { arn }),
      };
      components.push(this.recorded);
      handles.set(this, this.recorded);
    }
    protected call(method: string, args: unknown[]): void {
      this.recorded.calls.push({ method, args });
    }
  }

  class Queue extends Component {
    constructor(name: string, args?: unknown) {
      super("sst.aws.Queue", name, args, `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`);
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
    get url() {
      return new FakeOutput(`https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${this.recorded.name}`);
    }
    subscribe(...args: unknown[]) {
      this.call("subscribe", args);
      return new FakeOutput({});
    }
  }

  class Dynamo extends Component {
    constructor(name: string, args: unknown) {
      super("sst.aws.Dynamo", name, args, `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`);
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
    get name() {
      return new FakeOutput(this.recorded.name);
    }
  }

  class Bus extends Component {
    constructor(name: string, args?: unknown) {
      super("sst.aws.Bus", name, args, `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${name}`);
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
    get name() {
      return new FakeOutput(this.recorded.name);
    }
    subscribe(...args: unknown[]) {
      this.call("subscribe", args);
      return new FakeOutput({});
    }
    subscribeQueue(...args: unknown[]) {
      this.call("subscribeQueue", args);
      return new FakeOutput({});
    }
  }

  class Function extends Component {
    constructor(name: string, args: unknown) {
      super("sst.aws.Function", name, args, `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`);
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
    get name() {
      return new FakeOutput(this.recorded.name);
    }
  }

  class ApiGatewayV2 extends Component {
    constructor(name: string, args?: unknown) {
      super("sst.aws.ApiGatewayV2", name, args);
    }
    get url() {
      return new FakeOutput(`https://${this.recorded.name}.execute-api.${REGION}.amazonaws.com`);
    }
    route(...args: unknown[]) {
      this.call("route", args);
      return {};
    }
    addAuthorizer(args: { name: string }) {
      this.call("addAuthorizer", [args]);
      return { id: new FakeOutput(`authorizer/${args.name}`) };
    }
  }

  class CronV2 extends Component {
    constructor(name: string, args: unknown) {
      super("sst.aws.CronV2", name, args);
    }
  }

  class Cron extends Component {
    constructor(name: string, args: unknown) {
      super("sst.aws.Cron", name, args);
    }
  }

  class Secret extends Component {
    constructor(name: string, placeholder?: unknown) {
      super("sst.Secret", name, { placeholder });
    }
    get value() {
      return new FakeOutput(`secret:${this.recorded.name}`);
    }
  }

  class QueuePolicy extends Component {
    constructor(name: string, args: unknown) {
      super("aws.sqs.QueuePolicy", name, args);
    }
  }

  class SnsTopic extends Component {
    constructor(name: string, args?: unknown) {
      super("sst.aws.SnsTopic", name, args, `arn:aws:sns:${REGION}:${ACCOUNT}:${name}`);
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
  }

  class TopicSubscription extends Component {
    constructor(name: string, args: unknown) {
      super("aws.sns.TopicSubscription", name, args);
    }
  }

  class MetricAlarm extends Component {
    constructor(name: string, args: { name?: unknown }) {
      super(
        "aws.cloudwatch.MetricAlarm",
        name,
        args,
        `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${String(unwrap(args.name ?? name))}`,
      );
    }
    get arn() {
      return new FakeOutput(this.recorded.arn);
    }
  }

  class Dashboard extends Component {
    constructor(name: string, args: unknown) {
      super("aws.cloudwatch.Dashboard", name, args);
    }
  }

  return {
    sst: { aws: { Queue, Dynamo, Bus, Function, ApiGatewayV2, CronV2, Cron, SnsTopic }, Secret },
    aws: {
      sqs: { QueuePolicy },
      sns: { TopicSubscription },
      cloudwatch: { MetricAlarm, Dashboard },
      getRegionOutput: () => new FakeOutput({ region: REGION, name: REGION }),
    },
  };
}

let bundled: Promise<string> | undefined;

/** The config bundled as esbuild (and SST) would: one ESM file, infra/ inlined. */
function bundleConfig(): Promise<string> {
  bundled ??= build({
    entryPoints: [CONFIG_PATH],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "silent",
  }).then((result) => {
    const file = result.outputFiles[0];
    if (file === undefined) throw new RecordingError("esbuild produced no output for sst.config.ts");
    return file.text;
  });
  return bundled;
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
}): Promise<Recording> {
  const code = await bundleConfig();
  const components: Recorded[] = [];
  const handles = new WeakMap<object, Recorded>();
  const standIns = createStandIns(components, handles);
  const scope = globalThis as Record<string, unknown>;
  const savedGlobals = new Map(GLOBALS.map((g) => [g, scope[g]] as const));
  const savedEnv = new Map(Object.keys(options.env ?? {}).map((k) => [k, process.env[k]] as const));
  const dir = await mkdtemp(join(tmpdir(), "sst-recorder-"));

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
