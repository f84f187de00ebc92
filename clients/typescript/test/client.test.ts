// The client against the real matchmakerd (MATCHMAKERD names the binary; the
// server is started by tests/api/server.mjs, the repository's helper for its
// Node.js tests): tickets made, matched and watched, errors as
// MatchmakerError, queries, lobbies and backfill, and the types generated from
// docs/openapi.json kept in step with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MatchmakerClient, MatchmakerError, type StreamItem, type TicketEvent } from '../src/index.js';

interface Server {
  url: string;
  stop(): Promise<unknown>;
}
type Helpers = {
  startServer(patch?: object): Promise<Server>;
  tokens: { view: string; test: string; otherTest: string; admin: string };
  until<T>(probe: () => Promise<T> | T, what: string, limitMs?: number): Promise<T>;
};
// dist/test/ at run time: the package root is two levels up.
const root = fileURLToPath(new URL('../../', import.meta.url));
const helpers = (await import(new URL('../../tests/api/server.mjs', `file://${root}`).href)) as Helpers;
const { startServer, tokens, until } = helpers;

const server = await startServer();
test.after(() => server.stop());
const client = new MatchmakerClient({ baseUrl: server.url, token: tokens.test });
const admin = new MatchmakerClient({ baseUrl: server.url, token: tokens.admin });

const party = (id: number) => ({ id, mmr: 1500, rtt_ms: { paris: 20 } });

test('a ticket is created, watched and matched with three others', async () => {
  const watch = client.watchEvents({ after: 0, queues: ['coop'] });
  const mine = await client.createTicket({ queue: 'coop', players: [party(11)] });
  assert.equal(mine.state, 'waiting');
  assert.match(mine.ticket, /^[0-9a-f]{16}$/);
  const explained = await client.explainTicket(mine.ticket);
  assert.equal(explained.queues[0]?.queue, 'coop');
  for (const id of [12, 13, 14]) await client.createTicket({ queue: 'coop', players: [party(id)] });

  const seen: TicketEvent[] = [];
  for await (const item of watch) {
    if (item.type !== 'event') continue;
    seen.push(item);
    if (seen.filter((e) => e.state === 'matched').length === 4) break;
  }
  const matched = seen.find((e) => e.ticket === mine.ticket && e.state === 'matched');
  assert.ok(matched?.match, 'its matched event carries the match');
  assert.equal(matched.match.teams.flat().length, 4);
  assert.ok(matched.match.tickets.includes(mine.ticket));
  // The poll says the same, from the journal.
  const polled = await client.getTicket(mine.ticket, { waitSeconds: 5 });
  assert.equal(polled.state, 'matched');
  assert.equal(polled.match?.id, matched.match.id);
});

test('a batch of tickets: a result per ticket, in the order given', async () => {
  const { results } = await client.createTickets([
    { queue: 'coop', players: [party(41)] },
    { queue: 'coop', players: [party(41)] },
    { queue: 'nope', players: [party(42)] },
  ]);
  assert.equal(results.length, 3);
  const [made, twice, nowhere] = results;
  assert.ok(made && 'ticket' in made && made.state === 'waiting');
  assert.ok(twice && 'status' in twice && twice.status === 409);
  assert.ok(nowhere && 'status' in nowhere && nowhere.status === 400);
  assert.equal((await client.cancelTicket(made.ticket)).cancelled, true);
});

test('a stream whose connection drops resumes without losing or repeating an event', async () => {
  const watch = client.watchEvents({ queues: ['coop'] });
  await watch.ready; // from now on: the ticket below is on the stream
  const items: StreamItem[] = [];
  const reader = (async () => {
    for await (const item of watch) items.push(item);
  })();
  const first = await client.createTicket({ queue: 'coop', players: [party(21)] });
  await until(() => items.some((i) => i.type === 'event' && i.ticket === first.ticket), 'the first event');
  // The connection drops (as a network or a restart would drop it).
  (watch as unknown as { socket: { terminate(): void } }).socket.terminate();
  const second = await client.createTicket({ queue: 'coop', players: [party(22)] });
  await client.cancelTicket(first.ticket);
  await until(
    () => items.some((i) => i.type === 'event' && i.ticket === first.ticket && i.state === 'cancelled'),
    'the cancel after the reconnect',
  );
  watch.close();
  await reader;
  const events = items.filter((i): i is TicketEvent => i.type === 'event');
  const seqs = events.map((e) => e.seq);
  assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), 'each event once, in order');
  assert.ok(events.some((e) => e.ticket === second.ticket && e.state === 'waiting'));
  assert.equal(watch.lastSeq, seqs[seqs.length - 1]);
  await client.cancelTicket(second.ticket);
});

