// The crew shape setting, apart from the config file's parser (and its YAML) so the deployed policy can read it.

/**
 * Which crew decides a claim (`agents[].crew_shape`, docs/llm.md "Crew shape"): `compact` (the default) gives a claim
 * whose facts are plain to the one-step compact crew and any other to the two agents; `two_agents` gives every claim
 * to the seed's Claims Analyst → Decision Maker.
 */
export const CREW_SHAPES = ["compact", "two_agents"] as const;

/** A crew shape setting. */
export type CrewShapeSetting = (typeof CREW_SHAPES)[number];
