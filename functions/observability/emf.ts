// CloudWatch Embedded Metric Format records packed into as few log lines as their values allow. Powertools Metrics
// serializes one record per line with one metric directive: every metric under every dimension set of the record.
// EMF itself takes several directives in one line (`_aws.CloudWatchMetrics` is an array), each naming its own
// metrics and dimension sets, all reading their values from the line's root. So the records of one invocation (the
// kernel's ClaimsDecided, RefundsExecuted and DecisionLatency of a claim, a cold start) go out as one line, each
// metric still published under exactly its own dimension sets, with the root members they share (the timestamp,
// `service`, `Flow`, `function`, `claim_id`) written once instead of once per line.

/** One metric directive: the metrics it publishes, each under every one of its dimension sets. */
export interface EmfDirective {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit?: string }[];
}

/** One EMF document (one log line): the directives, and at the root the dimension values, metadata and metric values. */
export interface EmfDocument {
  _aws: { Timestamp: number; CloudWatchMetrics: EmfDirective[] };
  [key: string]: unknown;
}

/** The (metric, dimension set) pairs a document publishes: what CloudWatch counts once per line. */
function publications(doc: EmfDocument): Set<string> {
  const out = new Set<string>();
  for (const d of doc._aws.CloudWatchMetrics)
    for (const m of d.Metrics) for (const set of d.Dimensions) out.add(`${d.Namespace}|${m.Name}|${set.join(",")}`);
  return out;
}

/**
 * Whether `doc` can join `line`: every root member they both have holds the same value (a dimension, metadata or
 * metric value is one member of the line), and no metric is published twice under the same dimension set (the
 * same count of two claims stays two).
 */
function fits(line: EmfDocument, doc: EmfDocument): boolean {
  for (const [key, value] of Object.entries(doc)) {
    if (key === "_aws" || !Object.hasOwn(line, key)) continue;
    if (line[key] !== value) return false;
  }
  const taken = publications(line);
  for (const p of publications(doc)) if (taken.has(p)) return false;
  return true;
}

const sameSets = (a: string[][], b: string[][]) =>
  a.length === b.length && a.every((set, i) => set.join(",") === b[i]!.join(","));

/** `doc` merged into `line`: its root members added, its metrics into a directive with the same dimension sets. */
function merge(line: EmfDocument, doc: EmfDocument): EmfDocument {
  const { _aws, ...root } = doc;
  const directives = line._aws.CloudWatchMetrics.map((d) => ({ ...d, Metrics: [...d.Metrics] }));
  for (const d of _aws.CloudWatchMetrics) {
    const same = directives.find((x) => x.Namespace === d.Namespace && sameSets(x.Dimensions, d.Dimensions));
    if (same) same.Metrics.push(...d.Metrics.filter((m) => !same.Metrics.some((x) => x.Name === m.Name)));
    else directives.push({ ...d, Metrics: [...d.Metrics] });
  }
  return { ...line, ...root, _aws: { Timestamp: line._aws.Timestamp, CloudWatchMetrics: directives } };
}

/** A directive's metrics without `Unit: "None"`: EMF's default when a unit is left out, so the bytes buy nothing. */
function withoutDefaultUnits(doc: EmfDocument): EmfDocument {
  const CloudWatchMetrics = doc._aws.CloudWatchMetrics.map((d) => ({
    ...d,
    Metrics: d.Metrics.map((m) => (m.Unit === "None" ? { Name: m.Name } : m)),
  }));
  return { ...doc, _aws: { ...doc._aws, CloudWatchMetrics } };
}

/**
 * The documents of one invocation, in order, packed into as few as their values allow: each joins the first line it
 * fits (same values for the members both have, no metric twice under one dimension set), else starts a new one.
 */
export function packEmf(docs: readonly EmfDocument[]): EmfDocument[] {
  const lines: EmfDocument[] = [];
  for (const doc of docs.map(withoutDefaultUnits)) {
    const at = lines.findIndex((line) => fits(line, doc));
    if (at === -1) lines.push(doc);
    else lines[at] = merge(lines[at]!, doc);
  }
  return lines;
}