test('refusals are MatchmakerError with the status and the field', async () => {
  await assert.rejects(client.createTicket({ queue: 'coop', players: [{ id: 31, mmr: 'high' as unknown as number }] }), (e) => {
    assert.ok(e instanceof MatchmakerError);
    assert.equal(e.status, 400);
    assert.match(e.message, /players\[0\]\.mmr/);
    return true;
  });
  const other = new MatchmakerClient({ baseUrl: server.url, token: tokens.otherTest });
  const t = await client.createTicket({ queue: 'coop', players: [party(32)] });
  await assert.rejects(other.getTicket(t.ticket), (e) => e instanceof MatchmakerError && e.status === 404);
  const viewer = new MatchmakerClient({ baseUrl: server.url, token: tokens.view });
  await assert.rejects(viewer.registerLobby({ id: 'l', mode: 'dm', datacenter: 'paris', max_players: 4 }),
                       (e) => e instanceof MatchmakerError && e.status === 403);
  // A lobby is its registrant's: another identity's is a 404.
  await client.registerLobby({ id: 'mine', mode: 'ffa', datacenter: 'paris', max_players: 4 });
  await assert.rejects(other.closeLobby('mine'), (e) => e instanceof MatchmakerError && e.status === 404);
  assert.equal((await client.closeLobby('mine')).closed, true);
  const anonymous = new MatchmakerClient({ baseUrl: server.url });
  await assert.rejects(anonymous.queues(), (e) => e instanceof MatchmakerError && e.status === 401);
  await client.cancelTicket(t.ticket);
});

test('queries, the player table, lobbies and backfill through the typed methods', async () => {
  await until(async () => (await client.matchmakers()).matchmakers.every((m) => 'players' in m && m.players > 0), 'the first scans');
  const answer = await client.query({ attacker_id: 42, mmr: 1500 });
  assert.ok(['Success', 'NoneFound', 'FakeOpponent'].includes(answer.result));
  const batch = await client.queryBatch([{ attacker_id: 42, mmr: 1500 }, { attacker_id: 43, mmr: 1200 }]);
  assert.equal(batch.results.length, 2);
  const report = await admin.writePlayers([{ id: 7, mmr: 1234.5 }]);
  assert.equal(report.written, 1);
  assert.equal((await client.player(7)).stored?.mmr, 1234.5);

  const lobby = await admin.registerLobby({ id: 'arena-1', mode: 'dm', datacenter: 'paris', max_players: 8 });
  assert.equal(lobby.players, 0);
  const placed = await client.findLobby({ modes: ['dm'], party_size: 2, rtt_ms: { paris: 20 } });
  assert.equal(placed.lobby, 'arena-1');
  assert.equal((await admin.closeLobby('arena-1')).closed, true);

  const match = await client.registerBackfill({ queue: 'coop', match_id: 'm-1', teams: [[{ id: 901, mmr: 1500 }]], datacenter: 'paris' });
  assert.equal(match.open_seats, 3);
  await client.createTicket({ queue: 'coop', players: [party(902)] });
  const reservation = await until(async () => (await client.backfill('m-1')).reservations[0]?.id, 'a seat reservation');
  const confirmed = await client.confirmReservation('m-1', reservation);
  assert.ok(confirmed.teams[0]?.players.includes(902));
  assert.equal((await client.stopBackfill('m-1')).stopped, true);
  assert.match(await client.metrics(), /^# HELP /m);
});

test('src/openapi.ts is what docs/openapi.json generates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mm-openapi-ts-'));
  try {
    const out = join(dir, 'openapi.ts');
    execFileSync(process.execPath, [join(root, 'node_modules/openapi-typescript/bin/cli.js'), join(root, '../../docs/openapi.json'), '--output', out], {
      stdio: 'pipe',
    });
    assert.equal(readFileSync(join(root, 'src/openapi.ts'), 'utf8'), readFileSync(out, 'utf8'), 'run `npm run generate` after changing docs/openapi.json');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
