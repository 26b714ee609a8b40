import { describe, expect, it } from "vitest";
import { RULE_PATTERNS } from "../../app/manifest.ts";
import { KERNEL_SOURCE } from "../../core/kernel/events.ts";
import { DETAIL_TYPES } from "../../core/kernel/events.ts";
import type { RuleName } from "../../app/manifest.ts";
import { InvalidEventPatternError } from "./errors.ts";
import { matchesPattern, validatePattern } from "./matcher.ts";
import type { EventPattern } from "./matcher.ts";

// The sample event of the EventBridge content-filtering docs / aws/event-ruler README.
const ec2Event = {
  version: "0",
  id: "ddddd4-aaaa-7777-4444-345dd43cc333",
  "detail-type": "EC2 Instance State-change Notification",
  source: "aws.ec2",
  account: "012345679012",
  time: "2017-10-02T16:24:49Z",
  region: "us-east-1",
  resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],
  detail: {
    "c-count": 5,
    "d-count": 3,
    "x-limit": 301.8,
    "source-ip": "10.0.0.33",
    "instance-id": "i-000000aaaaaa00000",
    state: "running",
  },
};

// "Matching events on null values and empty strings".
const nullEvent = {
  version: "0",
  id: "3e3c153a-8339-4e30-8c35-687ebef853fe",
  "detail-type": "EC2 Instance Launch Successful",
  source: "aws.autoscaling",
  account: "123456789012",
  time: "2015-11-11T21:31:47Z",
  region: "us-east-1",
  resources: [],
  detail: { eventVersion: "", responseElements: null },
};

// "Exists matching only works on leaf nodes": c-count is an object here.
const intermediateEvent = {
  "detail-type": ["EC2 Instance State-change Notification"],
  resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-02ebd4584a2ebd341"],
  detail: { state: ["initializing", "running"], "c-count": { c1: 100 } },
};

const fileEvent = {
  source: "SimpleQueueService",
  detail: { FileName: "dir/photo.png", FilePath: "/usr/lib/libc.so", service: "EventBridge", literal: "a*b" },
};

const employeesEvent = {
  employees: [
    [
      { firstName: "John", lastName: "Doe" },
      { firstName: "Anna", lastName: "Smith" },
    ],
    [{ firstName: "Peter", lastName: "Jones" }],
  ],
};

const cloudwatchEvent = {
  source: "aws.cloudwatch",
  metricName: "NetworkIn",
  namespace: "AWS/EC2",
  detail: { source: "x", "detail-type": "CloudWatch Alarm State Change" },
};

type Case = readonly [name: string, pattern: EventPattern, event: unknown, expected: boolean];

