// The RESP port through Node's Redis client from the npm registry
// (node-redis, in RESP3: HELLO 3 with AUTH): a find, the client's own
// pipelining, two tickets to their match, and the events read from the
// start, then resumed after the last id with a blocking read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { startServer, tokens } from './server.mjs';

const sessions = {
  datacenters: [
    { name: 'paris', latitude: 48.9, longitude: 2.4, region: 'eu' },
    { name: 'tokyo', latitude: 35.7, longitude: 139.7, region: 'asia' },
  ],
  queues: [{ name: 'duel', tick: '100ms', give_up_after: '2s', rules: [{ name: 'skill', max_difference: 100 }] }],
};

const solo = (id, mmr) =>
  JSON.stringify({ queue: 'duel', players: [{ id, mmr, rtt_ms: { paris: 20, tokyo: 240 } }] });

// A stream reply's entries: [id, {field: value}].
const entriesOf = (reply) =>
  reply[0][1].map(([id, fields]) => {
    const map = {};
    for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
    return [id, map];
  });

test('node-redis in RESP3: a find, its pipeline, tickets to their match, a resumed blocking read', async () => {
  const server = await startServer({ resp: { port: 0 }, sessions });
  const client = createClient({
    socket: { host: '127.0.0.1', port: server.respPort },
    password: tokens.test,
    RESP: 3,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const query = JSON.stringify({ attacker_id: 91, mmr: 1500, attributes: { region: 1 } });
    const found = JSON.parse(await client.sendCommand(['MM.FIND', query]));
    assert.ok(['Success', 'NoneFound', 'FakeOpponent'].includes(found.result), JSON.stringify(found));

    // The client's own pipelining: commands of one tick go in one write.
    const replies = await Promise.all(Array.from({ length: 50 }, () => client.sendCommand(['MM.FIND', query])));
    assert.equal(replies.length, 50);
    for (const r of replies) assert.ok('players_tested' in JSON.parse(r));
    const piped = await client.multi().addCommand(['ECHO', 'a']).addCommand(['MM.FIND', query]).execAsPipeline();
    assert.equal(piped[0], 'a');

    // A refusal names the field.
    await assert.rejects(client.sendCommand(['MM.FIND', '{"attacker_id": 1, "mmr": "x"}']), /mmr must be a number/);

    const a = JSON.parse(await client.sendCommand(['MM.TICKET.CREATE', solo(301, 1500)]));
    const b = JSON.parse(await client.sendCommand(['MM.TICKET.CREATE', solo(302, 1510)]));
    let state = {};
    for (let i = 0; i < 10 && state.state !== 'matched'; i++)
      state = JSON.parse(await client.sendCommand(['MM.TICKET.GET', a.ticket, 'WAIT', '2']));
    assert.equal(state.state, 'matched');
    assert.ok(state.match.tickets.includes(b.ticket));

    const first = entriesOf(await client.sendCommand(['MM.XREAD', 'COUNT', '100', 'STREAMS', 'tickets', '0']));
    assert.deepEqual(first.map(([, f]) => f.state), ['waiting', 'waiting', 'matched', 'matched']);
    const last = first[first.length - 1][0];
    // A blocking read on a connection of its own, ended by a ticket made meanwhile.
    const reader = client.duplicate();
    reader.on('error', () => {});
    await reader.connect();
    const resumed = reader.sendCommand(['MM.XREAD', 'BLOCK', '5000', 'STREAMS', 'tickets', last]);
    await new Promise((r) => setTimeout(r, 300));
    const later = JSON.parse(await client.sendCommand(['MM.TICKET.CREATE', solo(303, 1800)]));
    const more = entriesOf(await resumed);
    assert.equal(more.length, 1);
    assert.equal(more[0][1].ticket, later.ticket);
    assert.equal(Number(more[0][0].split('-')[0]), Number(last.split('-')[0]) + 1);
    await reader.quit();
    await client.quit();
  } finally {
    await server.stop();
  }
});
