// The matchmakerd dashboard: plain JS and SVG, no build step. It polls the
// admin API every two seconds; request rates are deltas between two polls.
"use strict";

const POLL_MS = 2000;
const HISTORY = 60;
const RESULTS = [["success", "var(--ok)"], ["none_found", "var(--warn)"],
                 ["fake_opponent", "var(--fake)"], ["invalid_request", "var(--bad)"]];

const state = { config: null, infos: [], previous: null, rates: [], lastMix: null };
onTokenChange(() => start());

// ---- cards -----------------------------------------------------------------

function renderCards() {
  const cards = $("cards");
  cards.replaceChildren();
  for (const m of state.infos) {
    const card = el("div", { class: "card" + (m.error ? " down" : ""), "data-name": m.name });
    card.append(el("h3", {}, m.name));
    if (m.error) {
      card.append(el("p", { class: "error" }, m.error));
    } else {
      card.setAttribute("data-players", m.players);
      const dl = el("dl");
      const row = (k, v) => dl.append(el("dt", {}, k), el("dd", {}, v));
      row("players", fmt(m.players) + " / " + fmt(m.capacity));
      row("fill", fmt(m.fill * 100, 1) + " %");
      row("buckets", fmt(m.bucket_count));
      row("MMR range", fmt(m.mmr_low) + " – " + fmt(m.mmr_high));
      row("samples", fmt(m.samples) + (m.enough_data_for_rebalance ? " ✓" : ""));
      row("scanned", fmt(m.scanned_players));
      row("last rebalance", when(m.last_rebalance_unix_ms));
      row("last snapshot", when(m.last_snapshot_unix_ms) + " (" + fmt(m.state_bytes / 1024, 0) + " KiB)");
      const r = m.requests;
      row("requests", fmt(r.success + r.none_found + r.fake_opponent + r.invalid_request));
      card.append(dl);
    }
    cards.append(card);
  }
}

// ---- cluster ---------------------------------------------------------------

// A node of a cluster (GET /api/cluster): the live nodes with their leases'
// expiry, and each resource's owner, planned owner and epoch. Hidden on a
// server alone.
function clusterRow(cells, data) {
  const tr = el("tr", data);
  for (const c of cells) {
    if (c instanceof Element && c.tagName === "TH") { tr.append(c); continue; }
    const td = el("td");
    if (c instanceof Node) td.append(c); else td.textContent = String(c);
    tr.append(td);
  }
  return tr;
}

function renderCluster(c) {
  const section = $("cluster");
  section.hidden = !c || !c.cluster;
  if (section.hidden) return;
  const k = c.counters;
  $("cluster-summary").textContent = "· this node " + c.node + (c.serving ? ", serving" : ", not serving") +
    " · " + fmt(k.takeovers) + " takeovers" + (k.takeovers ? " (last " + fmt(k.last_takeover_seconds, 2) + " s)" : "") +
    " · " + fmt(k.lost) + " lost · takeover after " + fmt(c.takeover_after_ms / 1000, 1) + " s";
  const nodes = $("cluster-nodes");
  nodes.replaceChildren(clusterRow(["node", "state", "lease", "owns", "pinned"].map((h) => el("th", {}, h))));
  for (const n of c.nodes) {
    const link = el("a", { href: n.http_url + "/" }, n.id);
    nodes.append(clusterRow([link, n.state, n.state === "live" ? fmt(n.lease_expires_in_ms / 1000, 1) + " s" : "–",
                             n.owns.join(", ") || "–", n.pinned.join(", ") || "–"],
                            { "data-node": n.id, "data-state": n.state }));
  }
  const leases = $("cluster-leases");
  leases.replaceChildren(clusterRow(["resource", "owner", "planned", "epoch", "since", "takeovers"].map((h) => el("th", {}, h))));
  for (const l of c.leases) {
    leases.append(clusterRow([l.resource, l.owner || "free", l.planned_owner || "–", l.epoch,
                              when(l.since_unix_ms), fmt(l.takeovers)],
                             { "data-resource": l.resource, "data-owner": l.owner || "",
                               class: l.owner === c.node ? "mine" : "" }));
  }
  // Each configured queue with its partition's lease and owner.
  const queues = $("cluster-queues");
  queues.replaceChildren(clusterRow(["queue", "lease", "owner"].map((h) => el("th", {}, h))));
  for (const p of c.session_partitions || []) {
    for (const q of p.queues) {
      queues.append(clusterRow([q, p.resource, p.owner_name || "free"],
                               { "data-queue": q, "data-owner": p.owner || "",
                                 class: p.owner === c.node ? "mine" : "" }));
    }
  }
}

// ---- charts ----------------------------------------------------------------

