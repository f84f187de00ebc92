// The ticket events of GET /api/events on a WebSocket, as an async iterator.
// The stream remembers the last event's sequence number and, when the
// connection drops (the network, a server restart, a slow-consumer close,
// the session queues moving to another node), connects again with
// `after=<last seq>`: no event is skipped and none comes twice, unless the
// server no longer held some (a `gap` item says so).
//
// On a cluster it goes where the queues are: a handshake answered 307, or a
// close 4307 whose reason names the node that runs them now, moves the
// stream to that node at once, if the cluster lists it (never to an address
// a redirect alone names). A refused token (401, 403) ends the stream with
// that error, and `ready` rejects with it: retrying would not help.
import WebSocket from 'ws';
import type { IncomingMessage } from 'node:http';
import type { components } from './openapi.js';

type TicketEvent = components['schemas']['TicketEvent'];

// What the stream yields: each ticket event, and a gap where events were no
// longer held when the stream (re)connected.
export type StreamItem = TicketEvent | { type: 'gap'; after: number; why: string };

export interface WatchOptions {
  // Resume after this sequence number; default: only events written from now on.
  after?: number;
  // Only these queues' events; default: every queue.
  queues?: string[];
  // Connect again after a drop (default true), waiting 0.25 s doubling up to 10 s.
  reconnect?: boolean;
  // How many items may wait unread before the stream stops reading the socket
  // (default 10,000); the server then closes a slow consumer, and the stream
  // resumes where it was.
  maxBuffered?: number;
}

// A refusal of the stream's handshake: the HTTP status and the server's `error`.
export class StreamRefused extends Error {
  constructor(readonly status: number, message: string) {
    super(`${status}: ${message}`);
    this.name = 'StreamRefused';
  }
}

export class EventStream implements AsyncIterable<StreamItem> {
  private socket: WebSocket | undefined;
  private readonly items: StreamItem[] = [];
  private waiter: ((done: boolean) => void) | undefined;
  private closed = false;
  private failure: Error | undefined;
  private attempts = 0;
  private last: number | undefined;
  private markReady: () => void = () => {};
  private markRefused: (e: Error) => void = () => {};
  // Resolves once the server has the stream (its `hello`): an event written
  // after that comes on the stream even when the stream started "from now".
  // Rejects when the server refuses the stream (StreamRefused: the token).
  readonly ready: Promise<void> = new Promise((resolve, reject) => {
    this.markReady = resolve;
    this.markRefused = reject;
  });
  // Where the stream connects now: the node that runs the session queues
  // (back to the server it was given when that node cannot be reached).
  private base: string;
  private readonly home: string;
  private moveTo: string | undefined;
  private opened = false;

  constructor(
    baseUrl: string,
    private readonly token: string | undefined,
    private readonly options: WatchOptions,
    // Whether an origin is a node of the cluster (MatchmakerClient.clusterNode).
    private readonly clusterNode: (origin: string) => Promise<boolean> = async () => false,
  ) {
    this.base = this.home = baseUrl;
    this.last = options.after;
    this.ready.catch(() => {});  // a stream nobody awaits the readiness of
    this.connect();
  }

  // The sequence number of the last event yielded or buffered; resume from it.
  get lastSeq(): number | undefined {
    return this.last;
  }

  close(): void {
    this.closed = true;
    this.socket?.close(1000);
    this.wake(true);
  }

