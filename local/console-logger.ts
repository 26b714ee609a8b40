// The handlers' logs on the local stack's console as lines of text: `  [warn] claims-kernel  message  key=value`,
// not the JSON the Powertools logger writes for CloudWatch. The fields are the ones the handlers log (ids, codes,
// outcomes: never customer text or secrets, functions/observability/logger.ts); CLAIMS_LOG_FORMAT=json keeps JSON.
import type { HandlerLogger, LogLevelName } from "../functions/observability/logger.ts";

const RANK: Record<LogLevelName, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 99 };

/** One field as text: a string as is, an error as "Name: message", anything else as JSON, each cut at 200 characters. */
function fieldText(value: unknown): string {
  const text =
    value instanceof Error
      ? `${value.name}: ${value.message}`
      : typeof value === "string"
        ? value
        : (JSON.stringify(value) ?? String(value));
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** A log call's message and fields as one line: `message  key=value key=value`. */
export function logLine(input: unknown, extra: readonly unknown[]): string {
  const fields: Record<string, unknown> = {};
  let message = "";
  if (typeof input === "string") message = input;
  else if (input && typeof input === "object") {
    const { message: m, ...rest } = input as Record<string, unknown>;
    message = typeof m === "string" ? m : "";
    Object.assign(fields, rest);
  }
  for (const x of extra) {
    if (x instanceof Error) fields.error = x;
    else if (x && typeof x === "object") Object.assign(fields, x);
    else if (x !== undefined) fields.detail = x;
  }
  const pairs = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  return [message, ...pairs].filter((p) => p !== "").join("  ");
}

/** A logger for `service` that writes lines of text at `level` and above through `write` (default: WARN and above on stderr, as Powertools). */
export function consoleLogger(
  service: string,
  level: LogLevelName,
  write: (line: string, name: Exclude<LogLevelName, "SILENT">) => void = (line, name) =>
    (RANK[name] >= RANK.WARN ? process.stderr : process.stdout).write(`${line}\n`),
): HandlerLogger {
  const at =
    (name: Exclude<LogLevelName, "SILENT">) =>
    (input: unknown, ...extra: unknown[]): void => {
      if (RANK[name] < RANK[level]) return;
      write(`  [${name.toLowerCase()}] ${service}  ${logLine(input, extra)}`, name);
    };
  return { debug: at("DEBUG"), info: at("INFO"), warn: at("WARN"), error: at("ERROR") } as HandlerLogger;
}
