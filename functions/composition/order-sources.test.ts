// The order-source registry as the composition root reads it: every declared source has its adapter, built from
// its declared settings and secrets (by their links); the table is the app's own, read through the Table link.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORDER_SOURCE_MODULES } from "../../app/order-source.ts";
import { frozenClock } from "../../core/crew/index.ts";
import { composeDeps } from "./compose.ts";
import { ORDER_SOURCE_ADAPTERS } from "./order-sources.ts";
import { linkedResources } from "./resources.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");

/** Links that hold `values` (`Resource.<name>.value`) and refuse every other name, counting the reads. */
function links(values: Record<string, string>) {
  const read: string[] = [];
  const resources = linkedResources((name) => {
    read.push(name);
    if (!(name in values)) throw new Error(`"${name}" is not linked`);
    return { value: values[name] };
  });
  return { resources, read };
}

const compose = (env: Record<string, string>, resources: ReturnType<typeof linkedResources>) =>
  composeDeps({
    env,
    resources,
    clock: frozenClock(NOW),
    policy: () => {
      throw new Error("reading an order needs no policy");
    },
  });

it.each(ORDER_SOURCE_MODULES.map((s) => [s.name] as const))("the %s source has the adapter of its name", (name) => {
  expect(ORDER_SOURCE_ADAPTERS[name].name).toBe(name);
});

describe("the composed order source", () => {
  const seen: { path?: string; auth?: string }[] = [];
  let url = "";
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", auth: req.headers.authorization ?? "" });
    res.writeHead(404).end();
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("http: the order API at ORDER_API_URL with the token of its OrderApiToken link", async () => {
    const { resources, read } = links({ OrderApiToken: "tok_registry" });
    const deps = compose({ ORDER_SOURCE: "http", ORDER_API_URL: url }, resources);
    expect(await deps.orders.getOrder("ord_9")).toBeUndefined();
    expect(seen.at(-1)).toEqual({ path: "/orders/ord_9", auth: "Bearer tok_registry" });
    expect(read).toEqual(["OrderApiToken"]);
  });

  it("table (the default): the app's own table, through its Table link and no other", async () => {
    const { resources, read } = links({});
    const deps = compose({}, resources);
    await expect(async () => deps.orders.getOrder("ord_9")).rejects.toThrow(/Resource\.Table is not available/);
    // Besides the orders' Table, the composition asks only whether the stage's personal-data key is linked (the vault).
    expect(read).toEqual(["PersonalDataKey", "Table"]);
  });
});
