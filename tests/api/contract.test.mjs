// The contract test: the real matchmakerd answers every operation of
// docs/openapi.json, successes and errors, and each answer fits the
// document (status, content type, schema), the WebSocket's messages too, and
// every body the server accepted fits its request schema. The
// document is linted (Redocly, recommended-strict), the server serves the
// repository's document, and every operation must be seen answering a
// success and an error: an operation the cases below leave out fails the
// test, and a route without its operation keeps the server from starting
// (apps/server/api_contract.hpp).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { Contract, documentPath } from './contract.mjs';
import { startServer, tokens, until } from './server.mjs';

test('the OpenAPI document passes the linter', () => {
  const here = fileURLToPath(new URL('.', import.meta.url));
  // Throws (with the linter's report) on any problem: recommended-strict
  // makes every warning an error.
  try {
    execFileSync(
    process.execPath,
    [`${here}node_modules/@redocly/cli/bin/cli.js`, 'lint', '--config', `${here}redocly.yaml`,
     fileURLToPath(documentPath)],
    { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    assert.fail(`the linter found problems:\n${e.stdout}\n${e.stderr}`);
  }
});

test('every route answers as docs/openapi.json says, successes and errors', async (t) => {
  // Fake opponents on, so that a FakeOpponent answer is checked too.
  // The co-op queue recorded, for the configuration's dry run.
  const server = await startServer((dir) => ({
    matchmaker: { database_scan_first_delay: '0s', database_scan_tick: '500ms', random_seed: 1, enable_fake_opponents: true },
    sessions: { record: { queues: ['coop'], dir: `${dir}/recordings` } },
  }));
  t.after(() => server.stop());
  const contract = new Contract();

  // One request: the answer is checked against the document and must have
  // the status the case expects.
  // `partial`: a request whose bad parts the server refuses inside a 200 (the
  // rows of POST /api/players), so its body need not fit the schema.
  // `type`: the Content-Type sent with the body (JSON unless said).
  const call = async (method, path, { token = tokens.admin, body, expect, raw, partial, type } = {}) => {
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    let payload;
    if (raw !== undefined) payload = raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers['Content-Type'] = type ?? 'application/json';
    const res = await fetch(server.url + path, { method, headers, body: payload, redirect: 'manual' });
    const text = await res.text();
    const parsed = contract.check(method, path, res.status, res.headers.get('content-type'), text);
    if (body !== undefined && res.status < 300 && !partial) contract.checkAccepted(method, path, body);
    if (expect !== undefined && res.status !== expect)
      contract.fail(`${method} ${path}: expected ${expect}, got ${res.status}: ${text.slice(0, 300)}`);
    return { status: res.status, body: parsed, headers: res.headers };
  };

  // A body announced larger than http.max_body_bytes: answered from the
  // head, before any of it is sent (fetch cannot send a head alone).
  const tooLarge = async (path) => {
    const answer = await new Promise((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1');
      let got = '';
      socket.on('data', (d) => {
        got += d;
        const end = got.indexOf('\r\n\r\n');
        const length = /content-length: *(\d+)/i.exec(got);
        if (end >= 0 && length && got.length >= end + 4 + Number(length[1])) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on('error', reject);
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.admin}\r\n` +
                   'Content-Type: application/json\r\nContent-Length: 999999999\r\n\r\n');
    });
    const status = Number(answer.split(' ')[1]);
    const type = /content-type: *([^\r]*)/i.exec(answer)?.[1];
    contract.check('POST', path, status, type, answer.slice(answer.indexOf('\r\n\r\n') + 4));
    if (status !== 413) contract.fail(`POST ${path} with a body too large: ${status}, not 413`);
  };

  // The served document is the repository's.
  const served = await call('GET', '/api/openapi.json', { token: null, expect: 200 });
  if (JSON.stringify(served.body) !== JSON.stringify(contract.doc))
    contract.fail('GET /api/openapi.json is not docs/openapi.json: rebuild the server');
  await call('POST', '/api/openapi.json', { token: null, expect: 405 });
  await call('GET', '/', { token: null, expect: 200 });
  await call('DELETE', '/', { token: null, expect: 405 });
  await call('GET', '/sessions.html', { token: null, expect: 200 });
  await call('POST', '/sessions.html', { token: null, expect: 405 });
  await call('GET', '/metrics', { token: tokens.view, expect: 200 });
  await call('GET', '/metrics', { token: null, expect: 401 });

  // The async half.
  await until(async () => {
    const r = await call('GET', '/api/matchmakers', { token: tokens.view, expect: 200 });
    return r.body.matchmakers.every((m) => m.players > 0);
  }, 'the first scans');
  await call('GET', '/api/matchmakers', { token: 'no-such-token', expect: 401 });
  await call('GET', '/api/config', { token: tokens.view, expect: 200 });
  await call('GET', '/api/config', { token: null, expect: 401 });
  await call('GET', '/api/cluster', { token: tokens.view, expect: 200 });
  await call('GET', '/api/cluster', { token: null, expect: 401 });
  // The probes need no token; ready once the first scans ran.
  await call('GET', '/healthz', { token: null, expect: 200 });
  await call('POST', '/healthz', { token: null, expect: 405 });
  await until(async () => (await call('GET', '/readyz', { token: null })).status === 200, 'ready');
  await call('DELETE', '/readyz', { token: null, expect: 405 });
  // The config file's tokens again (the same ones): admin only.
  await call('POST', '/api/admin/tokens/reload', { body: {}, expect: 200 });
  await call('POST', '/api/admin/tokens/reload', { token: tokens.view, body: {}, expect: 403 });
  // The session queues' configuration versions: read, checked, applied, rolled back.
  const inForce = (await call('GET', '/api/admin/config/sessions', { token: tokens.view, expect: 200 })).body;
  await call('GET', '/api/admin/config/sessions', { token: null, expect: 401 });
  await call('GET', '/api/admin/config/sessions/versions?limit=5', { token: tokens.view, expect: 200 });
  await call('GET', '/api/admin/config/sessions/versions?limit=x', { token: tokens.view, expect: 400 });
  const longer = structuredClone(inForce.document);
  longer.queues[0].give_up_after = '90s';
  await call('POST', '/api/admin/config/sessions/check', { body: { document: longer }, expect: 200 });
  await call('POST', '/api/admin/config/sessions/check', { body: { document: { queues: 'none' } }, expect: 400 });
  await call('POST', '/api/admin/config/sessions', {
    body: { document: longer, comment: 'contract', base_version: inForce.version }, expect: 200 });
  await call('POST', '/api/admin/config/sessions', {
    body: { document: longer, base_version: inForce.version }, expect: 409 });
  await call('POST', '/api/admin/config/sessions/rollback', { body: { version: inForce.version }, expect: 200 });
  await call('POST', '/api/admin/config/sessions/rollback', { body: { version: 9999 }, expect: 404 });
  // The async profile's, the same way.
  const profile = (await call('GET', '/api/admin/config/profile', { token: tokens.view, expect: 200 })).body;
  await call('GET', '/api/admin/config/profile', { token: null, expect: 401 });
  await call('GET', '/api/admin/config/profile/versions', { token: tokens.view, expect: 200 });
  await call('GET', '/api/admin/config/profile/versions?limit=-1', { token: tokens.view, expect: 400 });
  const wider = { ...profile.document, mmr_window: 150 };
  await call('POST', '/api/admin/config/profile/check', { body: { document: wider }, expect: 200 });
  await call('POST', '/api/admin/config/profile/check', { body: { document: { mmr_window: 'wide' } }, expect: 400 });
  await call('POST', '/api/admin/config/profile', { body: { document: wider, comment: 'contract' }, expect: 200 });
  await call('POST', '/api/admin/config/profile', { token: tokens.test, body: { document: wider }, expect: 403 });
  await call('POST', '/api/admin/config/profile/rollback', { body: { version: profile.version }, expect: 200 });
  await call('POST', '/api/admin/config/profile/rollback', { body: { version: 9999 }, expect: 404 });
  await call('GET', '/api/matchmakers/mm-0', { expect: 200 });
  await call('GET', '/api/matchmakers/mm-9', { expect: 404 });
  await call('GET', '/api/matchmakers/0/buckets/0?limit=3', { expect: 200 });
  await call('GET', '/api/matchmakers/0/buckets/99999', { expect: 404 });
  await call('GET', '/api/matchmakers/0/buckets/0?limit=5000', { expect: 400 });
  await call('GET', '/api/top?limit=5', { expect: 200 });
  await call('GET', '/api/top?limit=x', { expect: 400 });
  await call('GET', '/api/players/12', { expect: 200 });
  await call('GET', '/api/players/abc', { expect: 400 });
  await call('GET', '/api/players/99999999', { expect: 404 });
  await call('GET', '/api/players?after=0&limit=3', { expect: 200 });
  await call('GET', '/api/players?limit=20000', { expect: 400 });
  await call('POST', '/api/players', {
    body: { players: [{ id: 7, mmr: 1234.5, attributes: { region: 2 } }, { id: 9, mmr: 1500, attributes: [1, 2, 3, 4] }] },
    expect: 200,
  });
  const refusedRow = await call('POST', '/api/players', {
    body: { players: [{ id: 8, mmr: 'high' }] }, expect: 200, partial: true });
  assert.match(refusedRow.body.rejected[0].reason, /players\[0\]\.mmr/);
  await call('POST', '/api/players', { token: tokens.test, body: { players: [] }, expect: 403 });
  await call('POST', '/api/players', { raw: '{"players": [', expect: 400 });
  await tooLarge('/api/players');
  const query = { attacker_id: 42, mmr: 1500, attributes: { region: 1 } };
  await call('POST', '/api/query', { token: tokens.test, body: query, expect: 200 });
  await call('POST', '/api/query', {
    token: tokens.test,
    body: { queries: [query, { attacker_id: 43, mmr: 1200, retries: 2, excluded_ids: [17] }] },
    expect: 200,
  });
  await call('POST', '/api/query', { token: tokens.test, body: { attacker_id: 0, mmr: 1 }, expect: 400 });
  // Nobody near an MMR of 900,000: a made-up opponent (model id 0).
  const fake = await call('POST', '/api/query', { token: tokens.test, body: { attacker_id: 44, mmr: 900000 }, expect: 200 });
  assert.equal(fake.body.result, 'FakeOpponent');
  await call('POST', '/api/query', { token: tokens.test, raw: JSON.stringify(query), type: 'text/plain', expect: 415 });
  await call('POST', '/api/query', { token: tokens.view, body: query, expect: 403 });
  await call('POST', '/api/test-query', { token: tokens.test, body: { ...query, max_retries: 2 }, expect: 200 });
  await call('POST', '/api/test-query', { token: tokens.test, body: { ...query, max_retries: 500 }, expect: 400 });
  for (const what of ['rebalance', 'reset']) {
    await call('POST', `/api/${what}`, { expect: 200 });
    await call('POST', `/api/${what}`, { token: tokens.test, expect: 403 });
    await call('POST', `/api/matchmakers/mm-0/${what}`, { expect: 200 });
    await call('POST', `/api/matchmakers/mm-9/${what}`, { expect: 404 });
  }
  await call('POST', '/api/cache/add', { body: { id: 12 }, expect: 200 });
  await call('POST', '/api/cache/add', { body: { id: 99999999 }, expect: 404 });
  await call('POST', '/api/cache/remove', { body: { id: 12 }, expect: 200 });
  await call('POST', '/api/cache/remove', { body: {}, expect: 400 });

  // Session tickets: a party of one in the 4-player co-op queue waits.
  const party = (id, mmr = 1500) => ({ id, mmr, rtt_ms: { paris: 20, frankfurt: 30 } });
  const made = await call('POST', '/api/tickets', {
    token: tokens.test, body: { queue: 'coop', players: [party(501)] }, expect: 201 });
  const ticket = made.body.ticket;
  await call('POST', '/api/tickets', { token: tokens.test, body: { queue: 'coop', players: [party(501)] }, expect: 409 });
  await call('POST', '/api/tickets', { token: tokens.test, body: { queue: 'ranked', players: [party(502)] }, expect: 400 });
  // A batch: each ticket answered as alone (here a 409 and a 400), or refused whole.
  const batch = await call('POST', '/api/tickets', {
    token: tokens.test,
    body: { tickets: [{ queue: 'coop', players: [party(501)] }, { queue: 'ranked', players: [party(503)] }] },
    expect: 200,
  });
  assert.deepEqual(batch.body.results.map((r) => r.status), [409, 400]);
  await call('POST', '/api/tickets', { token: tokens.test, body: { tickets: [] }, expect: 400 });
  await call('GET', `/api/tickets/${ticket}`, { token: tokens.test, expect: 200 });
  await call('GET', `/api/tickets/${ticket}`, { token: tokens.otherTest, expect: 404 });
  await call('GET', `/api/tickets/${ticket}?wait=x`, { token: tokens.test, expect: 400 });
  await call('GET', `/api/tickets/${ticket}/explain?limit=10`, { token: tokens.test, expect: 200 });
  await call('GET', `/api/tickets/${ticket}/explain`, { token: tokens.otherTest, expect: 404 });
  await call('GET', '/api/queues', { token: tokens.view, expect: 200 });
  await call('GET', '/api/queues', { token: null, expect: 401 });
  await call('GET', '/api/queues/coop?limit=2', { token: tokens.view, expect: 200 });
  await call('GET', '/api/queues/ranked', { token: tokens.view, expect: 404 });
  // A dry run of a candidate on the recording of the co-op queue.
  const candidate = (await call('GET', '/api/admin/config/sessions', { token: tokens.view, expect: 200 })).body.document;
  candidate.queues[0].give_up_after = '120s';
  await call('POST', '/api/admin/config/sessions/dry-run', { body: { document: candidate, window_s: 600 }, expect: 200 });
  await call('POST', '/api/admin/config/sessions/dry-run', { body: { document: candidate, window_s: 1 }, expect: 400 });

  // Ticket events: the long-poll, and the WebSocket with each message type.
  await call('GET', '/api/events?after=0&limit=5', { token: tokens.test, expect: 200 });
  await call('GET', '/api/events?limit=5000', { token: tokens.test, expect: 400 });
  await call('GET', '/api/events?limit=0', { token: tokens.test, expect: 400 });
  const frames = contract.doc.paths['/api/events'].get['x-websocket'];
  const messages = [];
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/events?after=0`, {
    headers: { Authorization: `Bearer ${tokens.test}` },
  });
  ws.on('upgrade', (res) => contract.check('GET', '/api/events', res.statusCode, undefined, ''));
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  for (const m of [{ type: 'ping' }, { type: 'subscribe', queue: 'coop' }, { type: 'unsubscribe', queue: 'coop' }]) {
    contract.validMessage('client-messages', frames['client-messages'], m, 'a client message');
    ws.send(JSON.stringify(m));
  }
  ws.send(JSON.stringify({ type: 'dance' })); // not a client message: answered with an error message
  await until(() => messages.some((m) => m.type === 'error'), 'the answer to a bad message');
  const cancelled = await call('DELETE', `/api/tickets/${ticket}`, { token: tokens.test, expect: 200 });
  assert.equal(cancelled.body.cancelled, true);
  await until(() => messages.some((m) => m.type === 'event' && m.state === 'cancelled'), 'the cancel event');
  ws.close();
  for (const m of messages) contract.validMessage('server-messages', frames['server-messages'], m, 'a server message');
  const types = new Set(messages.map((m) => m.type));
  for (const type of ['hello', 'event', 'pong', 'subscribed', 'error']) assert.ok(types.has(type), `no '${type}' message`);
  await call('DELETE', `/api/tickets/${ticket}`, { token: tokens.otherTest, expect: 404 });
  const events = await call('GET', '/api/events?after=0&limit=100', { token: tokens.test, expect: 200 });
  assert.ok(events.body.events.some((e) => e.ticket === ticket && e.state === 'cancelled'));

  // Lobbies.
  const lobby = { id: 'arena-1', mode: 'dm', datacenter: 'paris', max_players: 8, players: 2 };
  await call('POST', '/api/lobbies', { body: lobby, expect: 201 });
  await call('POST', '/api/lobbies', { body: lobby, expect: 400 }); // registered already
  await call('POST', '/api/lobbies', { token: tokens.view, body: { ...lobby, id: 'arena-2' }, expect: 403 });
  // A test token registers its own; another identity's lobby is a 404 to it.
  await call('POST', '/api/lobbies', { token: tokens.test, body: { ...lobby, id: 'arena-3' }, expect: 201 });
  await call('PUT', '/api/lobbies/arena-1', { token: tokens.test, body: { players: 3 }, expect: 404 });
  await call('DELETE', '/api/lobbies/arena-1', { token: tokens.test, expect: 404 });
  await call('DELETE', '/api/lobbies/arena-3', { token: tokens.test, expect: 200 });
  await call('POST', '/api/lobbies', { body: { ...lobby, id: 'arena/2' }, expect: 400 });
  await call('PUT', '/api/lobbies/arena-1', { body: { players: 3 }, expect: 200 });
  await call('PUT', '/api/lobbies/arena-9', { body: { players: 3 }, expect: 404 });
  await call('GET', '/api/lobbies?limit=10', { token: tokens.view, expect: 200 });
  await call('GET', '/api/lobbies?limit=x', { token: tokens.view, expect: 400 });
  const find = { modes: ['dm'], party_size: 2, rtt_ms: { paris: 20 } };
  await call('POST', '/api/lobbies/find', { token: tokens.test, body: find, expect: 200 });
  await call('POST', '/api/lobbies/find', {
    token: tokens.test, body: { modes: ['ctf'], party_size: 2, rtt_ms: { paris: 20 }, prevent_auto_create: true },
    expect: 409 });
  await call('POST', '/api/lobbies/find', { token: tokens.test, body: { modes: ['dm'] }, expect: 400 });
  await call('DELETE', '/api/lobbies/arena-1', { expect: 200 });
  await call('DELETE', '/api/lobbies/arena-1', { expect: 404 });

  // Backfill: a running match with one player; a waiting player is placed
  // into it (a reservation), confirmed; another is released.
  const match = { queue: 'coop', match_id: 'match-1', teams: [[{ id: 901, mmr: 1500 }]], datacenter: 'paris' };
  await call('POST', '/api/backfills', { token: tokens.test, body: match, expect: 201 });
  await call('POST', '/api/backfills', { token: tokens.test, body: match, expect: 409 });
  await call('POST', '/api/backfills', { token: tokens.test, body: { ...match, match_id: 'a/b' }, expect: 400 });
  await call('GET', '/api/backfills?queue=coop', { token: tokens.test, expect: 200 });
  await call('GET', '/api/backfills?limit=5000', { token: tokens.test, expect: 400 });
  await call('GET', '/api/backfills/match-1', { token: tokens.test, expect: 200 });
  await call('GET', '/api/backfills/match-1', { token: tokens.otherTest, expect: 404 });
  await call('PUT', '/api/backfills/match-1', {
    token: tokens.test, body: { teams: [[{ id: 901, mmr: 1500 }]], priority: 1 }, expect: 200 });
  await call('PUT', '/api/backfills/match-9', { token: tokens.test, body: { teams: [[]] }, expect: 404 });
  await call('GET', '/api/backfills/match-1/explain?limit=10', { token: tokens.test, expect: 200 });
  await call('GET', '/api/backfills/match-9/explain', { token: tokens.test, expect: 404 });
  const reservation = async (player) => {
    await call('POST', '/api/tickets', { token: tokens.test, body: { queue: 'coop', players: [party(player)] }, expect: 201 });
    return until(async () => {
      const r = await call('GET', '/api/backfills/match-1', { token: tokens.test, expect: 200 });
      return r.body.reservations.find((h) => h.players.includes(player))?.id;
    }, `player ${player}'s seat reservation`);
  };
  const first = await reservation(601);
  await call('POST', `/api/backfills/match-1/reservations/${first}/confirm`, { token: tokens.test, body: {}, expect: 200 });
  await call('POST', `/api/backfills/match-1/reservations/${first}/confirm`, { token: tokens.test, body: {}, expect: 404 });
  const second = await reservation(602);
  await call('POST', `/api/backfills/match-1/reservations/${second}/release`, {
    token: tokens.test, body: { players: [] }, expect: 400 });
  await call('POST', `/api/backfills/match-1/reservations/${second}/release`, {
    token: tokens.test, body: { players: [602] }, expect: 200 });
  // No body: all of the reservation's players.
  const third = await reservation(603);
  await call('POST', `/api/backfills/match-1/reservations/${third}/confirm`, { token: tokens.test, expect: 200 });
  await call('POST', `/api/backfills/match-1/reservations/${second}/release`, { token: tokens.view, body: {}, expect: 403 });
  await call('DELETE', '/api/backfills/match-1', { token: tokens.test, expect: 200 });
  await call('DELETE', '/api/backfills/match-1', { token: tokens.test, expect: 404 });

  assert.deepEqual(contract.failures, [], contract.failures.join('\n'));
  assert.deepEqual(contract.uncovered(), [], 'operations the test did not see answer:\n' + contract.uncovered().join('\n'));
});

