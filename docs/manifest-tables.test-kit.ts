// The tables of the documentation that restate the app's manifest (app/): the functions, the queues, the routes
// and the alarms. A table is recognised by what its first column names — functions (`intakeApi`, or their handler
// files `intake-api.ts`), queues (`crew-events`, `CrewEventsQueue`), routes (`POST /claims`), alarms — and then
// must name every one of them; its columns are read by their headers (memory, timeout, links, policy, trigger,
// consumer, kind, batch, receives, token) and each value checked against the manifest. So a function, a queue, a
// route or an alarm added to the app without its row, or a setting changed without its table, fails
// docs/docs.test.ts; a new table restating the manifest is checked as soon as it is written.
import { existsSync } from "node:fs";
import { posix, resolve } from "node:path";
import {
  FUNCTIONS,
  LINKS,
  POLICY_FUNCTIONS,
  QUEUES,
  ROUTES,
  eventSourceBatch,
  linksOf,
  type FunctionKey,
  type QueueRole,
} from "../app/manifest.ts";
import type { MarkdownProblem } from "./markdown.test-kit.ts";
import { REPO_ROOT } from "./markdown.test-kit.ts";

/** One Markdown table: its header cells and its rows, each with its line. */
export interface MarkdownTable {
  readonly line: number;
  readonly header: readonly string[];
  readonly rows: readonly { readonly line: number; readonly cells: readonly string[] }[];
}

/** The cells of a table row (`|` inside a cell is written `\|`). */
function cellsOf(row: string): string[] {
  const inner = row.trim().replace(/^\|/, "").replace(/\|$/, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** Every table of a Markdown document (outside fenced code). */
export function markdownTables(markdown: string): MarkdownTable[] {
  const lines = markdown.split("\n");
  const tables: MarkdownTable[] = [];
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*```/.test(lines[i]!)) fenced = !fenced;
    if (fenced || !/^\s*\|/.test(lines[i]!) || !/^\s*\|[\s:|-]+\|\s*$/.test(lines[i + 1] ?? "")) continue;
    const header = cellsOf(lines[i]!);
    const rows: { line: number; cells: string[] }[] = [];
    let j = i + 2;
    for (; j < lines.length && /^\s*\|/.test(lines[j]!); j++) rows.push({ line: j + 1, cells: cellsOf(lines[j]!) });
    tables.push({ line: i + 1, header, rows });
    i = j - 1;
  }
  return tables;
}

/** The backticked words of a cell. */
const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

const FUNCTION_KEYS = Object.keys(FUNCTIONS) as FunctionKey[];
const QUEUE_ROLES = Object.keys(QUEUES) as QueueRole[];
const LINK_NAMES: readonly string[] = [
  ...(Object.values(LINKS) as unknown[]).filter((v): v is string => typeof v === "string"),
  ...Object.values(LINKS.queues),
];
/** `crewEvents` → `crew-events`. */
const kebab = (role: string) => role.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** `functions/intake-api.handler` → `intake-api.ts`. */
const handlerFile = (key: FunctionKey) => `${posix.basename(FUNCTIONS[key].handler).split(".")[0]}.ts`;
const wordIn = (word: string, text: string) =>
  new RegExp(`(^|[^\\w-])${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\w-])`).test(text);
const numbersIn = (text: string) => [...text.matchAll(/\d[\d,]*/g)].map((m) => Number(m[0].replace(/,/g, "")));

/** The functions a first-column cell names: by key (`intakeApi`) or by handler file (`intake-api.ts`). */
function functionsNamed(cell: string): FunctionKey[] {
  const words = ticked(cell);
  return FUNCTION_KEYS.filter((k) => words.includes(k) || words.includes(handlerFile(k)));
}

/** The queues a first-column cell names: by role, link name or kebab name (`crew-events`). */
function queuesNamed(cell: string): QueueRole[] {
  const text = cell.replace(/`/g, "");
  return QUEUE_ROLES.filter(
    (r) => text === r || text === kebab(r) || text === LINKS.queues[r] || ticked(cell).includes(LINKS.queues[r]),
  );
}

/** The routes a first-column cell names (`POST /claims`). */
function routesNamed(cell: string): (keyof typeof ROUTES)[] {
  return ticked(cell).filter((w): w is keyof typeof ROUTES => w in ROUTES);
}

/** The queue a function consumes, if it consumes one. */
const consumed = (key: FunctionKey) => QUEUE_ROLES.find((r) => QUEUES[r].consumer === key);

