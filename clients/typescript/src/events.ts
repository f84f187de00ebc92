// The ticket events of GET /api/events on a WebSocket, as an async iterator.
// The stream remembers the last event's sequence number and, when the
// connection drops (the network, a server restart, a slow-consumer close,
// the session queues moving to another node), connects again with
// `after=<last seq>`: no event is skipped and none comes twice, unless the
// server no longer held some (a `gap` item says so).
import WebSocket from 'ws';
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

export class EventStream implements AsyncIterable<StreamItem> {
  private socket: WebSocket | undefined;
  private readonly items: StreamItem[] = [];
  private waiter: ((done: boolean) => void) | undefined;
  private closed = false;
  private failure: Error | undefined;
  private attempts = 0;
  private last: number | undefined;
  private markReady: () => void = () => {};
  // Resolves once the server has the stream (its `hello`): an event written
  // after that comes on the stream even when the stream started "from now".
  readonly ready: Promise<void> = new Promise((resolve) => {
    this.markReady = resolve;
  });

  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
    private readonly options: WatchOptions,
  ) {
    this.last = options.after;
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

  private connect(): void {
    const url = new URL(this.baseUrl.replace(/^http/, 'ws') + '/api/events');
    if (this.last !== undefined) url.searchParams.set('after', String(this.last));
    if (this.options.queues?.length) url.searchParams.set('queues', this.options.queues.join(','));
    const socket = new WebSocket(url, { headers: this.token ? { Authorization: `Bearer ${this.token}` } : {} });
    this.socket = socket;
    socket.on('open', () => {
      this.attempts = 0;
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
      if (this.options.reconnect === false) this.failure = e;
    });
    socket.on('close', () => {
      if (this.closed) return;
      if (this.options.reconnect === false) {
        this.closed = true;
        this.wake(true);
        return;
      }
      const delay = Math.min(10_000, 250 * 2 ** this.attempts++);
      setTimeout(() => {
        if (!this.closed) this.connect();
      }, delay);
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
