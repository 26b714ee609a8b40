// The order-source registry: ORDER_SOURCE and each source's settings parsed the same way everywhere (each wrong
// one named), the variables and links the functions that read orders get — and docs/orders.md's tables, which
// must say what the registry holds.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OrderSourceSettingError } from "./errors.ts";
import { LINKS, linksOf } from "./manifest.ts";
import {
  DEFAULT_ORDER_SOURCE,
  ORDER_READERS,
  ORDER_SOURCES,
  ORDER_SOURCE_MODULES,
  ORDER_SOURCE_SECRET_LINKS,
  orderSourceEnvironment,
  orderSourceSecretsOf,
  orderSourceSettingsFrom,
  orderSourceSettingsOf,
} from "./order-source.ts";

const docs = readFileSync(new URL("../docs/orders.md", import.meta.url), "utf8");

describe("reading ORDER_SOURCE and the source's settings", () => {
  it("defaults to the table, with the wait's default and no settings of its own", () => {
    expect(orderSourceSettingsFrom({})).toEqual({ source: "table", maxWaitMs: 600_000, values: {} });
    expect(orderSourceSettingsFrom({ ORDER_SOURCE: " ", ORDER_SOURCE_MAX_WAIT_S: "30" })).toEqual({
      source: "table",
      maxWaitMs: 30_000,
      values: {},
    });
  });

  it("reads the http source's URL and each attempt's timeout (default 4000)", () => {
    expect(orderSourceSettingsFrom({ ORDER_SOURCE: "http", ORDER_API_URL: "https://shop.example.com/api" })).toEqual({
      source: "http",
      maxWaitMs: 600_000,
      values: { url: "https://shop.example.com/api", timeoutMs: 4000 },
    });
    expect(
      orderSourceSettingsFrom({
        ORDER_SOURCE: "http",
        ORDER_API_URL: "http://127.0.0.1:1",
        ORDER_API_TIMEOUT_MS: "100",
      }).values,
    ).toEqual({ url: "http://127.0.0.1:1", timeoutMs: 100 });
  });

  it.each([
    [{ ORDER_SOURCE: "shopify" }, 'ORDER_SOURCE="shopify" is invalid: expected table or http'],
    [
      { ORDER_SOURCE: "http" },
      "ORDER_API_URL is not set: ORDER_SOURCE=http reads orders from {ORDER_API_URL}/orders/{order_id}",
    ],
    [
      { ORDER_SOURCE: "http", ORDER_API_URL: "shop.example.com" },
      'ORDER_API_URL="shop.example.com" is invalid: expected an http:// or https:// URL',
    ],
    [
      { ORDER_SOURCE: "http", ORDER_API_URL: "https://s.example", ORDER_API_TIMEOUT_MS: "99" },
      'ORDER_API_TIMEOUT_MS="99" is invalid: expected an integer from 100 to 8000',
    ],
    [{ ORDER_SOURCE_MAX_WAIT_S: "841" }, 'ORDER_SOURCE_MAX_WAIT_S="841" is invalid: expected an integer from 1 to 840'],
  ])("refuses %o, naming the variable", (env, message) => {
    expect(() => orderSourceSettingsFrom(env)).toThrow(OrderSourceSettingError);
    expect(() => orderSourceSettingsFrom(env)).toThrow(message);
  });
});

describe("what the functions that read orders get", () => {
  it("no variables with the table; ORDER_SOURCE, the wait and the source's settings otherwise", () => {
    expect(orderSourceEnvironment(orderSourceSettingsFrom({ ORDER_SOURCE_MAX_WAIT_S: "30" }))).toEqual({});
    expect(
      orderSourceEnvironment(
        orderSourceSettingsFrom({
          ORDER_SOURCE: "http",
          ORDER_API_URL: "https://s.example",
          ORDER_SOURCE_MAX_WAIT_S: "300",
        }),
      ),
    ).toEqual({
      ORDER_SOURCE: "http",
      ORDER_SOURCE_MAX_WAIT_S: "300",
      ORDER_API_URL: "https://s.example",
      ORDER_API_TIMEOUT_MS: "4000",
    });
  });

  it("links the source's secrets to the order readers only, each a link of its own", () => {
    const links = ORDER_SOURCES.flatMap((s) => orderSourceSecretsOf(s).map((x) => x.secret.link));
    expect(ORDER_SOURCE_SECRET_LINKS).toEqual(links);
    expect(new Set(links).size).toBe(links.length);
    expect(links).toContain("OrderApiToken");
    for (const link of links) expect(Object.values(LINKS)).not.toContain(link);
    for (const source of ORDER_SOURCES) {
      const own = orderSourceSecretsOf(source).map((x) => x.secret.link);
      for (const fn of ORDER_READERS)
        expect(linksOf(fn, { orderSource: source }).filter((l) => links.includes(l as never))).toEqual(own);
      expect(linksOf("intakeExtract", { orderSource: source }).filter((l) => links.includes(l as never))).toEqual([]);
    }
    expect(linksOf("kernel")).not.toContain("OrderApiToken");
  });
});

describe("docs/orders.md says what the registry holds", () => {
  it("lists every source with where its orders come from and its adapter, the default first", () => {
    expect(ORDER_SOURCES[0]).toBe(DEFAULT_ORDER_SOURCE);
    const rows = ORDER_SOURCE_MODULES.map(
      (s) =>
        `| \`${s.name}\`${s.name === DEFAULT_ORDER_SOURCE ? " (default)" : ""} | ${s.description} | \`${s.adapter}\` |`,
    );
    expect(docs).toContain(["| `ORDER_SOURCE` | orders come from | adapter |", "|---|---|---|", ...rows].join("\n"));
    for (const s of ORDER_SOURCE_MODULES)
      expect(() => readFileSync(new URL(`../${s.adapter}`, import.meta.url)), s.adapter).not.toThrow();
  });

  it("lists ORDER_SOURCE and every source's settings and secrets in the settings' table", () => {
    const lines = docs.split("\n");
    const row = (start: string) => lines.find((l) => l.startsWith(start));
    expect(row("| `ORDER_SOURCE` | `")).toBe(
      `| \`ORDER_SOURCE\` | \`${DEFAULT_ORDER_SOURCE}\` | ${ORDER_SOURCES.map((s) => `\`${s}\``).join(" or ")} |`,
    );
    for (const source of ORDER_SOURCES) {
      for (const { setting } of orderSourceSettingsOf(source)) {
        const expected =
          setting.kind === "int"
            ? `| \`${setting.env}\` | \`${setting.limits.default}\` (${setting.limits.min}–${setting.limits.max}) | ${setting.description} |`
            : `| \`${setting.env}\` | (required with \`${source}\`) | ${setting.description} |`;
        expect(row(`| \`${setting.env}\` |`)).toBe(expected);
      }
      for (const { secret } of orderSourceSecretsOf(source)) {
        const names = [secret.env, ...(secret.fileEnv ? [secret.fileEnv] : [])].map((v) => `\`${v}\``).join(" / ");
        const line = row(`| ${names} | (required with \`${source}\`, locally) |`);
        expect(line, secret.env).toBeDefined();
        expect(line).toContain(`\`${secret.link}\` secret`);
      }
    }
  });
});