// Bars over MMR slices: one {low, high, value} per slice, heights scaled to max.
function drawBars(svg, slices, max, onClick) {
  svg.replaceChildren();
  const W = 600, H = 200;
  if (slices.length === 0) {
    svg.append(el("svg:text", { x: 10, y: 20, class: "muted" }, "no buckets yet"));
    return;
  }
  const lo = Math.min(...slices.map((s) => s.low)), hi = Math.max(...slices.map((s) => s.high));
  const span = hi > lo ? hi - lo : 1;
  for (const s of slices) {
    const x = ((s.low - lo) / span) * W, w = Math.max(1, ((s.high - s.low) / span) * W - 1);
    const h = max > 0 ? (s.value / max) * (H - 20) : 0;
    const bar = el("svg:rect", { class: "bar", x, y: H - h, width: w, height: h,
                                 "data-low": s.low, "data-value": s.value });
    bar.append(el("svg:title", {}, `MMR ${fmt(s.low)}–${fmt(s.high)}: ${s.label}`));
    if (onClick) bar.addEventListener("click", () => onClick(s));
    svg.append(bar);
  }
  svg.append(el("svg:text", { x: 4, y: 14, "font-size": 12 }, fmt(lo)));
  svg.append(el("svg:text", { x: W - 4, y: 14, "font-size": 12, "text-anchor": "end" }, fmt(hi)));
}

function slicesOf(buckets) {
  const by = new Map();
  for (const b of buckets) {
    const key = b.mmr_low + ":" + b.mmr_high;
    const s = by.get(key) || { low: b.mmr_low, high: b.mmr_high, count: 0, capacity: 0, first: b.index };
    s.count += b.count;
    s.capacity += b.capacity;
    by.set(key, s);
  }
  return [...by.values()].sort((a, b) => a.low - b.low);
}

function renderFill(full) {
  const slices = slicesOf(full.buckets).map((s) => ({
    ...s, value: s.capacity ? s.count / s.capacity : 0,
    label: `${fmt(s.count)} / ${fmt(s.capacity)} (${fmt(s.capacity ? (100 * s.count) / s.capacity : 0, 1)} %)`,
  }));
  drawBars($("fill-chart"), slices, 1, (s) => {
    $("inspect-matchmaker").value = full.name;
    fillBucketSelect(full).then(() => {
      $("inspect-bucket").value = String(s.first);
      inspect();
    });
  });
}

function renderDistribution(fulls) {
  const all = slicesOf(fulls.flatMap((f) => f.buckets)).map((s) => ({ ...s, value: s.count, label: fmt(s.count) + " players" }));
  drawBars($("mmr-chart"), all, Math.max(0, ...all.map((s) => s.value)));
}

function renderRates() {
  const svg = $("rate-chart");
  svg.replaceChildren();
  const W = 600, H = 160, n = state.rates.length;
  const max = Math.max(1, ...state.rates.map((r) => r.total));
  const w = W / HISTORY;
  state.rates.forEach((r, i) => {
    let y = H;
    for (const [k, color] of RESULTS) {
      const h = (r[k] / max) * (H - 16);
      if (h <= 0) continue;
      y -= h;
      svg.append(el("svg:rect", { x: (HISTORY - n + i) * w, y, width: Math.max(1, w - 1), height: h, style: "fill:" + color }));
    }
  });
  svg.append(el("svg:text", { x: 4, y: 12, "font-size": 11 }, "max " + fmt(max, 1) + "/s"));
  const last = state.rates[n - 1];
  $("rate-value").textContent = last ? fmt(last.total, 1) : "–";
  const mix = $("mix");
  mix.replaceChildren();
  if (last) {
    for (const [k, color] of RESULTS) {
      const share = last.total ? (100 * last[k]) / last.total : 0;
      const s = el("span", { "data-result": k });
      s.append(el("span", { class: "swatch", style: "background:" + color }), `${k} ${fmt(share, 1)} %`);
      mix.append(s);
    }
  }
}

function sumRequests(infos) {
  const t = { success: 0, none_found: 0, fake_opponent: 0, invalid_request: 0 };
  for (const m of infos) if (m.requests) for (const k in t) t[k] += m.requests[k];
  return t;
}

// ---- polling -----------------------------------------------------------------

async function poll() {
  try {
    const list = await api("/api/matchmakers");
    state.infos = list.matchmakers;
    const fulls = await Promise.all(state.infos.filter((m) => !m.error).map((m) => api("/api/matchmakers/" + encodeURIComponent(m.name))));
    const now = performance.now();
    const totals = sumRequests(state.infos);
    if (state.previous) {
      const dt = (now - state.previous.at) / 1000;
      const r = { total: 0 };
      for (const [k] of RESULTS) {
        r[k] = Math.max(0, totals[k] - state.previous.totals[k]) / dt;
        r.total += r[k];
      }
      state.rates.push(r);
      if (state.rates.length > HISTORY) state.rates.shift();
    }
    state.previous = { at: now, totals };
    renderCards();
    renderCluster(await api("/api/cluster").catch(() => null));
    const chosen = fulls.find((f) => f.name === $("fill-matchmaker").value) || fulls[0];
    if (chosen) renderFill(chosen);
    renderDistribution(fulls);
    renderRates();
    setStatus("live · " + new Date().toLocaleTimeString());
  } catch (e) {
    setStatus(e.message, true);
  }
}

