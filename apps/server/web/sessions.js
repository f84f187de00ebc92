// The sessions page: a card per queue, time to match and worst RTT over the
// last minutes (means of what matched between two polls), waiting tickets
// by latency stage, lobbies by datacenter, running matches with open seats
// (backfill), and the chosen queue's oldest waiting tickets. Polls every two
// seconds.
"use strict";

const POLL_MS = 2000;
const HISTORY = 90;  // three minutes of polls
const STAGES = [["ideal", "var(--ok)"], ["expand", "var(--warn)"], ["warm_body", "var(--bad)"]];

const sessions = { previous: null, series: new Map(), reasons: [] };  // queue -> [{ttm, rtt}]; reasons: per poll
onTokenChange(() => start());

// The mean of what a histogram gained since the previous poll, or null.
function meanSince(now, before) {
  const count = now.count - (before ? before.count : 0);
  if (count <= 0) return null;
  const total = histogramSum(now) - (before ? histogramSum(before) : 0);
  return total / count;
}
const histogramSum = (h) => h.sum;

function renderQueueCards(queues) {
  const cards = $("queue-cards");
  cards.replaceChildren();
  for (const q of queues) {
    const card = el("div", { class: "card", "data-queue": q.queue, "data-waiting": q.waiting,
                             "data-matches": q.matches });
    card.append(el("h3", {}, q.queue));
    const dl = el("dl");
    const row = (k, v) => dl.append(el("dt", {}, k), el("dd", {}, v));
    row("waiting", fmt(q.waiting));
    row("created", fmt(q.created));
    row("matched", fmt(q.matched) + " in " + fmt(q.matches) + " matches");
    row("mean match size", q.matches ? fmt(q.players_matched / q.matches, 1) : "–");
    row("cancelled / expired / failed", `${fmt(q.cancelled)} / ${fmt(q.expired)} / ${fmt(q.failed)}`);
    row("mean time to match", q.wait_seconds.mean === null ? "–" : fmt(q.wait_seconds.mean, 1) + " s");
    row("mean MMR spread", q.mmr_spread.mean === null ? "–" : fmt(q.mmr_spread.mean));
    row("mean worst RTT", q.worst_rtt_ms.mean === null ? "–" : fmt(q.worst_rtt_ms.mean) + " ms");
    const bf = q.backfill, res = bf.reservations;
    card.dataset.openSeats = bf.open_seats;
    card.dataset.backfilled = bf.tickets_placed;
    row("running matches (backfill)", fmt(bf.running_matches) + ", " + fmt(bf.open_seats) + " open seats");
    row("tickets placed into running matches", fmt(bf.tickets_placed));
    row("seats confirmed / released / expired", `${fmt(res.confirmed)} / ${fmt(res.released)} / ${fmt(res.expired)}`);
    card.append(dl);
    cards.append(card);
  }
}

// A line over the last polls; gaps where nothing matched.
function drawLine(svg, points, unit) {
  svg.replaceChildren();
  const W = 600, H = 160;
  const values = points.filter((p) => p !== null);
  const max = Math.max(1, ...values);
  const step = W / (HISTORY - 1);
  let path = "", pen = false;
  points.forEach((p, i) => {
    if (p === null) { pen = false; return; }
    const x = (HISTORY - points.length + i) * step, y = H - (p / max) * (H - 20);
    path += (pen ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1) + " ";
    pen = true;
    svg.append(el("svg:circle", { class: "point", cx: x, cy: y, r: 2, "data-value": p }));
  });
  if (path) svg.prepend(el("svg:path", { d: path, fill: "none", stroke: "var(--accent)", "stroke-width": 2 }));
  svg.append(el("svg:text", { x: 4, y: 14, "font-size": 12 }, "max " + fmt(max, 1) + " " + unit));
}

function renderStages(queues) {
  const svg = $("stage-chart");
  svg.replaceChildren();
  const W = 600, H = 160;
  const max = Math.max(1, ...queues.map((q) => q.waiting));
  const band = H / Math.max(1, queues.length);
  queues.forEach((q, i) => {
    let x = 90;
    svg.append(el("svg:text", { x: 4, y: i * band + band / 2 + 4, "font-size": 12 }, q.queue));
    for (const [stage, color] of STAGES) {
      const n = q.waiting_by_stage[stage];
      const w = (n / max) * (W - 100);
      const bar = el("svg:rect", { x, y: i * band + band * 0.2, width: w, height: band * 0.6,
                                   fill: color, "data-queue": q.queue, "data-stage": stage, "data-value": n });
      bar.append(el("svg:title", {}, `${q.queue} ${stage}: ${n}`));
      svg.append(bar);
      x += w;
    }
  });
  $("stage-legend").replaceChildren(...STAGES.map(([stage, color]) => {
    const s = el("span");
    s.append(el("span", { class: "swatch", style: "background:" + color }), stage.replace("_", " "));
    return s;
  }));
}

function renderLobbies(l) {
  $("lobby-count").textContent = fmt(l.lobbies) + " lobbies, " + fmt(l.players) + " players";
  $("lobby-rows").replaceChildren(...l.by_datacenter.map((d) => {
    const tr = el("tr", { "data-datacenter": d.datacenter });
    for (const v of [d.datacenter, fmt(d.lobbies), fmt(d.players), fmt(d.seats),
                     fmt(d.seats ? (100 * d.players) / d.seats : 0, 1) + " %"])
      tr.append(el("td", {}, v));
    return tr;
  }));
}

