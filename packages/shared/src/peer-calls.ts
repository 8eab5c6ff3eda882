/**
 * The gRPC calls this process made to each peer, counted in the one wrapper every peer client's methods go
 * through (`createClient`, grpc.ts), never at a call site: per peer, method and outcome (`ok`, or the
 * error's taxonomy code: `dependency_down`, `not_found`, …), how many and how long they took in all. A call
 * counts once however many attempts its retry policy made (what its caller waited for). Read by the
 * registry at scrape time (`agw_peer_calls_total`, `agw_peer_call_seconds_total`; docs/operations.md), as
 * the store requests are: a hot-path increment of plain numbers, no metric call per request.
 */

export interface PeerCallTally {
  peer: string;
  method: string;
  outcome: string;
  calls: number;
  seconds: number;
}

const tallies = new Map<string, PeerCallTally>();

/** The tally of one (peer, method, outcome), made on first use; a call site keeps it and adds to it. */
export function peerCallTally(peer: string, method: string, outcome: string): PeerCallTally {
  const key = `${peer}\u0000${method}\u0000${outcome}`;
  let t = tallies.get(key);
  if (!t) {
    t = { peer, method, outcome, calls: 0, seconds: 0 };
    tallies.set(key, t);
  }
  return t;
}

/** Every tally so far. */
export function peerCalls(): Iterable<PeerCallTally> {
  return tallies.values();
}