/** What is wrong with one function row's cell under `header` (undefined: nothing, or a column not checked). */
function functionCellProblem(key: FunctionKey, header: string, cell: string): string | undefined {
  const fn = FUNCTIONS[key];
  const h = header.toLowerCase();
  if (h.startsWith("memory"))
    return cell.includes(fn.memory) ? undefined : `${key}'s memory is ${fn.memory} (app/functions.ts)`;
  if (h.startsWith("timeout"))
    return cell.includes(`${fn.timeoutSeconds} s`) ? undefined : `${key}'s timeout is ${fn.timeoutSeconds} s`;
  if (h.startsWith("links")) {
    const want = linksOf(key);
    const named = LINK_NAMES.filter((l) => wordIn(l, cell));
    const missing = want.filter((l) => !named.includes(l));
    const extra = named.filter((l) => !(want as readonly string[]).includes(l));
    return missing.length + extra.length === 0
      ? undefined
      : `${key}'s links are ${want.join(", ")}${missing.length ? `; missing ${missing.join(", ")}` : ""}${extra.length ? `; not its: ${extra.join(", ")}` : ""}`;
  }
  if (h.startsWith("policy")) {
    const reads = (POLICY_FUNCTIONS as readonly string[]).includes(key);
    return cell.includes("✓") === reads ? undefined : `${key} ${reads ? "reads" : "does not read"} the policy`;
  }
  if (h.startsWith("trigger")) {
    const role = consumed(key);
    const problems: string[] = [];
    const reserved = /reserved (\d+)/.exec(cell);
    const want = "reservedConcurrency" in fn ? fn.reservedConcurrency : undefined;
    if (reserved && Number(reserved[1]) !== want) problems.push(`${key}'s reserved concurrency is ${want ?? "none"}`);
    if (role !== undefined) {
      const q = QUEUES[role];
      if (!wordIn(LINKS.queues[role], cell) && !wordIn(kebab(role), cell))
        problems.push(`${key} consumes ${LINKS.queues[role]}`);
      const batch = /batch (?:of )?(?:up to )?(\d+)/.exec(cell);
      if (batch && Number(batch[1]) !== q.batchSize) problems.push(`${LINKS.queues[role]}'s batch is ${q.batchSize}`);
      const max = /\(max (\S+?)\)/.exec(cell);
      const wantMax = q.llm ? "`LLM_MAX_CONCURRENCY`" : String(q.maxConcurrency);
      if (max && max[1] !== wantMax) problems.push(`${LINKS.queues[role]}'s maximum concurrency is ${wantMax}`);
      const window = /gathered for up to (\d+) s/.exec(cell);
      const wantWindow = eventSourceBatch(role).windowSeconds;
      if (window && Number(window[1]) !== wantWindow)
        problems.push(`${LINKS.queues[role]}'s batching window is ${wantWindow} s`);
    }
    return problems.length ? problems.join("; ") : undefined;
  }
  return undefined;
}

