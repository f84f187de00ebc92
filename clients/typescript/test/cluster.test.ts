// The client against two real matchmakerd nodes of one cluster on a real
// PostgreSQL server (both started here; tests/api/postgres.mjs): a request
// sent to the node that does not run the session queues follows its 307 to
// the one that does, token and body included; an event stream started there
// follows the 307 of its handshake, and the 4307 close when the queues move
// back; a redirect to an address that is not a node of the cluster is not
// followed; a refused token rejects `ready` and ends the stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { MatchmakerClient, MatchmakerError, StreamRefused, type TicketEvent } from '../src/index.js';

interface Server {
  url: string;
  port: number;
  stop(): Promise<unknown>;
}
type Helpers = {
  startServer(patch?: object): Promise<Server>;
  tokens: { view: string; test: string; otherTest: string; admin: string };
  until<T>(probe: () => Promise<T> | T, what: string, limitMs?: number): Promise<T>;
};
type Postgres = { havePostgres(): boolean; startPostgres(): Promise<{ url: string; stop(): void }> };
const root = fileURLToPath(new URL('../../', import.meta.url));
const helpers = (await import(new URL('../../tests/api/server.mjs', `file://${root}`).href)) as Helpers;
const pg = (await import(new URL('../../tests/api/postgres.mjs', `file://${root}`).href)) as Postgres;
const { startServer, tokens, until } = helpers;

const party = (id: number) => ({ id, mmr: 1500, rtt_ms: { paris: 20 } });

// `p`, or a failure naming `what` after `limitMs`: no step holds the test to
// ctest's timeout.
async function within<T>(p: Promise<T>, limitMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${limitMs} ms waiting for ${what}`)), limitMs);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

// `call()`, again while it is answered 503 (nobody serves the queues now, as
// the asking node sees the cluster: a takeover, or the owner's last renewal
// not yet in its view), as the contract says a client does, for at most
// `limitMs`. (Without it the test failed 1 run in 20 under AddressSanitizer
// on a quiet machine: at rest, the asking node's view of the owner's
// renewal was a moment older than it trusts.)
async function retrying503<T>(call: () => Promise<T>, limitMs = 15_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof MatchmakerError) || e.status !== 503 || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// Which node serves the session queues, once the cluster is at rest (each
// node's /api/cluster): every node of `nodes` serving, and every lease held
// by the node the plan gives it, so no hand-over is due. (Asked as soon as
// one node served them, the answer could be the first node to join, which
// then handed the queues to the second: a request sent on that answer met
// the hand-over's 503.)
async function sessionsOwner(nodes: Server[]): Promise<Server | undefined> {
  type Report = {
    node?: string;
    serving?: boolean;
    owned?: { resource: string }[];
    leases?: { resource: string; owner: string | null; planned_owner?: string | null }[];
  };
  const reports: Report[] = [];
  for (const n of nodes)
    reports.push((await new MatchmakerClient({ baseUrl: n.url, token: tokens.view }).cluster()) as Report);
  if (reports.some((r) => !r.serving)) return undefined;
  const leases = reports[0].leases ?? [];
  if (leases.length === 0 || leases.some((l) => l.owner === null || l.owner !== l.planned_owner)) return undefined;
  const owner = leases.find((l) => l.resource === 'sessions')?.owner;
  const i = reports.findIndex((r) => r.node === owner && r.owned?.some((o) => o.resource === 'sessions'));
  return i >= 0 ? nodes[i] : undefined;
}

test('two nodes: redirects followed with the token, within the cluster only; streams follow the queues', { skip: !pg.havePostgres() && 'PostgreSQL is not installed' }, async (t) => {
  const db = await pg.startPostgres();
  // The nodes stop before their database, whatever the order of the hooks.
  const started: Server[] = [];
  t.after(async () => {
    try {
      for (const s of started.reverse()) await s.stop();
    } finally {
      db.stop();
    }
  });
  const node = (name: string) =>
    startServer({
      database: { url: db.url },
      demo: { players: 0, queries_per_second: 0 },
      cluster: { total: 2, node: name, takeover_after: '2s' },
    });
  const first = await node('a');
  started.push(first);
  const second = await node('b');
  started.push(second);
  // a: the node that runs the session queues; b: the other.
  const a = (await until(() => sessionsOwner([first, second]), 'a node to serve the session queues')) as Server;
  const b = a === first ? second : first;

  // Through b, which does not run the queues: each request follows the 307 to a.
  const viaB = new MatchmakerClient({ baseUrl: b.url, token: tokens.test });
  const stream = viaB.watchEvents({ after: 0, queues: ['coop'] });
  t.after(() => stream.close());  // a failed step must not leave it reconnecting
  await within(stream.ready, 30_000, 'the event stream to be ready');
  const made = await retrying503(() => viaB.createTicket({ queue: 'coop', players: [party(21)] }));
  assert.equal(made.state, 'waiting');
  assert.equal((await retrying503(() => viaB.getTicket(made.ticket))).state, 'waiting');
  // One iterator for the whole test (leaving a for-await loop closes a stream).
  const items = stream[Symbol.asyncIterator]();
  // Each wait for an event is bounded: a stream that misses it fails the
  // test with what it waited for, instead of holding it to ctest's timeout.
  const eventOf = async (ticket: string, limitMs = 30_000): Promise<TicketEvent> => {
    const deadline = Date.now() + limitMs;
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()));
      });
      const next = await Promise.race([items.next(), late]);
      clearTimeout(timer);
      assert.ok(next !== 'late', `no event of ticket ${ticket} within ${limitMs} ms`);
      const { value, done } = next;
      assert.ok(!done, 'the stream ended');
      if (value.type === 'event' && value.ticket === ticket) return value;
    }
  };
  const waiting = await eventOf(made.ticket);
  assert.equal(waiting.state, 'waiting');

  // A token the servers refuse: `ready` rejects, the stream ends with it.
  const refused = new MatchmakerClient({ baseUrl: b.url, token: 'no-such-token' }).watchEvents({});
  await assert.rejects(refused.ready, (e: unknown) => e instanceof StreamRefused && e.status === 401);
  await assert.rejects(async () => {
    for await (const _ of refused) void _;
  }, StreamRefused);

  // A server that redirects elsewhere: not followed, the token stays here.
  let leaked = false;
  const elsewhere = createServer((req, res) => {
    leaked = leaked || req.headers.authorization !== undefined;
    res.end('{}');
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  const outside = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}`;
  const liar = createServer((req, res) => {
    if (req.url === '/api/cluster') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ cluster: true, nodes: [{ http_url: b.url }] }));
      return;
    }
    res.statusCode = 307;
    res.setHeader('Location', outside + req.url);
    res.setHeader('Content-Type', 'application/json');
    res.end('{"error": "elsewhere"}');
  });
  await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
  t.after(() => {
    liar.close();
    elsewhere.close();
  });
  const viaLiar = new MatchmakerClient({ baseUrl: `http://127.0.0.1:${(liar.address() as { port: number }).port}`, token: tokens.test });
  await assert.rejects(viaLiar.queues(), (e: unknown) => e instanceof MatchmakerError && e.status === 307);
  assert.equal(leaked, false);

  // The queues move to b (a leaves): the stream, now on a, is closed 4307
  // naming b and follows; the next ticket's event comes on it.
  await a.stop();
  await until(async () => (await sessionsOwner([b])) === b, 'node b to take the session queues over', 30_000);
  const later = await retrying503(() => viaB.createTicket({ queue: 'coop', players: [party(22)] }));
  const moved = await eventOf(later.ticket);
  assert.ok(moved.seq > waiting.seq);
  stream.close();
});
