// The chaos command line: options read strictly, a seed drawn when none is given, the reproduction line.
import { describe, expect, it } from "vitest";
import { flowNumbers, parseChaosArgs, reproduction } from "./run.ts";

describe("parseChaosArgs", () => {
  it("reads --flows, --seed, --flow, --emulators and --verbose", () => {
    expect(parseChaosArgs(["--flows", "10000", "--seed", "42", "--emulators"])).toEqual({
      flows: 10000,
      seed: 42,
      emulators: true,
      verbose: false,
    });
    expect(parseChaosArgs(["--seed", "7", "--flow", "3"])).toEqual({
      flows: 1,
      seed: 7,
      flow: 3,
      emulators: false,
      verbose: false,
    });
  });

  it("reads a part of a larger run (--from) and, on the emulators, the flows worked on at once (--concurrent)", () => {
    expect(parseChaosArgs(["--flows", "5000", "--seed", "9", "--from", "25000"])).toMatchObject({
      flows: 5000,
      from: 25000,
    });
    expect(flowNumbers({ flows: 3, from: 25000 })).toEqual([25000, 25001, 25002]);
    expect(flowNumbers({ flows: 3 })).toEqual([0, 1, 2]);
    expect(flowNumbers({ flows: 1, flow: 7 })).toEqual([7]);
    expect(parseChaosArgs(["--flows", "100", "--emulators", "--concurrent", "24"])).toMatchObject({ concurrent: 24 });
    expect(() => parseChaosArgs(["--flows", "2", "--flow", "1", "--from", "3"])).toThrow(/not both/);
    expect(() => parseChaosArgs(["--flows", "2", "--concurrent", "4"])).toThrow(/--concurrent is for --emulators/);
  });

  it("gives emulator flows longer to settle on a loaded machine (--settle-s), and only emulator flows", () => {
    expect(parseChaosArgs(["--flows", "16", "--emulators", "--settle-s", "600"])).toMatchObject({ settleS: 600 });
    expect(parseChaosArgs(["--flows", "16", "--emulators"]).settleS).toBeUndefined();
    expect(() => parseChaosArgs(["--flows", "2", "--settle-s", "600"])).toThrow(/--settle-s is for --emulators/);
    expect(() => parseChaosArgs(["--flows", "2", "--emulators", "--settle-s", "0"])).toThrow(
      /--settle-s must be an integer ≥ 1/,
    );
  });

  it("draws a seed when none is given", () => {
    expect(parseChaosArgs(["--flows", "5"], () => 99)).toMatchObject({ flows: 5, seed: 99 });
  });

  it.each([
    [["--flows", "0"], /--flows must be an integer ≥ 1/],
    [["--flows", "ten"], /--flows must be an integer/],
    [["--seed=-1"], /--seed must be an integer ≥ 0/],
    [["--seed", "4294967296"], /--seed must be below 2\^32/],
    [["--flows"], /argument missing|usage/i],
    [["--fast"], /Unknown option '--fast'/],
  ])("refuses %j naming the option", (argv, message) => {
    expect(() => parseChaosArgs(argv)).toThrow(message);
  });
});

describe("reproduction", () => {
  it("is the one line that runs the failing flow again", () => {
    expect(reproduction(42, 17, false)).toBe("npm run chaos -- --flows 1 --seed 42 --flow 17");
    expect(reproduction(42, 17, true)).toBe("npm run chaos -- --flows 1 --seed 42 --flow 17 --emulators");
  });
});
