import { describe, expect, it } from "vitest";
import { createInMemoryCheckpointStore } from "./checkpoint.ts";
import { frozenClock } from "./clock.ts";
import { VersionConflictError } from "../errors.ts";
import { resumeCrewSession } from "./resume.ts";
import { createCrewSession } from "./session.ts";
import { completed, graphOf, requestsIn, researchCrew } from "./test-kit.ts";

describe("createInMemoryCheckpointStore", () => {
  const graph = graphOf(researchCrew(2));

  it("saves with an optimistic version check and loads an unaliased copy", async () => {
    const store = createInMemoryCheckpointStore();
    const s = createCrewSession({ crewId: "c1", graph, clock: frozenClock(0) });
    const caller = requestsIn(s.start("q"))[0]!;
    expect(await store.load("c1")).toBeUndefined();
    expect(await store.save("c1", s.snapshot(), 0)).toEqual({ version: 1 });
    s.deliver(completed(caller, "plan"));
    expect(await store.save("c1", s.snapshot(), 1)).toEqual({ version: 2 });
    const loaded = (await store.load("c1"))!;
    expect(loaded.version).toBe(2);
    expect(loaded.snapshot).toEqual(s.snapshot());
    expect(loaded.snapshot).not.toBe(s.snapshot());
    // what comes out of the store resumes
    expect(resumeCrewSession(loaded.snapshot, [], { graph, clock: frozenClock(0) }).session.status).toBe("running");
  });

  it("rejects a stale writer with VersionConflictError and keeps the winner's snapshot", async () => {
    const store = createInMemoryCheckpointStore();
    const a = createCrewSession({ crewId: "c1", graph, clock: frozenClock(0) });
    a.start("first writer");
    await store.save("c1", a.snapshot(), 0);
    const b = createCrewSession({ crewId: "c1", graph, clock: frozenClock(0) });
    b.start("second writer");
    const err = await store.save("c1", b.snapshot(), 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VersionConflictError);
    expect(err).toMatchObject({ code: "VERSION_CONFLICT", key: "c1", expectedVersion: 0, actualVersion: 1 });
    await expect(store.save("c1", b.snapshot(), 5)).rejects.toThrow(/at version 1, not the expected 5/);
    expect((await store.load("c1"))!.snapshot).toMatchObject({ input: "first writer" });
  });
});