// The running matches registered for backfill: the most open seats first,
// then the longest registered (of the first 1000 the token may read;
// "total" counts every one).
function renderBackfills(page) {
  const shown = page.backfills.slice()
    .sort((a, b) => b.open_seats - a.open_seats || b.backfilling_for_ms - a.backfilling_for_ms)
    .slice(0, 20);
  const open = page.backfills.filter((b) => b.open_seats > 0).length;
  $("backfill-count").textContent = fmt(page.total) + " running, " + fmt(open) + " with open seats";
  $("backfill-rows").replaceChildren(...shown.map((b) => {
    const tr = el("tr", { "data-match": b.match_id, "data-open": b.open_seats });
    const reserved = b.teams.reduce((n, t) => n + t.reserved, 0);
    for (const v of [b.match_id, b.queue, b.datacenter || "–", fmt(b.open_seats), fmt(reserved),
                     fmt(b.backfilling_for_ms / 1000, 1) + " s"])
      tr.append(el("td", {}, v));
    return tr;
  }));
}

// The main reasons sampled since the oldest poll kept (three minutes),
// per queue, most frequent first; before a second poll, all of them.
function renderReasons(queues) {
  sessions.reasons.push(new Map(queues.map((q) => [q.queue, q.wait_reasons || {}])));
  while (sessions.reasons.length > HISTORY) sessions.reasons.shift();
  const oldest = sessions.reasons.length > 1 ? sessions.reasons[0] : new Map();
  $("reason-rows").replaceChildren(...queues.map((q) => {
    const before = oldest.get(q.queue) || {};
    const counts = Object.entries(q.wait_reasons || {})
      .map(([reason, n]) => [reason, n - (before[reason] || 0)])
      .filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    const total = counts.reduce((s, [, n]) => s + n, 0);
    const tr = el("tr", { "data-queue": q.queue });
    tr.append(el("td", {}, q.queue));
    const cell = el("td");
    if (!total) cell.append("–");
    for (const [reason, n] of counts.slice(0, 4)) {
      const share = (100 * n) / total;
      const item = el("span", { class: "reason", "data-reason": reason, "data-count": n });
      item.append(el("span", { class: "swatch", style: `width:${Math.max(4, share)}px;background:var(--accent)` }),
                  ` ${reason.replace("rule:", "rule ").replaceAll("_", " ")} ${fmt(share)} % `);
      cell.append(item);
    }
    tr.append(cell);
    return tr;
  }));
}

async function renderWaiting(queue) {
  $("waiting-queue").textContent = queue;
  const view = await api("/api/queues/" + encodeURIComponent(queue) + "?limit=20");
  $("waiting-rows").replaceChildren(...view.waiting_tickets.map((t) => {
    const tr = el("tr");
    for (const v of [t.ticket, t.players.join(", "), fmt(t.mmr), fmt(t.waited_ms / 1000, 1) + " s",
                     t.stage || "–"])
      tr.append(el("td", {}, v));
    return tr;
  }));
}

async function poll() {
  try {
    const [{ queues }, lobbies, backfills] = await Promise.all(
      [api("/api/queues"), api("/api/lobbies?limit=0"), api("/api/backfills?limit=1000")]);
    const before = new Map((sessions.previous || []).map((q) => [q.queue, q]));
    for (const q of queues) {
      const s = sessions.series.get(q.queue) || [];
      const b = before.get(q.queue);
      s.push({ ttm: b ? meanSince(q.wait_seconds, b.wait_seconds) : null,
               rtt: b ? meanSince(q.worst_rtt_ms, b.worst_rtt_ms) : null });
      while (s.length > HISTORY) s.shift();
      sessions.series.set(q.queue, s);
    }
    sessions.previous = queues;
    renderQueueCards(queues);
    const select = $("chart-queue");
    if (select.options.length !== queues.length)
      select.replaceChildren(...queues.map((q) => el("option", { value: q.queue }, q.queue)));
    const chosen = select.value || (queues[0] && queues[0].queue);
    const series = sessions.series.get(chosen) || [];
    drawLine($("ttm-chart"), series.map((p) => p.ttm), "s");
    drawLine($("rtt-chart"), series.map((p) => p.rtt), "ms");
    const last = (key) => { const v = series.map((p) => p[key]).filter((x) => x !== null); return v.length ? v[v.length - 1] : null; };
    $("ttm-value").textContent = last("ttm") === null ? "–" : fmt(last("ttm"), 1);
    $("rtt-value").textContent = last("rtt") === null ? "–" : fmt(last("rtt"));
    renderStages(queues);
    renderLobbies(lobbies);
    renderBackfills(backfills);
    renderReasons(queues);
    if (chosen) await renderWaiting(chosen);
    setStatus("updated " + new Date().toLocaleTimeString());
  } catch (e) {
    setStatus(e.message, true);
  }
}

let timer = null;
async function start() {
  clearInterval(timer);
  await poll();
  timer = setInterval(poll, POLL_MS);
}
$("chart-queue").addEventListener("change", () => poll());
start();
