// A typed client of matchmakerd's HTTP API. The request and answer types are
// generated from the server's OpenAPI document (docs/openapi.json, `npm run
// generate` writes src/openapi.ts); this file adds one method per route, the
// errors as MatchmakerError with the server's status and message, and the
// ticket events as a resumable WebSocket stream (events.ts).
import type { components } from './openapi.js';
import { EventStream, type WatchOptions } from './events.js';

export type Schemas = components['schemas'];
export type Query = Schemas['Query'];
export type QueryResult = Schemas['QueryResult'];
export type QueryBatchResult = Schemas['QueryBatchResult'];
export type TicketBatchResult = Schemas['TicketBatchResult'];
export type TestQuery = Schemas['TestQuery'];
export type TestQueryReport = Schemas['TestQueryReport'];
export type Config = Schemas['Config'];
export type MatchmakerInfo = Schemas['MatchmakerInfo'];
export type PlayerRow = Schemas['PlayerRow'];
export type StoredPlayer = Schemas['StoredPlayer'];
export type CachedPlayer = Schemas['CachedPlayer'];
export type WriteReport = Schemas['WriteReport'];
export type TicketRequest = Schemas['TicketRequest'];
export type TicketPlayer = Schemas['TicketPlayer'];
export type TicketState = Schemas['TicketState'];
export type TicketEvent = Schemas['TicketEvent'];
export type EventPage = Schemas['EventPage'];
export type Match = Schemas['Match'];
export type TicketExplanation = Schemas['TicketExplanation'];
export type Explanation = Schemas['Explanation'];
export type QueueReport = Schemas['QueueReport'];
export type WaitingTicket = Schemas['WaitingTicket'];
export type Lobby = Schemas['Lobby'];
export type LobbyRequest = Schemas['LobbyRequest'];
export type LobbyFind = Schemas['LobbyFind'];
export type LobbyPlacement = Schemas['LobbyPlacement'];
export type LobbiesReport = Schemas['LobbiesReport'];
export type Backfill = Schemas['Backfill'];
export type BackfillRequest = Schemas['BackfillRequest'];
export type BackfillUpdate = Schemas['BackfillUpdate'];
export type BackfillPage = Schemas['BackfillPage'];
export type ClusterReport = Schemas['ClusterReport'];
export { EventStream, StreamRefused, type WatchOptions, type StreamItem } from './events.js';

// A 4xx or 5xx answer: `status` is the HTTP status, `message` the server's
// `error` (it names the field at fault).
export class MatchmakerError extends Error {
  constructor(readonly status: number, message: string, readonly body: unknown) {
    super(`${status}: ${message}`);
    this.name = 'MatchmakerError';
  }
}

export interface ClientOptions {
  // The server's address: "http://127.0.0.1:8080".
  baseUrl: string;
  // A token of the server's `tokens` (sent as `Authorization: Bearer`).
  token?: string;
  // Per request; a long-poll's own wait is added to it. Default 30 s.
  timeoutMs?: number;
}

type Params = Record<string, string | number | boolean | undefined>;

