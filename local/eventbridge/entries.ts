// PutEvents entries as the local bus reads them: each entry checked as AWS checks it (required fields, a JSON
// object detail, resources, time, an existing bus) and built into the EventBridge envelope rule targets receive,
// or refused with the per-entry error code AWS answers; and an entry's size as AWS counts it.
import type { BusEvent } from "./server.ts";

/** One PutEvents request entry as it arrives on the wire (AWS JSON 1.1 field names). */
export type PutEventsEntryInput = {
  readonly Source?: unknown;
  readonly DetailType?: unknown;
  readonly Detail?: unknown;
  readonly Resources?: unknown;
  readonly Time?: unknown;
  readonly EventBusName?: unknown;
  readonly TraceHeader?: unknown;
};

/** A per-entry failure, as in the PutEvents response. */
export type EntryFailure = { readonly errorCode: string; readonly errorMessage: string };

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type BuildContext = {
  readonly account: string;
  readonly region: string;
  readonly now: () => Date;
  readonly newId: () => string;
  readonly busNames: ReadonlySet<string>;
};

function invalidArgument(name: string, reason: string): EntryFailure {
  return { errorCode: "InvalidArgument", errorMessage: `Parameter ${name} is not valid. Reason: ${reason}` };
}

export type Built =
  | { readonly ok: true; readonly busName: string; readonly event: BusEvent }
  | { readonly ok: false; readonly failure: EntryFailure };

function rejected(failure: EntryFailure): Built {
  return { ok: false, failure };
}

export function buildEvent(input: PutEventsEntryInput, ctx: BuildContext): Built {
  if (typeof input.Source !== "string" || input.Source === "")
    return rejected(invalidArgument("Source", "Source is a required argument."));
  if (typeof input.DetailType !== "string" || input.DetailType === "")
    return rejected(invalidArgument("DetailType", "DetailType is a required argument."));
  if (typeof input.Detail !== "string" || input.Detail === "")
    return rejected(invalidArgument("Detail", "Detail is a required argument."));
  let detail: unknown;
  try {
    detail = JSON.parse(input.Detail);
  } catch {
    return rejected({ errorCode: "MalformedDetail", errorMessage: "Detail is malformed." });
  }
  if (!isObject(detail))
    return rejected({ errorCode: "MalformedDetail", errorMessage: "Detail is malformed: it must be a JSON object." });
  let resources: string[] = [];
  if (input.Resources !== undefined && input.Resources !== null) {
    if (!Array.isArray(input.Resources) || !input.Resources.every((r) => typeof r === "string")) {
      return rejected(invalidArgument("Resources", "Resources must be a list of strings."));
    }
    resources = input.Resources as string[];
  }
  let time = ctx.now();
  if (input.Time !== undefined && input.Time !== null) {
    const parsed =
      typeof input.Time === "number"
        ? new Date(input.Time * 1000)
        : typeof input.Time === "string"
          ? new Date(input.Time)
          : new Date(Number.NaN);
    if (Number.isNaN(parsed.getTime())) return rejected(invalidArgument("Time", "Time must be a timestamp."));
    time = parsed;
  }
  const busName = busNameOf(input.EventBusName);
  if (!ctx.busNames.has(busName))
    return rejected({ errorCode: "NotFoundException", errorMessage: `Event bus ${busName} does not exist.` });
  const event: BusEvent = {
    version: "0",
    id: ctx.newId(),
    "detail-type": input.DetailType,
    source: input.Source,
    account: ctx.account,
    time: time.toISOString().replace(/\.\d{3}Z$/, "Z"),
    region: ctx.region,
    resources,
    detail,
  };
  return { ok: true, busName, event };
}

export function busNameOf(value: unknown): string {
  if (typeof value !== "string" || value === "") return "default";
  const arn = /^arn:[^:]+:events:[^:]*:[^:]*:event-bus\/(.+)$/.exec(value);
  return arn?.[1] ?? value;
}

/** Entry size as AWS computes it (Time 14 bytes, UTF-8 bytes of Source, DetailType, Detail, Resources). */
export function entrySize(e: PutEventsEntryInput): number {
  const bytes = (v: unknown) => (typeof v === "string" ? Buffer.byteLength(v, "utf8") : 0);
  let size = e.Time !== undefined && e.Time !== null ? 14 : 0;
  size += bytes(e.Source) + bytes(e.DetailType) + bytes(e.Detail);
  if (Array.isArray(e.Resources)) for (const r of e.Resources) size += bytes(r);
  return size;
}
