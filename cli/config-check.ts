// `claims config check FILE`: reads a configuration or scenario file the way `claims batch` and `claims serve`
// do, and says what it understood (or what is wrong, at the key's own line).
import { agentHandshake, parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig, ContractFormat } from "../core/claim/config.ts";
import { parseScenarioFile } from "../core/history/scenarios.ts";
import type { ScenarioFile } from "../core/history/scenarios.ts";
import { SourceFileError } from "../core/claim/errors.ts";
import { parseYamlSource } from "../core/claim/yaml-source.ts";
import type { IgnoredField } from "../core/claim/yaml-source.ts";
import type { HandshakeResult } from "../core/integrity/registry.ts";
import type { Order } from "../core/integrity/contracts.ts";
import { orderCategories, orderTotal, readOrder } from "../core/kernel/order-view.ts";
import { describeReturnWindow } from "../core/kernel/policy.ts";
import { formatMoney } from "../core/kernel/money.ts";

/** Which kind of file to read. */
export type CheckKind = "config" | "scenarios";

/** What `config check` read from a file. */
type CheckedFile =
  | { kind: "config"; file: string; config: ClaimsConfig; handshake: HandshakeResult }
  | { kind: "scenarios"; file: string; scenarios: ScenarioFile };

const CONFIG_KEYS = ["agents", "context_store", "llm_defaults", "simulation", "database"];

/** Tells a scenario file (top-level `scenarios`) from a configuration (`agents`, `context_store`, …) by its content. */
function detectKind(text: string, file: string): CheckKind {
  const value = parseYamlSource(text, file).value;
  const keys = value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
  if (keys.includes("scenarios")) return "scenarios";
  if (keys.some((k) => CONFIG_KEYS.includes(k))) return "config";
  throw new SourceFileError(file, [
    {
      file,
      line: 1,
      field: "",
      message: `neither a configuration (top-level ${CONFIG_KEYS.join(", ")}) nor a scenario file (top-level scenarios); pass --kind config or --kind scenarios`,
    },
  ]);
}

/** Reads `text` as `kind` (detected from the content when not given); throws `SourceFileError` when it is invalid. */
export function checkFile(
  text: string,
  file: string,
  nowMs: number,
  kind: CheckKind = detectKind(text, file),
): CheckedFile {
  if (kind === "scenarios") return { kind, file, scenarios: parseScenarioFile(text, file) };
  const config = parseConfig(text, file, nowMs);
  const garbled = config.orders.flatMap((o) => {
    const reading = readOrder(o);
    return reading.ok ? [] : [{ file, field: `context_store.orders.${o.order_id}`, message: reading.problem }];
  });
  if (garbled.length > 0) throw new SourceFileError(file, garbled);
  return { kind, file, config, handshake: agentHandshake(config) };
}

const FORMAT: Record<ContractFormat, string> = {
  "claims-crew": "Claims Crew",
  "dir-seed-era": "DIR sample 35, seed-era (flat contract with authorized_instruments)",
  "roa.dir/v1": "DIR sample 35, roa.dir/v1 ResponsibilityContract document",
};

const eur = (n: number) => `${n.toFixed(2)} EUR`;
/** An order's total with its currency, as the check prints it: "1200.00 EUR", "1200 JPY", "5.250 KWD". */
const describeOrderTotal = (o: Order) => {
  const total = orderTotal(o);
  return `${formatMoney(total)} ${total.currency}`;
};

