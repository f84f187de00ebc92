// The configuration page: the session queues' version in force, a candidate
// checked and replayed on the recording (the dry run's figures side by side:
// recorded, in force, candidate) before the apply button shows, and the
// versions with a rollback each (docs/operations.md, "Changing the
// configuration while it runs").
"use strict";

let BASE = "/api/admin/config/sessions";
const page = { inForce: null, checkedText: null };
onTokenChange(() => start());

$("scope").addEventListener("change", () => {
  BASE = "/api/admin/config/" + $("scope").value;
  $("candidate").value = "";
  for (const id of ["apply-form", "compare", "diff"]) $(id).hidden = true;
  $("candidate-result").textContent = "";
  // Only the session queues have a recording to replay.
  $("dry-run").hidden = $("scope").value !== "sessions";
  start();
});

function showInForce(c) {
  page.inForce = c;
  $("version").textContent = c.version ?? "–";
  $("in-force").textContent = c.version
    ? `by ${c.author}, ${new Date(c.created_unix_ms).toLocaleString()}` +
      (c.comment ? ` — “${c.comment}”` : "") + `; this node runs version ${c.applied_version}`
    : "no version yet";
  if (!$("candidate").value) $("candidate").value = JSON.stringify(c.document, null, 2);
}

function showHistory(h) {
  const rows = $("history-rows");
  rows.replaceChildren();
  for (const v of h.versions) {
    const tr = el("tr", { "data-version": v.version });
    const changed = v.diff.map((d) => d.key).join(", ") || "–";
    tr.append(el("td", {}, String(v.version)), el("td", {}, v.author),
              el("td", {}, new Date(v.created_unix_ms).toLocaleString()), el("td", {}, v.comment),
              el("td", {}, changed.length > 120 ? changed.slice(0, 117) + "…" : changed));
    const cell = el("td");
    if (v.version !== page.inForce?.version) {
      const b = el("button", { type: "button", class: "rollback" }, "Roll back to this");
      b.addEventListener("click", () => rollback(v.version));
      cell.append(b);
    }
    tr.append(cell);
    rows.append(tr);
  }
}

async function start() {
  try {
    showInForce(await api(BASE));
    showHistory(await api(BASE + "/versions?limit=50"));
    setStatus("version " + page.inForce.version + " in force");
  } catch (e) {
    setStatus(e.message, true);
  }
}

function candidate() {
  try {
    return JSON.parse($("candidate").value);
  } catch (e) {
    throw new Error("the candidate is not JSON: " + e.message);
  }
}

function showDiff(diff, stranded) {
  const rows = $("diff-rows");
  rows.replaceChildren();
  for (const d of diff) {
    const tr = el("tr", { "data-key": d.key });
    tr.append(el("td", {}, d.key), el("td", {}, JSON.stringify(d.from)), el("td", {}, JSON.stringify(d.to)));
    rows.append(tr);
  }
  $("diff").hidden = diff.length === 0;
  $("stranded").textContent = String(stranded.tickets);
  $("force-label").hidden = stranded.tickets === 0;
  $("force").checked = false;
}

// Checked (or replayed): the apply button shows for this text of the candidate.
function readyToApply(text) {
  page.checkedText = text;
  $("apply-form").hidden = false;
}

$("candidate").addEventListener("input", () => {
  if ($("candidate").value !== page.checkedText) $("apply-form").hidden = true;
});

$("check").addEventListener("click", async () => {
  const result = $("candidate-result");
  try {
    const r = await api(BASE + "/check", { method: "POST", body: JSON.stringify({ document: candidate() }) });
    const stranded = r.stranded ?? { tickets: 0 };
    showDiff(r.diff, stranded);
    result.className = "success";
    const effect = r.rebuild ? "rebuilds the buckets (" + r.rebuild_keys.join(", ") + ")"
                             : `${stranded.tickets} waiting tickets stranded`;
    result.textContent = r.diff.length ? `${r.diff.length} change(s); ${effect}`
                                       : "the same as the version this node runs";
    readyToApply($("candidate").value);
  } catch (e) {
    result.className = "error";
    result.textContent = e.message;
  }
});

const FIGURES = [
  ["tickets", (f) => fmt(f.tickets)],
  ["matched", (f) => fmt(100 * f.matched_share, 1) + "%"],
  ["expired", (f) => fmt(100 * f.expired_share, 1) + "%"],
  ["time to match p50", (f) => fmt(f.time_to_match_s.p50, 1) + " s"],
  ["time to match p95", (f) => fmt(f.time_to_match_s.p95, 1) + " s"],
  ["MMR spread (mean)", (f) => fmt(f.mmr_spread.mean)],
  ["worst RTT (mean)", (f) => fmt(f.worst_rtt_ms.mean) + " ms"],
];

$("dry-run").addEventListener("click", async () => {
  const result = $("candidate-result");
  result.className = "muted";
  result.textContent = "replaying…";
  try {
    const body = { document: candidate(), window_s: Number($("window").value) };
    const r = await api(BASE + "/dry-run", { method: "POST", body: JSON.stringify(body) });
    const rows = $("compare-rows");
    rows.replaceChildren();
    for (const [name, show] of FIGURES) {
      const tr = el("tr", { "data-figure": name });
      tr.append(el("th", {}, name), el("td", { class: "recorded" }, show(r.recorded.figures)),
                el("td", { class: "current" }, show(r.current.figures)),
                el("td", { class: "candidate" }, show(r.candidate.figures)));
      rows.append(tr);
    }
    $("compare-version").textContent = "version " + r.current.version;
    $("compare").hidden = false;
    result.className = "success";
    result.textContent = `${fmt(r.recording.tickets)} recorded tickets replayed twice in ${fmt(r.cpu_seconds, 2)} s of CPU`;
    readyToApply($("candidate").value);
  } catch (e) {
    result.className = "error";
    result.textContent = e.message;
  }
});

async function change(path, body) {
  const result = $("candidate-result");
  try {
    const r = await api(path, { method: "POST", body: JSON.stringify(body) });
    result.className = "success";
    const here = r.queues_changed !== undefined ? `${r.queues_changed} queue(s) here changed`
                                                : `${r.matchmakers_changed} matchmaker(s) here took it` +
                                                  (r.rebuild ? ", their buckets rebuilt" : "");
    result.textContent = r.unchanged ? "nothing changed" : `version ${r.version} in force; ${here}`;
    $("candidate").value = "";
    for (const id of ["apply-form", "compare", "diff"]) $(id).hidden = true;
    await start();
  } catch (e) {
    result.className = "error";
    result.textContent = e.message;
  }
}

$("apply").addEventListener("click", () => change(BASE, {
  document: candidate(), comment: $("comment").value, force: $("force").checked,
  base_version: page.inForce.version,
}));

function rollback(version) {
  change(BASE + "/rollback", { version, comment: "rollback from the dashboard", force: false });
}

start();