/** What is wrong with one queue row's cell under `header`. */
function queueCellProblem(role: QueueRole, header: string, cell: string): string | undefined {
  const q = QUEUES[role];
  const h = header.toLowerCase();
  const name = kebab(role);
  if (h.startsWith("consumer"))
    return wordIn(q.consumer, cell.replace(/`/g, "")) ? undefined : `${name} is consumed by ${q.consumer}`;
  if (h.startsWith("kind"))
    return cell.startsWith(q.fifo ? "FIFO" : "standard") ? undefined : `${name} is ${q.fifo ? "FIFO" : "standard"}`;
  if (h.startsWith("batch")) {
    const window = eventSourceBatch(role).windowSeconds;
    const ok = numbersIn(cell)[0] === q.batchSize && (window === 0 || cell.includes(`${window} s`));
    return ok ? undefined : `${name}'s batch is ${q.batchSize}${window ? `, gathered for up to ${window} s` : ""}`;
  }
  if (h.includes("receives"))
    return numbersIn(cell)[0] === q.maxReceives ? undefined : `${name} allows ${q.maxReceives} receives before its DLQ`;
  return undefined;
}

/** What is wrong with one route row's cell under `header`. */
function routeCellProblem(key: keyof typeof ROUTES, header: string, cell: string): string | undefined {
  const h = header.toLowerCase();
  const { auth } = ROUTES[key];
  if (h === "token" || h === "auth") {
    const ok = auth === "none" ? cell !== "intake" && cell !== "reviewer" : cell === auth;
    return ok ? undefined : `${key} takes ${auth === "none" ? "no bearer token" : `the ${auth} token`}`;
  }
  return undefined;
}

/** One kind of entry of the manifest a table may list: how a first cell names them, every one, how a cell is checked. */
interface ListedKind<K extends string> {
  readonly what: string;
  readonly all: readonly K[];
  readonly named: (cell: string) => K[];
  readonly cellProblem: (key: K, header: string, cell: string) => string | undefined;
}

const KINDS: readonly ListedKind<string>[] = [
  {
    what: "function",
    all: FUNCTION_KEYS,
    named: functionsNamed,
    cellProblem: functionCellProblem as ListedKind<string>["cellProblem"],
  },
  {
    what: "queue",
    all: QUEUE_ROLES,
    named: queuesNamed,
    cellProblem: queueCellProblem as ListedKind<string>["cellProblem"],
  },
  {
    what: "route",
    all: Object.keys(ROUTES),
    named: routesNamed,
    cellProblem: routeCellProblem as ListedKind<string>["cellProblem"],
  },
];

/**
 * What is wrong with the tables of `file` (a Markdown file inside `root`, its text `markdown`) that restate the
 * manifest: a table whose first column names two or more functions, queues or routes names all of them, and its
 * checked columns agree with the manifest; a table of files (first header `file`) names files of the page's folder.
 */
export function manifestTableProblems(file: string, markdown: string, root: string = REPO_ROOT): MarkdownProblem[] {
  const problems: MarkdownProblem[] = [];
  const problem = (line: number, message: string) => problems.push({ file, line, message });
  for (const table of markdownTables(markdown)) {
    if (/^files?$/i.test(table.header[0] ?? "")) {
      for (const row of table.rows)
        for (const named of ticked(row.cells[0] ?? "").filter((w) => /^[\w.-]+\.\w+$/.test(w)))
          if (!existsSync(resolve(root, posix.dirname(file), named)))
            problem(row.line, `${named} is not a file of ${posix.dirname(file)}/`);
    }
    for (const kind of KINDS) {
      const rows = table.rows.map((row) => ({ row, keys: kind.named(row.cells[0] ?? "") }));
      if (rows.filter((r) => r.keys.length > 0).length < 2) continue;
      const listed = new Set(rows.flatMap((r) => r.keys));
      const missing = kind.all.filter((k) => !listed.has(k));
      if (missing.length > 0) problem(table.line, `the table of ${kind.what}s lacks ${missing.join(", ")}`);
      for (const { row, keys } of rows)
        for (const key of keys)
          table.header.forEach((header, i) => {
            if (i === 0) return;
            const message = kind.cellProblem(key, header, row.cells[i] ?? "");
            if (message) problem(row.line, `${header}: ${message}`);
          });
    }
  }
  return problems;
}

/**
 * What is wrong with a table of alarms (first header `alarm`) against `alarms`, the names of the alarms the app
 * deploys: each row names alarms exactly (`ReviewBacklog`) or by a pattern (`<function>Errors`, the alarms ending
 * so), optionally listing the names it stands for (`<Dlq>Messages` … `CrewEventsDlq`, …, or whole names) or giving
 * examples of them (`e.g.`), and counting them: `× 9` the alarms without `PAYMENT_PROVIDER`, then what it adds
 * after a `+` (`(+ 2)`, or the names it adds: `+ \`PaymentsDlq\``);
 * every alarm is some row's, every name a row gives is an alarm, and every count is right.
 */
export function alarmTableProblems(file: string, markdown: string, alarms: readonly string[]): MarkdownProblem[] {
  const problems: MarkdownProblem[] = [];
  const problem = (line: number, message: string) => problems.push({ file, line, message });
  for (const table of markdownTables(markdown).filter((t) => /^alarms?$/i.test(t.header[0] ?? ""))) {
    // The names rows give exactly, without a pattern: no pattern's row stands for them.
    const exact = new Set(
      table.rows
        .map((row) => ticked(row.cells[0] ?? ""))
        .flatMap((words) => (words.some((w) => w.includes("<")) ? [] : words)),
    );
    const covered = new Set<string>();
    for (const row of table.rows) {
      const cell = row.cells[0] ?? "";
      const words = ticked(cell);
      const pattern = words.find((w) => /^<[^>]+>\w+$/.test(w));
      let stands: string[];
      const named: string[] = []; // names given as examples
      if (pattern === undefined) stands = words;
      else {
        const suffix = pattern.replace(/^<[^>]+>/, "");
        // The names it lists (`CrewEventsDlq`): plain words, not a setting (`PAYMENT_PROVIDER`) named beside them.
        const listed = words
          .filter((w) => w !== pattern && /^[A-Za-z0-9]+$/.test(w))
          .map((w) => (w.endsWith(suffix) ? w : `${w}${suffix}`));
        const all = alarms.filter((a) => a.endsWith(suffix) && !exact.has(a));
        stands = listed.length > 0 && !/\be\.g\./.test(cell) ? listed : all;
        for (const name of listed.filter((n) => !stands.includes(n))) named.push(name);
        const unlisted = all.filter((a) => !stands.includes(a));
        if (unlisted.length > 0) problem(row.line, `${pattern} leaves out ${unlisted.join(", ")}`);
      }
      const count = /×\s*(\d+)/.exec(cell);
      if (count) {
        // What a payment provider adds, after the `+`: a number (`(+ 2)`) or the names it adds (`+ \`PaymentsDlq\``).
        const added = (cell.slice(count.index).split("+")[1] ?? "").split(")")[0]!;
        const more = /^\s*(\d+)/.exec(added);
        const stated = Number(count[1]) + (more ? Number(more[1]) : ticked(added).length);
        if (stated !== stands.length)
          problem(row.line, `${pattern ?? words.join(", ")} stands for ${stands.length} alarms, not ${stated}`);
      }
      for (const name of named) if (!alarms.includes(name)) problem(row.line, `${name} is not an alarm of the app`);
      for (const name of stands) {
        if (!alarms.includes(name)) problem(row.line, `${name} is not an alarm of the app`);
        covered.add(name);
      }
    }
    const missing = alarms.filter((a) => !covered.has(a));
    if (missing.length > 0) problem(table.line, `the table of alarms lacks ${missing.join(", ")}`);
  }
  return problems;
}