const cases: readonly Case[] = [
  // Exact values, arrays = OR, nesting
  [
    "exact fields with an OR list match",
    {
      "detail-type": ["EC2 Instance State-change Notification"],
      resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],
      detail: { state: ["initializing", "running"] },
    },
    ec2Event,
    true,
  ],
  ["a state outside the OR list does not match", { detail: { state: ["initializing"] } }, ec2Event, false],
  ["several sources OR together", { source: ["aws.ec2", "aws.fargate"] }, ec2Event, true],
  ["matching is case-sensitive", { source: ["AWS.EC2"] }, ec2Event, false],
  ["a field missing from the event does not match", { detail: { missing: ["x"] } }, ec2Event, false],
  ["a number matches the same number", { detail: { "c-count": [5] } }, ec2Event, true],
  ["a number does not match its string form", { detail: { "c-count": ["5"] } }, ec2Event, false],
  ["a boolean matches the same boolean", { detail: { flag: [true] } }, { detail: { flag: true } }, true],
  ["a boolean does not match its string form", { detail: { flag: ["true"] } }, { detail: { flag: true } }, false],
  [
    "an event array matches when it intersects the pattern array",
    {
      resources: [
        "arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f",
        "arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f",
        "arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f",
      ],
    },
    {
      resources: [
        "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:eb56d16b-bbf0-401d-b893-d5978ed4a025:autoScalingGroupName/ASGTerminate",
        "arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f",
      ],
    },
    true,
  ],
  ["an event array with no common element does not match", { resources: ["arn:x"] }, ec2Event, false],
  ["a nested pattern on a scalar field does not match", { detail: { state: { name: ["running"] } } }, ec2Event, false],
  // Null and empty string
  ['an empty string matches [""]', { detail: { eventVersion: [""] } }, nullEvent, true],
  ["null matches [null]", { detail: { responseElements: [null] } }, nullEvent, true],
  ["an empty string does not match [null]", { detail: { eventVersion: [null] } }, nullEvent, false],
  ['null does not match [""]', { detail: { responseElements: [""] } }, nullEvent, false],
  ["a missing field does not match [null]", { detail: { other: [null] } }, nullEvent, false],
  // Prefix / suffix
  ["prefix matches the start of a string", { time: [{ prefix: "2017-10-02" }] }, ec2Event, true],
  ["prefix does not match another start", { time: [{ prefix: "2017-10-03" }] }, ec2Event, false],
  ["prefix never matches a number", { detail: { "c-count": [{ prefix: "5" }] } }, ec2Event, false],
  [
    "prefix ignoring case matches",
    { detail: { service: [{ prefix: { "equals-ignore-case": "EVENTB" } }] } },
    fileEvent,
    true,
  ],
  [
    "prefix ignoring case still needs the prefix",
    { detail: { service: [{ prefix: { "equals-ignore-case": "bridge" } }] } },
    fileEvent,
    false,
  ],
  ["suffix matches the end of a string", { source: [{ suffix: "ec2" }] }, ec2Event, true],
  ["suffix does not match another end", { source: [{ suffix: "s3" }] }, ec2Event, false],
  [
    "suffix ignoring case matches",
    { detail: { FileName: [{ suffix: { "equals-ignore-case": ".PNG" } }] } },
    fileEvent,
    true,
  ],
  [
    "suffix ignoring case still needs the suffix",
    { detail: { FileName: [{ suffix: { "equals-ignore-case": ".JPG" } }] } },
    fileEvent,
    false,
  ],
  // equals-ignore-case
  ["equals-ignore-case matches another casing", { source: [{ "equals-ignore-case": "AWS.EC2" }] }, ec2Event, true],
  ["equals-ignore-case needs the same letters", { source: [{ "equals-ignore-case": "aws.ec" }] }, ec2Event, false],
  // Wildcard
  ["wildcard matches across the middle", { source: [{ wildcard: "Simple*Service" }] }, fileEvent, true],
  [
    "wildcard with a folder and extension matches",
    { detail: { FileName: [{ wildcard: "dir/*.png" }] } },
    fileEvent,
    true,
  ],
  [
    "wildcard with another extension does not match",
    { detail: { FileName: [{ wildcard: "dir/*.jpg" }] } },
    fileEvent,
    false,
  ],
  ["wildcard star matches the empty string", { source: [{ wildcard: "SimpleQueueService*" }] }, fileEvent, true],
  ["an escaped star matches a literal star", { detail: { literal: [{ wildcard: "a\\*b" }] } }, fileEvent, true],
  [
    "an escaped star does not match other characters",
    { detail: { literal: [{ wildcard: "a\\*b" }] } },
    { detail: { literal: "axb" } },
    false,
  ],
  // anything-but
  [
    "anything-but a string matches another string",
    { detail: { state: [{ "anything-but": "initializing" }] } },
    ec2Event,
    true,
  ],
  [
    "anything-but a string rejects that string",
    { detail: { state: [{ "anything-but": "running" }] } },
    ec2Event,
    false,
  ],
  [
    "anything-but a number matches another number",
    { detail: { "x-limit": [{ "anything-but": 123 }] } },
    ec2Event,
    true,
  ],
  [
    "anything-but a list of strings matches a value outside it",
    { detail: { state: [{ "anything-but": ["stopped", "overloaded"] }] } },
    ec2Event,
    true,
  ],
  [
    "anything-but a list of strings rejects a listed value",
    { detail: { state: [{ "anything-but": ["stopped", "running"] }] } },
    ec2Event,
    false,
  ],
  [
    "anything-but a list of numbers matches a value outside it",
    { detail: { "x-limit": [{ "anything-but": [100, 200, 300] }] } },
    ec2Event,
    true,
  ],
  [
    "anything-but a list of numbers rejects a listed value",
    { detail: { "x-limit": [{ "anything-but": [100, 301.8] }] } },
    ec2Event,
    false,
  ],
  [
    "anything-but prefix matches another start",
    { detail: { state: [{ "anything-but": { prefix: "init" } }] } },
    ec2Event,
    true,
  ],
  [
    "anything-but prefix rejects that start",
    { detail: { state: [{ "anything-but": { prefix: "run" } }] } },
    ec2Event,
    false,
  ],
  ["anything-but prefix excludes aws sources", { source: [{ "anything-but": { prefix: "aws." } }] }, ec2Event, false],
  [
    "anything-but suffix matches another end",
    { detail: { FilePath: [{ "anything-but": { suffix: ".png" } }] } },
    fileEvent,
    true,
  ],
  [
    "anything-but suffix rejects that end",
    { detail: { FileName: [{ "anything-but": { suffix: ".png" } }] } },
    fileEvent,
    false,
  ],
  [
    "anything-but ignoring case rejects another casing",
    { detail: { state: [{ "anything-but": { "equals-ignore-case": "RUNNING" } }] } },
    ec2Event,
    false,
  ],
  [
    "anything-but ignoring case matches other values",
    { detail: { state: [{ "anything-but": { "equals-ignore-case": ["initializing", "stopped"] } }] } },
    ec2Event,
    true,
  ],
  [
    "anything-but wildcard rejects a matching path",
    { detail: { FilePath: [{ "anything-but": { wildcard: "*/lib/*" } }] } },
    fileEvent,
    false,
  ],
  [
    "anything-but wildcard matches other paths",
    { detail: { FileName: [{ "anything-but": { wildcard: "*/lib/*" } }] } },
    fileEvent,
    true,
  ],
  ["anything-but needs the field to be present", { detail: { missing: [{ "anything-but": "x" }] } }, ec2Event, false],
  [
    "anything-but matches an event array with one unlisted element",
    { detail: { state: [{ "anything-but": ["initializing"] }] } },
    intermediateEvent,
    true,
  ],
  [
    "anything-but CloudTrail excludes that detail-type",
    { "detail-type": [{ "anything-but": "AWS API Call via CloudTrail" }] },
    { "detail-type": "AWS API Call via CloudTrail" },
    false,
  ],
  // Numeric
  ["numeric range matches inside", { detail: { "c-count": [{ numeric: [">", 0, "<=", 5] }] } }, ec2Event, true],
  [
    "numeric range excludes the open bound",
    { detail: { "c-count": [{ numeric: [">", 5, "<=", 10] }] } },
    ec2Event,
    false,
  ],
  ["numeric upper bound matches below", { detail: { "d-count": [{ numeric: ["<", 10] }] } }, ec2Event, true],
  ["numeric upper bound rejects above", { detail: { "d-count": [{ numeric: ["<", 3] }] } }, ec2Event, false],
  [
    "numeric equality accepts exponent notation",
    { detail: { "x-limit": [{ numeric: ["=", 3.018e2] }] } },
    ec2Event,
    true,
  ],
  ["numeric >= includes the bound", { detail: { "c-count": [{ numeric: [">=", 5] }] } }, ec2Event, true],
  ["numeric never matches a string", { detail: { state: [{ numeric: [">", 0] }] } }, ec2Event, false],
  [
    "numeric matches a number inside an event array",
    { detail: { counts: [{ numeric: [">", 10] }] } },
    { detail: { counts: [1, 2, 30] } },
    true,
  ],
  [
    "all numeric fields of the docs example match",
    {
      detail: {
        "c-count": [{ numeric: [">", 0, "<=", 5] }],
        "d-count": [{ numeric: ["<", 10] }],
        "x-limit": [{ numeric: ["=", 3.018e2] }],
      },
    },
    ec2Event,
    true,
  ],
  // Exists
  ["exists true matches a present leaf", { detail: { "c-count": [{ exists: true }] } }, ec2Event, true],
  ["exists false rejects a present leaf", { detail: { "c-count": [{ exists: false }] } }, ec2Event, false],
  [
    "exists false matches an absent field",
    { detail: { "c-count": [{ exists: false }] } },
    { detail: { state: ["initializing", "running"] } },
    true,
  ],
  [
    "exists false matches a field that is an intermediate node",
    { detail: { "c-count": [{ exists: false }] } },
    intermediateEvent,
    true,
  ],
  [
    "exists true does not match an intermediate node",
    { detail: { "c-count": [{ exists: true }] } },
    intermediateEvent,
    false,
  ],
  [
    "exists true on detail.state matches the docs event",
    { detail: { state: [{ exists: true }] } },
    { ...ec2Event, detail: { "instance-id": "i-abcd1111", state: "pending" } },
    true,
  ],
  [
    "exists true matches a leaf that is an array of strings",
    { detail: { state: [{ exists: true }] } },
    intermediateEvent,
    true,
  ],
  [
    "exists true does not match the docs event without detail.state",
    { detail: { state: [{ exists: true }] } },
    { detail: { "c-count": { c1: 100 } } },
    false,
  ],
  ["exists true matches a null value", { detail: { responseElements: [{ exists: true }] } }, nullEvent, true],
  ["exists true does not match an empty event array", { resources: [{ exists: true }] }, nullEvent, false],
  [
    "exists false matches when the whole parent is missing",
    { detail: { x: [{ exists: false }] } },
    { source: "a" },
    true,
  ],
  // Arrays of objects: array-consistent matching
  [
    "a nested pattern matches an object inside event arrays",
    { employees: { firstName: ["Anna"] } },
    employeesEvent,
    true,
  ],
  [
    "two fields match when they sit in the same array element",
    { employees: { firstName: ["Anna"], lastName: ["Smith"] } },
    employeesEvent,
    true,
  ],
  [
    "two fields from different array elements do not match",
    { employees: { firstName: ["Anna"], lastName: ["Jones"] } },
    employeesEvent,
    false,
  ],
  // $or
  [
    "$or matches through its first alternative",
    {
      source: ["aws.cloudwatch"],
      $or: [{ metricName: ["CPUUtilization", "ReadLatency"] }, { namespace: ["AWS/EC2", "AWS/ES"] }],
    },
    cloudwatchEvent,
    true,
  ],
  [
    "$or fails when no alternative matches",
    { source: ["aws.cloudwatch"], $or: [{ metricName: ["CPUUtilization"] }, { namespace: ["AWS/ES"] }] },
    cloudwatchEvent,
    false,
  ],
  [
    "$or still needs the fields beside it",
    { source: ["aws.ec2"], $or: [{ metricName: ["NetworkIn"] }, { namespace: ["AWS/EC2"] }] },
    cloudwatchEvent,
    false,
  ],
  [
    "parallel $or at two levels both have to match",
    {
      $or: [{ metricName: ["CPUUtilization"] }, { namespace: ["AWS/EC2"] }],
      detail: { $or: [{ source: ["aws.cloudwatch"] }, { "detail-type": ["CloudWatch Alarm State Change"] }] },
    },
    cloudwatchEvent,
    true,
  ],
  [
    "parallel $or fails when the nested one does not match",
    {
      $or: [{ metricName: ["CPUUtilization"] }, { namespace: ["AWS/EC2"] }],
      detail: { $or: [{ source: ["aws.cloudwatch"] }, { "detail-type": ["Other"] }] },
    },
    cloudwatchEvent,
    false,
  ],
  [
    "$or alternatives can be ANDs and nest another $or",
    {
      source: ["aws.cloudwatch"],
      $or: [
        { metricName: ["CPUUtilization"] },
        { metricType: ["MetricType"], namespace: ["AWS/EC2"], $or: [{ metricId: [1234] }, { spaceId: [1000] }] },
      ],
    },
    { ...cloudwatchEvent, metricType: "MetricType", spaceId: 1000 },
    true,
  ],
  [
    "a nested $or alternative fails without its inner match",
    {
      source: ["aws.cloudwatch"],
      $or: [
        { metricName: ["CPUUtilization"] },
        { metricType: ["MetricType"], namespace: ["AWS/EC2"], $or: [{ metricId: [1234] }, { spaceId: [1000] }] },
      ],
    },
    { ...cloudwatchEvent, metricType: "MetricType", spaceId: 1 },
    false,
  ],
  // The complex docs example (without cidr, which the local bus rejects)
  [
    "the complex docs example matches",
    {
      time: [{ prefix: "2017-10-02" }],
      detail: {
        state: [{ "anything-but": "initializing" }],
        "c-count": [{ numeric: [">", 0, "<=", 5] }],
        "d-count": [{ numeric: ["<", 10] }],
        "x-limit": [{ "anything-but": [100, 200, 300] }],
      },
    },
    ec2Event,
    true,
  ],
  [
    "the complex docs example fails on one field",
    {
      time: [{ prefix: "2017-10-02" }],
      detail: { state: [{ "anything-but": "running" }], "c-count": [{ numeric: [">", 0, "<=", 5] }] },
    },
    ec2Event,
    false,
  ],
  ["a non-object event does not match a value pattern", { source: ["a"] }, "not an event", false],
];