/** Rows of cells as aligned columns. */
function table(rows: readonly string[][]): string[] {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

function block(title: string, lines: readonly string[]): string[] {
  const pad = " ".repeat(title.length + 4);
  return lines.map((line, i) => (i === 0 ? `  ${title}: ${line}` : `${pad}${line}`));
}

/** The lines listing ignored keys once each, with why (empty when none). */
function formatIgnored(ignored: readonly IgnoredField[], title = "Ignored   "): string[] {
  return ignored.length === 0
    ? []
    : block(
        title,
        ignored.map((f) => `${f.path} (${f.why})`),
      );
}

/** One line naming the ignored keys, for the header of a run (`claims config check` says why for each). */
export function ignoredSummary(ignored: readonly IgnoredField[]): string {
  return `${ignored.map((f) => f.path).join(", ")} (accepted and not used: only DIR sample 35's runtime reads them; claims config check FILE says why)`;
}

/** What was understood from a configuration, for a person. */

/** The shadow policy's lines: decided beside the agent's on every decision, never acted on. */
function shadowLines(shadow: NonNullable<ClaimsConfig["agent"]["shadow"]>): string[] {
  const c = shadow.contract;
  return [
    `${shadow.agentId} v${shadow.version}: decided beside the agent's on every decision and recorded, never acted on`,
    `refundable: ${c.allowed_refund_categories.join(", ")}; up to ${eur(c.max_refund_without_escalation)} without escalation; return window ${describeReturnWindow(c)}`,
  ];
}

function describeConfig(config: ClaimsConfig, handshake: HandshakeResult): string[] {
  const { agent, reading } = config;
  const r = agent.responsibility;
  const c = agent.contract;
  const registry = handshake.ok ? "accepted by the registry (1.x)" : `REFUSED by the registry: ${handshake.message}`;
  return [
    ...block("Format    ", [FORMAT[reading.format]]),
    ...block("Agent     ", [`${agent.agentId} v${agent.version}, ${registry}`, `role ${r.role}: ${r.mission}`]),
    ...block("Policies  ", [
      `${r.allowed_policy_types.join(", ")}; escalate below confidence ${r.escalate_on_uncertainty}`,
    ]),
    ...block("Categories", [
      r.authorized_categories.length > 0
        ? `the agent's: ${r.authorized_categories.join(", ")}`
        : "the agent's: any (none listed)",
      `refundable: ${c.allowed_refund_categories.join(", ")}`,
    ]),
    ...block("Bounds    ", [
      `up to ${eur(c.max_refund_without_escalation)} without escalation; return window ${describeReturnWindow(c)} (× 24 h from the claim's receipt)`,
    ]),
    ...(agent.shadow ? block("Shadow    ", shadowLines(agent.shadow)) : []),
    ...block("Orders    ", [
      `${config.orders.length} (authoritative, never shown to the crew)`,
      ...table(
        config.orders.map((o) => [
          o.order_id,
          orderCategories(o),
          describeOrderTotal(o),
          `purchased ${o.purchase_date}`,
          o.customer_id ? `customer ${o.customer_id}` : "",
        ]),
      ),
    ]),
    ...block("LLM       ", [
      `${config.llm.model} @ ${config.llm.base_url} (provider ${config.llm.provider}; LLM_* environment variables override these)`,
    ]),
    ...block("Run id    ", [config.simulationId]),
    ...(reading.mappings.length > 0 ? block("Read as   ", reading.mappings) : []),
    ...formatIgnored(reading.ignored),
  ];
}

/** What was understood from a scenario file, for a person. */
function describeScenarios(file: ScenarioFile): string[] {
  const rows = table(
    file.scenarios.map((s) => [
      s.id,
      `expects ${s.expected.verdict}${s.expected.reason_code ? ` ${s.expected.reason_code}` : ""}`,
      "claim" in s.input
        ? `claim ${s.input.claim.order_id} ${s.input.claim.amount_eur} EUR ${s.input.claim.category}`
        : `free text (${s.input.claim_text.length} chars)`,
      s.label,
    ]),
  );
  return [
    ...block("Rows      ", rows),
    ...(file.idsFromLabels.length > 0
      ? block("Ids       ", [`from the labels ('SCENARIO A - …' → A): ${file.idsFromLabels.join(", ")}`])
      : []),
    ...formatIgnored(file.ignored),
  ];
}

/** The full report of `config check`. */
export function formatCheck(checked: CheckedFile): string {
  if (checked.kind === "config") {
    const ok = checked.handshake.ok;
    return [
      `${checked.file}: a configuration — ${ok ? "valid" : "INVALID"}`,
      ...describeConfig(checked.config, checked.handshake),
      "",
    ].join("\n");
  }
  const n = checked.scenarios.scenarios.length;
  return [
    `${checked.file}: a scenario file with ${n} scenario${n === 1 ? "" : "s"} — valid`,
    ...describeScenarios(checked.scenarios),
    "",
  ].join("\n");
}

/** The `--json` form of `config check`. */
export function checkJson(checked: CheckedFile): Record<string, unknown> {
  if (checked.kind === "scenarios") {
    const { scenarios, idsFromLabels, ignored } = checked.scenarios;
    return {
      kind: "scenarios",
      file: checked.file,
      valid: true,
      scenarios: scenarios.map((s) => ({
        id: s.id,
        label: s.label,
        input: "claim" in s.input ? "claim" : "claim_text",
        expected: s.expected,
      })),
      ids_from_labels: idsFromLabels,
      ignored,
    };
  }
  const { config, handshake } = checked;
  return {
    kind: "config",
    file: checked.file,
    valid: handshake.ok,
    format: config.reading.format,
    agent: {
      agent_id: config.agent.agentId,
      version: config.agent.version,
      registry: handshake.ok ? "ACCEPTED" : { code: handshake.code, message: handshake.message },
      responsibility: config.agent.responsibility,
    },
    contract: config.agent.contract,
    orders: config.orders,
    llm: config.llm,
    run_id: config.simulationId,
    mappings: config.reading.mappings,
    ignored: config.reading.ignored,
  };
}
