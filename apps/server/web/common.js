// What both dashboard pages share: the token (kept in localStorage), API
// calls, element and number helpers, and the status line.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);

const tokenInput = $("token");
tokenInput.value = localStorage.getItem("mm-token") || "";
function onTokenChange(restart) {
  tokenInput.addEventListener("change", () => {
    localStorage.setItem("mm-token", tokenInput.value);
    restart();
  });
}

async function api(path, options = {}) {
  const headers = { "Content-Type": "application/json" };
  if (tokenInput.value) headers.Authorization = "Bearer " + tokenInput.value;
  const res = await fetch(path, { ...options, headers });
  const body = await res.json().catch(() => ({ error: "HTTP " + res.status }));
  if (!res.ok) throw new Error(body.error || "HTTP " + res.status);
  return body;
}

function el(tag, attrs = {}, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4))
                                   : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

const fmt = (x, digits = 0) => Number(x).toLocaleString(undefined, { maximumFractionDigits: digits });
const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : "never");

function setStatus(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.className = isError ? "error" : "muted";
}