describe("matchesPattern", () => {
  it.each(cases)("%s", (_name, pattern, event, expected) => {
    expect(validatePattern(pattern)).toEqual({ ok: true });
    expect(matchesPattern(pattern, event)).toBe(expected);
  });
});

type InvalidCase = readonly [name: string, pattern: unknown, messageParts: readonly string[]];

const invalid: readonly InvalidCase[] = [
  [
    "cidr is rejected as unsupported",
    { detail: { sourceIPAddress: [{ cidr: "10.0.0.0/24" }] } },
    ['"cidr"', "detail.sourceIPAddress[0]", "not supported"],
  ],
  ["an unknown operator is named", { type: [{ contains: "Normal" }] }, ['unknown operator "contains"', "type[0]"]],
  ["a scalar instead of an array", { source: "aws.ec2" }, ["source", "array"]],
  ["an empty match array", { source: [] }, ["source", "empty"]],
  ["an empty nested object", { detail: {} }, ["detail", "empty"]],
  ["an empty pattern", {}, ["<root>", "empty"]],
  ["a pattern that is an array", [{ source: ["a"] }], ["<root>", "JSON object"]],
  ["a null pattern", null, ["<root>"]],
  ["$or with one alternative", { $or: [{ a: ["x"] }] }, ["$or", "at least two"]],
  ["$or with a non-object alternative", { $or: [{ a: ["x"] }, ["b"]] }, ["$or[1]"]],
  ["an operator object with two keys", { a: [{ prefix: "x", suffix: "y" }] }, ["a[0]", "exactly one key"]],
  ["a nested array in a match array", { a: [["x"]] }, ["a[0]", "nested arrays"]],
  ["numeric with two upper bounds", { a: [{ numeric: ["<", 10, "<", 20] }] }, ["a[0].numeric", "lower bound"]],
  ["numeric with an inverted range", { a: [{ numeric: [">", 5, "<", 1] }] }, ["a[0].numeric", "below the upper"]],
  ["numeric with an unknown operator", { a: [{ numeric: ["==", 1] }] }, ['"=="']],
  ["numeric = combined with a range", { a: [{ numeric: ["=", 1, "<", 5] }] }, ['"=" cannot be combined']],
  ["numeric with a string bound", { a: [{ numeric: [">", "5"] }] }, ["finite number"]],
  ["consecutive wildcards", { a: [{ wildcard: "a**b" }] }, ["a[0].wildcard", "consecutive"]],
  ["a backslash escaping a letter in a wildcard", { a: [{ wildcard: "a\\b" }] }, ["backslash"]],
  ["anything-but with a mixed list", { a: [{ "anything-but": ["x", 1] }] }, ["only strings or only numbers"]],
  [
    "anything-but with numeric inside",
    { a: [{ "anything-but": { numeric: [">", 1] } }] },
    ['"numeric"', "anything-but"],
  ],
  [
    "anything-but with a list of prefixes",
    { a: [{ "anything-but": { prefix: ["a", "b"] } }] },
    ["a[0].anything-but.prefix", "string"],
  ],
  ["exists with a non-boolean", { a: [{ exists: "yes" }] }, ["a[0].exists", "true or false"]],
  ["prefix with a number", { a: [{ prefix: 5 }] }, ["a[0].prefix"]],
  ["equals-ignore-case with a number", { a: [{ "equals-ignore-case": 5 }] }, ["a[0].equals-ignore-case"]],
];