  private wake(done: boolean): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.(done);
  }

  // The handshake was answered with a status: follow a 307 to a node of the
  // cluster; a refused token ends the stream; anything else is retried.
  private refused(res: IncomingMessage): void {
    let text = '';
    res.on('data', (d: Buffer) => {
      if (text.length < 4096) text += d.toString();
    });
    res.on('end', () => {
      const status = res.statusCode ?? 0;
      if (status === 401 || status === 403) {
        let message = text;
        try {
          message = (JSON.parse(text) as { error?: string }).error ?? text;
        } catch {}
        this.fail(new StreamRefused(status, message));
        return;
      }
      const location = status === 307 ? res.headers.location : undefined;
      if (location) this.moveTo = new URL(location, this.base).origin;
    });
  }

  private fail(e: Error): void {
    this.failure = e;
    this.closed = true;
    this.markRefused(e);
    this.wake(true);
  }

  // After a close: where to connect again (the node a 307 or a 4307 named,
  // when the cluster lists it), and how soon (at once when moved).
  private async again(): Promise<void> {
    const to = this.moveTo;
    this.moveTo = undefined;
    // A node it moved to that no longer answers: ask the first server again.
    if (!this.opened && !to) this.base = this.home;
    let moved = false;
    if (to && to !== new URL(this.base).origin) {
      try {
        moved = await this.clusterNode(to);
      } catch {
        moved = false;
      }
      if (moved) this.base = to;
    }
    const delay = moved ? 0 : Math.min(10_000, 250 * 2 ** this.attempts++);
    setTimeout(() => {
      if (!this.closed) this.connect();
    }, delay);
  }

  private connect(): void {
    const url = new URL(this.base.replace(/^http/, 'ws') + '/api/events');
    if (this.last !== undefined) url.searchParams.set('after', String(this.last));
    if (this.options.queues?.length) url.searchParams.set('queues', this.options.queues.join(','));
    const socket = new WebSocket(url, { headers: this.token ? { Authorization: `Bearer ${this.token}` } : {} });
    this.socket = socket;
    this.opened = false;
    socket.on('open', () => {
      this.attempts = 0;
      this.opened = true;
    });
    socket.on('unexpected-response', (_req, res) => {
      this.refused(res);
      res.on('end', () => socket.terminate());  // then 'error' and 'close', as for any failed handshake
    });
    socket.on('message', (data) => {
      let m: { type?: string; seq?: number; after?: number; why?: string };
      try {
        m = JSON.parse(String(data));
      } catch {
        return;
      }
      if (m.type === 'event') {
        // After a reconnect the server starts after `after`: an event at or
        // before the last one is never yielded twice.
        if (this.last !== undefined && m.seq !== undefined && m.seq <= this.last) return;
        this.last = m.seq;
        this.items.push(m as TicketEvent);
      } else if (m.type === 'gap') {
        this.items.push({ type: 'gap', after: m.after ?? 0, why: m.why ?? '' });
      } else if (m.type === 'hello') {
        // A stream started "from now" resumes from the newest event it was told of.
        if (this.last === undefined) this.last = (m as { last_seq?: number }).last_seq;
        this.markReady();
      }
      if (this.items.length >= (this.options.maxBuffered ?? 10_000)) socket.pause();
      this.wake(false);
    });
    socket.on('error', (e) => {
      if (this.options.reconnect === false && !this.failure) this.failure = e;  // a refusal's own error stays
    });
    socket.on('close', (code: number, reason: Buffer) => {
      if (this.closed) return;
      if (this.options.reconnect === false) {
        this.closed = true;
        this.wake(true);
        return;
      }
      // 4307: the queues moved; the reason names the node ("... moved to http://...").
      if (code === 4307) this.moveTo = /https?:\/\/[^\s]+/.exec(reason.toString())?.[0];
      if (this.moveTo) this.moveTo = new URL(this.moveTo).origin;
      void this.again();
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamItem> {
    try {
      for (;;) {
        const next = this.items.shift();
        if (next !== undefined) {
          if (this.items.length < (this.options.maxBuffered ?? 10_000) / 2) this.socket?.resume();
          yield next;
          continue;
        }
        if (this.failure) throw this.failure;
        if (this.closed) return;
        await new Promise<boolean>((resolve) => {
          this.waiter = resolve;
        });
      }
    } finally {
      if (!this.closed) this.close();
    }
  }
}
