import { describe, expect, it } from "vitest";
import { buildCrewGraph } from "./graph.ts";
import {
  completed,
  failed,
  graphOf,
  persistentSession,
  requestsIn,
  researchCrew,
  role,
  shape,
  typesOf,
} from "./test-kit.ts";

describe("permissions as ACL gates", () => {
  it("relays messages and delegations a role may send, drops the rest with ACL_DENIED, in slot order at phase end", () => {
    const s = persistentSession(graphOf(researchCrew(2)));
    const caller = requestsIn(s.start("q"))[0]!;
    const mercs = requestsIn(s.deliver(completed(caller, "plan")));
    // slot 1 answers first; its messages still come after slot 0's
    expect(
      s.deliver(
        completed(mercs[1]!, "B", {
          messages: [{ to: "caller", body: "from 1" }],
          delegations: [{ to: "merc", task: "x" }],
        }),
      ),
    ).toEqual([]);
    const out = s.deliver(
      completed(mercs[0]!, "A", {
        messages: [
          { to: "caller", body: "from 0" },
          { to: "fixer", body: "psst" },
        ],
      }),
    );
    expect(typesOf(out).slice(0, 5)).toEqual([
      "agent.message.relayed",
      "crew.diagnostic",
      "agent.message.relayed",
      "crew.diagnostic",
      "vote.resolved",
    ]);
    expect(out[0]).toEqual({
      type: "agent.message.relayed",
      crewId: "crew-1",
      phaseIndex: 1,
      fromRole: "merc",
      fromAgentId: "merc#0",
      to: "caller",
      body: "from 0",
    });
    expect(out[1]).toMatchObject({
      code: "ACL_DENIED",
      message: "merc#0 (merc) may not talk to 'fixer' (talk_to: caller); the message was dropped",
    });
    expect(out[3]).toMatchObject({
      code: "ACL_DENIED",
      message: expect.stringMatching(/merc#1 \(merc\) may not delegate to 'merc' \(delegate_to: \(none\)\)/),
    });
    expect(out.filter((e) => e.type === "agent.message.relayed").map((e) => (e as { body: unknown }).body)).toEqual([
      "from 0",
      "from 1",
    ]);
  });

  it("judges a fixer's messages by the fixer's own permissions", () => {
    const s = persistentSession(graphOf(researchCrew(1)));
    const caller = requestsIn(s.start("q"))[0]!;
    const merc = requestsIn(s.deliver(completed(caller, "plan")))[0]!;
    const fixerReq = requestsIn(s.deliver(failed(merc)))[0]!;
    const out = s.deliver(
      completed(fixerReq, "fixed", {
        delegations: [{ to: "merc", task: "redo" }],
        messages: [{ to: "caller", body: "done" }],
      }),
    );
    expect(out.slice(0, 2)).toEqual([
      {
        type: "agent.message.relayed",
        crewId: "crew-1",
        phaseIndex: 1,
        fromRole: "fixer",
        fromAgentId: "fixer#0",
        to: "caller",
        body: "done",
      },
      {
        type: "agent.delegation.relayed",
        crewId: "crew-1",
        phaseIndex: 1,
        fromRole: "fixer",
        fromAgentId: "fixer#0",
        to: "merc",
        task: "redo",
      },
    ]);
  });

  it("invokes the fixer the failing role escalates to, and the crew's first fixer for a role that names none", () => {
    const g = buildCrewGraph(
      shape("ACL", [
        role("intake", { first_input: true, permissions: { escalate_to: ["fixB"] } }),
        role("merc", { permissions: { escalate_to: ["fixA"] } }),
        role("report", { final_output: true }),
        role("fixA", { activation: { on_fault: true } }),
        role("fixB", { activation: { on_fault: true } }),
      ]),
    );
    const s = persistentSession(g);
    const intake = requestsIn(s.start("q"))[0]!;
    const merc = requestsIn(s.deliver(completed(intake, "ok")))[0]!;
    const out = s.deliver(failed(merc));
    expect(out[0]).toMatchObject({ type: "fixer.invoked", fixerRole: "fixA", fixerAgentId: "fixA#0" });
    const report = requestsIn(s.deliver(completed(requestsIn(out)[0]!, "fixed")))[0]!;
    // report escalates to nobody: its failure goes to the first fixer with on_fault in declaration order
    expect(s.deliver(failed(report))[0]).toMatchObject({
      type: "fixer.invoked",
      failedRole: "report",
      fixerRole: "fixA",
      fixerAgentId: "fixA#0",
    });
  });
});
