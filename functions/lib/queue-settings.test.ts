// The restated event-source settings and link names match what infra/ deploys (the SST app is
// evaluated with recording stand-ins, no AWS): if infra changes, the local stack must follow.
import { beforeAll, describe, expect, it } from "vitest";
import { evaluateSstConfig } from "../../infra/sst-recorder.ts";
import type { Recording } from "../../infra/sst-recorder.ts";
import { QUEUE_SETTINGS } from "./queue-settings.ts";
import { FUNCTION_LINKS, LINKS } from "./resources.ts";

let r: Recording;
beforeAll(async () => {
  r = await evaluateSstConfig({ stage: "dev", env: { LLM_PROVIDER: undefined, LLM_MAX_CONCURRENCY: undefined } });
});

const seconds = (v: unknown) => Number(/^(\d+) seconds$/.exec(String(v))?.[1] ?? NaN);

describe("QUEUE_SETTINGS", () => {
  it.each(Object.entries(QUEUE_SETTINGS))("%s matches its queue and subscription in infra/", (_role, s) => {
    const queue = r.get("sst.aws.Queue", s.link);
    const args = queue.args as { fifo?: unknown; visibilityTimeout?: unknown; dlq?: { retry?: unknown } };
    expect(Boolean(args.fifo)).toBe(s.fifo);
    expect(seconds(args.visibilityTimeout)).toBe(s.visibilityTimeoutS);
    expect(args.dlq?.retry).toBe(s.maxReceives);
    const subscription = queue.calls.find((c) => c.method === "subscribe");
    const fn = subscription?.args[0] as { handler?: string; timeout?: string };
    const options = subscription?.args[1] as { batch?: { size?: number } };
    expect(fn.handler).toBe(s.consumer);
    expect(seconds(fn.timeout)).toBe(s.consumerTimeoutS);
    expect(options.batch?.size).toBe(s.batchSize);
  });

  it("covers every queue infra/ subscribes a function to", () => {
    const subscribed = r.ofType("sst.aws.Queue").filter((q) => q.calls.some((c) => c.method === "subscribe")).map((q) => q.name).sort();
    expect(Object.values(QUEUE_SETTINGS).map((s) => s.link).sort()).toEqual(subscribed);
  });
});

describe("LINKS", () => {
  it("names components infra/ declares", () => {
    expect(r.get("sst.aws.Dynamo", LINKS.table).name).toBe("Table");
    expect(r.get("sst.aws.Bus", LINKS.bus).name).toBe("Bus");
    expect(r.get("sst.Secret", LINKS.llmApiKey).name).toBe("LlmApiKey");
    expect(r.get("sst.Secret", LINKS.apiToken).name).toBe("ApiToken");
    for (const link of Object.values(LINKS.queues)) expect(r.get("sst.aws.Queue", link).name).toBe(link);
  });
});

describe("FUNCTION_LINKS", () => {
  /** Every function definition in the recording, by handler file name, with the names of its links. */
  function deployedLinks(): Record<string, string[]> {
    const defs: { handler?: string; link?: unknown[] }[] = [
      ...r.ofType("sst.aws.Function").map((f) => f.args),
      ...r.ofType("sst.aws.Queue").flatMap((q) => q.calls.filter((c) => c.method === "subscribe").map((c) => c.args[0])),
      ...r.ofType("sst.aws.CronV2").map((c) => c.args.function),
      ...r.ofType("sst.aws.ApiGatewayV2").flatMap((a) => a.calls.filter((c) => c.method === "addAuthorizer").map((c) => (c.args[0] as { lambda: { function: unknown } }).lambda.function)),
    ] as { handler?: string; link?: unknown[] }[];
    return Object.fromEntries(defs.map((d) => [/^functions\/(.+)\.handler$/.exec(d.handler ?? "")?.[1] ?? "?", (d.link ?? []).map((l) => r.resolve(l).name).sort()]));
  }

  it("equals the links infra/ gives each function", () => {
    const restated = Object.fromEntries(Object.entries(FUNCTION_LINKS).map(([fn, links]) => [fn, [...links].sort()]));
    expect(restated).toEqual(deployedLinks());
  });
});