export class MatchmakerClient {
  readonly baseUrl: string;
  readonly token: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  // One request. A node of a cluster that does not serve the route answers
  // 307 to the one that does: the request goes again there, with its method,
  // body and token, but only to a node the cluster lists (clusterNode), at
  // most three hops. fetch's own redirects would drop the token on the way
  // to another origin.
  private async call<T>(method: string, path: string, options: { params?: Params; body?: unknown; extraMs?: number } = {}): Promise<T> {
    let url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(options.params ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    for (let hop = 0; ; ++hop) {
      res = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs + (options.extraMs ?? 0)),
      });
      const location = res.headers.get('location');
      if (res.status !== 307 || !location || hop === 3) break;
      const next = new URL(location, url);
      await res.arrayBuffer();
      if (!(await this.clusterNode(next.origin)))
        throw new MatchmakerError(307, `redirected to ${next.origin}, which is not a node of this cluster: not followed`, null);
      url = next;
    }
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const body: unknown = type.startsWith('application/json') && text ? JSON.parse(text) : text;
    if (!res.ok) {
      const message = typeof body === 'object' && body !== null && 'error' in body ? String((body as { error: unknown }).error) : text;
      throw new MatchmakerError(res.status, message, body);
    }
    return body as T;
  }

  // Whether `origin` ("http://host:port") is a node of this server's
  // cluster (GET /api/cluster, read again when a name is not in it): where
  // a redirect may take the token. The server itself always is.
  async clusterNode(origin: string): Promise<boolean> {
    if (origin === new URL(this.baseUrl).origin) return true;
    for (const fresh of [false, true]) {
      if (fresh || !this.nodes) this.nodes = await this.readClusterNodes();
      if (this.nodes.has(origin)) return true;
    }
    return false;
  }
  private nodes: Set<string> | undefined;
  private async readClusterNodes(): Promise<Set<string>> {
    const res = await fetch(this.baseUrl + '/api/cluster', {
      headers: this.token ? { Authorization: `Bearer ${this.token}` } : {},
      redirect: 'manual',
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const out = new Set<string>();
    if (!res.ok) {
      await res.arrayBuffer();
      return out;
    }
    const report = (await res.json()) as { nodes?: { http_url?: string }[] };
    for (const n of report.nodes ?? []) if (n.http_url) out.add(new URL(n.http_url).origin);
    return out;
  }

  private static segment(s: string | number): string {
    return encodeURIComponent(String(s));
  }

  // ---- async matchmaking ----------------------------------------------------
  // A real matchmaking request (role test): it may take the winner out of the cache.
  query(query: Query): Promise<QueryResult> {
    return this.call('POST', '/api/query', { body: query });
  }
  // Up to 4,096 queries in one request; each result is what it alone would get.
  queryBatch(queries: Query[]): Promise<QueryBatchResult> {
    return this.call('POST', '/api/query', { body: { queries } });
  }
  // "Why no match": retries on every matchmaker, changing nothing.
  testQuery(query: TestQuery): Promise<TestQueryReport> {
    return this.call('POST', '/api/test-query', { body: query });
  }
  config(): Promise<Config> {
    return this.call('GET', '/api/config');
  }
  matchmakers(): Promise<{ matchmakers: (MatchmakerInfo | Schemas['MatchmakerUnanswered'])[] }> {
    return this.call('GET', '/api/matchmakers');
  }
  matchmaker(name: string): Promise<MatchmakerInfo> {
    return this.call('GET', `/api/matchmakers/${MatchmakerClient.segment(name)}`);
  }
  bucket(matchmaker: string, bucket: number, page: { offset?: number; limit?: number } = {}): Promise<{ players: CachedPlayer[] }> {
    return this.call('GET', `/api/matchmakers/${MatchmakerClient.segment(matchmaker)}/buckets/${bucket}`, { params: page });
  }
  top(limit?: number): Promise<{ players: CachedPlayer[] }> {
    return this.call('GET', '/api/top', { params: { limit } });
  }
  player(id: number): Promise<{ id: number; stored: StoredPlayer | null; matchmakers: unknown[] }> {
    return this.call('GET', `/api/players/${id}`);
  }
  players(page: { after?: number; limit?: number } = {}): Promise<{ players: StoredPlayer[]; next_after: number | null }> {
    return this.call('GET', '/api/players', { params: page });
  }
  // Upserts rows in one transaction (role admin); malformed rows come back in `rejected`.
  writePlayers(players: PlayerRow[]): Promise<WriteReport> {
    return this.call('POST', '/api/players', { body: { players } });
  }
  rebalance(matchmaker?: string): Promise<unknown> {
    return this.call('POST', matchmaker ? `/api/matchmakers/${MatchmakerClient.segment(matchmaker)}/rebalance` : '/api/rebalance');
  }
  reset(matchmaker?: string): Promise<unknown> {
    return this.call('POST', matchmaker ? `/api/matchmakers/${MatchmakerClient.segment(matchmaker)}/reset` : '/api/reset');
  }
  cacheAdd(id: number): Promise<Schemas['CacheChange']> {
    return this.call('POST', '/api/cache/add', { body: { id } });
  }
  cacheRemove(id: number): Promise<Schemas['CacheChange']> {
    return this.call('POST', '/api/cache/remove', { body: { id } });
  }

  // ---- session tickets --------------------------------------------------------
  // Resolves once the ticket is durable (201).
  createTicket(ticket: TicketRequest): Promise<TicketState> {
    return this.call('POST', '/api/tickets', { body: ticket });
  }
  // Up to 1000 tickets in one request, each created as alone: a result per
  // ticket in the order given, its state or its { status, error }.
  createTickets(tickets: TicketRequest[]): Promise<TicketBatchResult> {
    return this.call('POST', '/api/tickets', { body: { tickets } });
  }
  // With `waitSeconds` (at most 60) the answer comes when the ticket leaves its queue.
  getTicket(id: string, options: { waitSeconds?: number } = {}): Promise<TicketState> {
    return this.call('GET', `/api/tickets/${MatchmakerClient.segment(id)}`, {
      params: { wait: options.waitSeconds },
      extraMs: (options.waitSeconds ?? 0) * 1000,
    });
  }
  cancelTicket(id: string): Promise<Schemas['Cancelled']> {
    return this.call('DELETE', `/api/tickets/${MatchmakerClient.segment(id)}`);
  }
  explainTicket(id: string, options: { limit?: number } = {}): Promise<TicketExplanation> {
    return this.call('GET', `/api/tickets/${MatchmakerClient.segment(id)}/explain`, { params: options });
  }
  queues(): Promise<{ queues: QueueReport[] }> {
    return this.call('GET', '/api/queues');
  }
  queue(name: string, page: { offset?: number; limit?: number } = {}): Promise<{ queue: QueueReport; waiting_tickets: WaitingTicket[] }> {
    return this.call('GET', `/api/queues/${MatchmakerClient.segment(name)}`, { params: page });
  }
  // The ticket events after `after` as one long-poll (see watchEvents for a stream).
  events(options: { after?: number; limit?: number; waitSeconds?: number; queues?: string[] } = {}): Promise<EventPage> {
    return this.call('GET', '/api/events', {
      params: { after: options.after, limit: options.limit, wait: options.waitSeconds, queues: options.queues?.join(',') },
      extraMs: (options.waitSeconds ?? 0) * 1000,
    });
  }
  // Every ticket event of this token's tickets (an admin's: all) as it is
  // written, on a WebSocket that resumes where it stopped (events.ts).
  watchEvents(options: WatchOptions = {}): EventStream {
    return new EventStream(this.baseUrl, this.token, options, (origin) => this.clusterNode(origin));
  }

  // ---- lobbies ------------------------------------------------------------------
  lobbies(options: { limit?: number } = {}): Promise<LobbiesReport> {
    return this.call('GET', '/api/lobbies', { params: options });
  }
  registerLobby(lobby: LobbyRequest): Promise<Lobby> {
    return this.call('POST', '/api/lobbies', { body: lobby });
  }
  updateLobby(id: string, players: number): Promise<{ id: string; players: number }> {
    return this.call('PUT', `/api/lobbies/${MatchmakerClient.segment(id)}`, { body: { players } });
  }
  closeLobby(id: string): Promise<{ id: string; closed: boolean }> {
    return this.call('DELETE', `/api/lobbies/${MatchmakerClient.segment(id)}`);
  }
  findLobby(search: LobbyFind): Promise<LobbyPlacement> {
    return this.call('POST', '/api/lobbies/find', { body: search });
  }

  // ---- backfill -------------------------------------------------------------------
  registerBackfill(match: BackfillRequest): Promise<Backfill> {
    return this.call('POST', '/api/backfills', { body: match });
  }
  backfills(options: { queue?: string; offset?: number; limit?: number } = {}): Promise<BackfillPage> {
    return this.call('GET', '/api/backfills', { params: options });
  }
  backfill(matchId: string): Promise<Backfill> {
    return this.call('GET', `/api/backfills/${MatchmakerClient.segment(matchId)}`);
  }
  updateBackfill(matchId: string, update: BackfillUpdate): Promise<Backfill> {
    return this.call('PUT', `/api/backfills/${MatchmakerClient.segment(matchId)}`, { body: update });
  }
  stopBackfill(matchId: string): Promise<{ match_id: string; stopped: boolean }> {
    return this.call('DELETE', `/api/backfills/${MatchmakerClient.segment(matchId)}`);
  }
  explainBackfill(matchId: string, options: { limit?: number } = {}): Promise<Explanation> {
    return this.call('GET', `/api/backfills/${MatchmakerClient.segment(matchId)}/explain`, { params: options });
  }
  // Those players (all of the reservation's without a list) joined the match.
  confirmReservation(matchId: string, reservation: string, players?: number[]): Promise<Backfill> {
    return this.call('POST', `/api/backfills/${MatchmakerClient.segment(matchId)}/reservations/${MatchmakerClient.segment(reservation)}/confirm`, {
      body: players ? { players } : {},
    });
  }
  // Those players will not come: their seats open again.
  releaseReservation(matchId: string, reservation: string, players?: number[]): Promise<Backfill> {
    return this.call('POST', `/api/backfills/${MatchmakerClient.segment(matchId)}/reservations/${MatchmakerClient.segment(reservation)}/release`, {
      body: players ? { players } : {},
    });
  }

  // ---- operations -----------------------------------------------------------------
  metrics(): Promise<string> {
    return this.call('GET', '/metrics');
  }
  cluster(): Promise<ClusterReport> {
    return this.call('GET', '/api/cluster');
  }
}