// ---- test query ----------------------------------------------------------------

function table(headers, rows) {
  const t = el("table");
  const head = el("tr");
  for (const h of headers) head.append(el("th", {}, h));
  t.append(el("thead"), el("tbody"));
  t.tHead.append(head);
  for (const r of rows) {
    const tr = el("tr");
    for (const c of r) tr.append(el("td", {}, String(c)));
    t.tBodies[0].append(tr);
  }
  return t;
}

$("test-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const body = { attacker_id: Number(f.get("attacker_id")), mmr: Number(f.get("mmr")),
                 max_retries: Number(f.get("max_retries")), attributes: {} };
  for (const a of state.config.profile.attributes) {
    const v = f.get("attr-" + a.name);
    if (v !== null && v !== "") body.attributes[a.name] = Number(v);
  }
  const out = $("test-result");
  out.replaceChildren(el("p", { class: "muted" }, "asking…"));
  try {
    const r = await api("/api/test-query", { method: "POST", body: JSON.stringify(body) });
    out.replaceChildren(el("p", { class: r.found ? "success" : "error", id: "test-summary" }, r.summary));
    for (const m of r.matchmakers) {
      out.append(el("h3", {}, m.matchmaker + ": " + fmt(m.players_cached) + " cached, " +
                              m.buckets_walked + " buckets walked, " + m.buckets_never_walked + " kept out by hard labels"));
      out.append(table(["retries", "result", "candidate", "MMR gap", "tested", "possible"],
        m.tries.map((t) => [t.retries, t.result, t.best_candidate_id || "–", fmt(t.mmr_gap, 1), t.players_tested, t.possible])));
      if (m.rejected.length)
        out.append(table(["rejected player", "MMR", "bucket", "why"], m.rejected.map((x) => [x.id, fmt(x.mmr, 1), x.bucket, x.reason])));
    }
  } catch (e) {
    out.replaceChildren(el("p", { class: "error", id: "test-summary" }, e.message));
  }
});

// ---- bucket inspector ------------------------------------------------------------

async function fillBucketSelect(full) {
  const info = full || (await api("/api/matchmakers/" + encodeURIComponent($("inspect-matchmaker").value)));
  const select = $("inspect-bucket");
  const keep = select.value;
  select.replaceChildren();
  for (const b of info.buckets)
    select.append(el("option", { value: b.index }, `${b.index}: ${b.labels.join(" / ")} (${b.count}/${b.capacity})`));
  if ([...select.options].some((o) => o.value === keep)) select.value = keep;
}

async function inspect() {
  const m = $("inspect-matchmaker").value, b = $("inspect-bucket").value;
  if (b === "") return;
  try {
    const r = await api(`/api/matchmakers/${encodeURIComponent(m)}/buckets/${b}?offset=${Number($("inspect-offset").value) || 0}&limit=50`);
    $("inspect-caption").textContent = `${r.matchmaker}, bucket ${r.bucket.index} (${r.bucket.labels.join(" / ")}): ` +
      `${r.bucket.count} of ${r.bucket.capacity}, MMR ${fmt(r.bucket.mmr_low)}–${fmt(r.bucket.mmr_high)}; highest MMR first`;
    const names = state.config.profile.attributes.map((a) => a.name);
    const head = el("tr");
    for (const h of ["id", "MMR", ...names]) head.append(el("th", {}, h));
    $("inspector-head").replaceChildren(head);
    const rows = $("inspector-rows");
    rows.replaceChildren();
    for (const p of r.players) {
      const tr = el("tr");
      for (const c of [p.id, fmt(p.mmr, 1), ...names.map((n) => p.attributes[n])]) tr.append(el("td", {}, String(c)));
      rows.append(tr);
    }
  } catch (e) {
    $("inspect-caption").textContent = e.message;
  }
}

$("inspect-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  inspect();
});
$("inspect-matchmaker").addEventListener("change", () => fillBucketSelect().catch((e) => setStatus(e.message, true)));

// ---- start -------------------------------------------------------------------------

let timer = null;
async function start() {
  clearInterval(timer);
  try {
    state.config = await api("/api/config");
  } catch (e) {
    setStatus(e.message, true);
    return;
  }
  for (const id of ["fill-matchmaker", "inspect-matchmaker"]) {
    const s = $(id);
    s.replaceChildren(...state.config.matchmakers.map((n) => el("option", { value: n }, n)));
  }
  const inputs = $("attribute-inputs");
  inputs.replaceChildren();
  for (const a of state.config.profile.attributes) {
    const l = el("label", {}, a.name + " (" + a.rule + ")");
    l.append(el("input", { name: "attr-" + a.name, type: "number", min: 0, value: 0 }));
    inputs.append(l);
  }
  await poll();
  await fillBucketSelect().catch(() => {});
  timer = setInterval(poll, POLL_MS);
}
start();