describe("validatePattern", () => {
  it.each(invalid)("rejects %s", (_name, pattern, parts) => {
    const result = validatePattern(pattern);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    for (const part of parts) expect(result.message).toContain(part);
  });

  it("makes matchesPattern throw InvalidEventPatternError for a rejected pattern", () => {
    const pattern = { detail: { ip: [{ cidr: "10.0.0.0/8" }] } };
    expect(() => matchesPattern(pattern, { detail: { ip: "10.0.0.1" } })).toThrow(InvalidEventPatternError);
  });
});

describe("the rule patterns of infra/event-patterns.ts", () => {
  const envelope = (detailType: string, detail: Record<string, unknown>, source: string = KERNEL_SOURCE) => ({
    version: "0",
    id: "00000000-0000-4000-8000-000000000001",
    "detail-type": detailType,
    source,
    account: "000000000000",
    time: "2026-01-01T00:00:00Z",
    region: "us-east-1",
    resources: [],
    detail,
  });
  const verdict = (v: string) =>
    envelope(DETAIL_TYPES.verdict, {
      verdict_id: "vrd_1",
      claim_id: "clm_1",
      dfid: "dfid_1",
      verdict: v,
      reason_code: "OK",
      reason: "fine",
      order_id: "ord_001",
      amount_eur: 299.99,
      policy_kind: "defect",
      idempotency_key: "k",
      decided_at: "2026-01-01T00:00:00Z",
    });
  const refund = envelope(DETAIL_TYPES.refund, {
    execution_id: "exe_1",
    claim_id: "clm_1",
    dfid: "dfid_1",
    order_id: "ord_001",
    amount_eur: 299.99,
    verdict_id: "vrd_1",
  });
  const review = envelope(DETAIL_TYPES.review, {
    claim_id: "clm_1",
    dfid: "dfid_1",
    reason_code: "NEEDS_HUMAN",
    reason: "unclear",
  });

  const ruleNames = Object.keys(RULE_PATTERNS) as RuleName[];

  it.each(ruleNames)("%s validates", (name) => {
    expect(validatePattern(RULE_PATTERNS[name])).toEqual({ ok: true });
  });

  const table: ReadonlyArray<readonly [string, unknown, readonly RuleName[]]> = [
    ["an ACCEPT verdict", verdict("ACCEPT"), ["verdicts"]],
    ["a REJECT verdict", verdict("REJECT"), ["verdicts"]],
    ["an ESCALATE verdict", verdict("ESCALATE"), ["verdicts", "escalations"]],
    ["an executed refund", refund, ["refunds"]],
    ["a claim that needs review", review, ["escalations"]],
    ["an ESCALATE verdict from another source", { ...verdict("ESCALATE"), source: "claims.other" }, []],
    ["an unknown detail-type from the kernel", envelope("SomethingElse", { verdict: "ESCALATE" }), []],
  ];

  it.each(table)("%s reaches exactly the expected rules", (_name, event, expected) => {
    const matched = ruleNames.filter((name) => matchesPattern(RULE_PATTERNS[name], event));
    expect(matched.sort()).toEqual([...expected].sort());
  });
});
