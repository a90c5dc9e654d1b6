import type { Topology, TopologyResult, TopologyViolation } from '../src/index';

/** The accepted topology of a check; a rejected check throws, naming its violations (no assertion hides behind `if (r.ok)`). */
export function acceptedTopology(r: TopologyResult, label = ''): Topology {
  if (!r.ok) throw new Error(`expected an accepted topology ${label}, got violations ${JSON.stringify(r.violations)}`);
  return r.topology;
}

/** The violations of a check: none when it was accepted, so an assertion on them fails then. */
export const violationsOf = (r: TopologyResult): TopologyViolation[] => (r.ok ? [] : r.violations);
