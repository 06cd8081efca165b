// VoiceOps console: a small single-page app over the public API. No build
// step, no framework. Every call carries the operator's key from
// sessionStorage (this tab only). Pages poll what changes (rule states
// every second), so a state change shows within about two seconds.
"use strict";

const KEY = "voiceops.key";
const ACCT = "voiceops.account";
const PROJ = "voiceops.project";
const POLL_MS = 1000;

const $main = document.getElementById("main");
const $nav = document.getElementById("nav");
const $status = document.getElementById("status");
let timers = [];
// The base host's URL (the base host: conversations, concurrency, handoff state)
// from /console/config.json: "" where it is this origin (the dev server),
// deployed its own API's URL, which the CSP's connect-src names.
let BASE = "";

// --- DOM and API helpers ---------------------------------------------------

// h builds an element: attributes (on* as listeners) and children (strings
// become text nodes: nothing from the API is ever parsed as HTML).
function h(tag, attrs, ...children) {
  const svg = ["svg", "path", "line", "rect", "text", "g", "polyline", "title"].includes(tag);
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

class APIError extends Error {
  constructor(status, body) {
    super((body && (body.message || body.error_message)) || "HTTP " + status);
    this.status = status;
    this.body = body;
  }
}

async function api(path, opts = {}) {
  const headers = { "x-api-key": sessionStorage.getItem(KEY) || "" };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch((opts.base ? BASE : "") + path, { method: opts.method || "GET", headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  const body = text ? JSON.parse(text) : null;
  if (!res.ok) throw new APIError(res.status, body);
  return body;
}

function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (Array.isArray(v)) v.forEach((x) => u.append(k, x));
    else if (v !== undefined && v !== null && v !== "") u.set(k, v);
  }
  const s = u.toString();
  return s ? "?" + s : "";
}

function errorText(err) {
  if (err instanceof APIError && err.body && err.body.errors && err.body.errors.length) {
    return err.message + ": " + err.body.errors.map((e) => e.field + " " + e.message).join("; ");
  }
  return err.message || String(err);
}

function every(ms, f) {
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try { await f(); } catch (e) { say(errorText(e)); } finally { busy = false; }
  };
  timers.push(setInterval(tick, ms));
}

function say(msg) { $status.textContent = msg; }
function badge(state) { return h("span", { class: "badge " + state, "data-state": state }, state); }
function fmtTime(s) { return s ? new Date(s).toISOString().replace("T", " ").slice(0, 19) + "Z" : "—"; }
function fmtVal(v) { return v === null || v === undefined ? "—" : String(v); }
function iso(d) { return new Date(d).toISOString(); }
function minute(d) { const t = new Date(d); t.setUTCSeconds(0, 0); return t; }

// --- charts (hand-written SVG) -----------------------------------------------

// chart draws lines of points {t: ms, v: number|null} over [from, to), a
// threshold line and shaded periods [[t0, t1], ...].
function chart({ lines = [], threshold = null, shades = [], from, to, width = 800, height = 220, spark = false }) {
  const pad = spark ? { l: 2, r: 2, t: 2, b: 2 } : { l: 40, r: 8, t: 8, b: 22 };
  let max = threshold !== null ? threshold : 0;
  for (const l of lines) for (const p of l.points) if (p.v !== null && p.v > max) max = p.v;
  max = max <= 0 ? 1 : max * 1.1;
  const x = (t) => pad.l + ((t - from) / (to - from)) * (width - pad.l - pad.r);
  const y = (v) => height - pad.b - (v / max) * (height - pad.t - pad.b);
  const svg = h("svg", { class: spark ? "spark" : "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": spark ? "metric sparkline" : "metric chart" });
  for (const [a, b] of shades) {
    const x0 = x(Math.max(a, from)), x1 = x(Math.min(b, to));
    if (x1 > x0) svg.append(h("rect", { class: "shade" + (spark ? "" : ""), x: x0, y: pad.t, width: x1 - x0, height: height - pad.t - pad.b }));
  }
  if (!spark) {
    svg.append(h("line", { class: "axis", x1: pad.l, y1: height - pad.b, x2: width - pad.r, y2: height - pad.b }));
    for (let i = 0; i <= 4; i++) {
      const v = (max / 1.1) * (i / 4);
      svg.append(h("text", { class: "tick", x: 2, y: y(v) + 3 }, Math.round(v)));
    }
    for (let i = 0; i <= 4; i++) {
      const t = from + ((to - from) * i) / 4;
      const label = new Date(t).toISOString().slice(to - from > 36e5 * 48 ? 5 : 11, to - from > 36e5 * 48 ? 16 : 16).replace("T", " ");
      svg.append(h("text", { class: "tick", x: Math.min(x(t), width - 60), y: height - 6 }, label));
    }
  }
  for (const l of lines) {
    let d = "";
    let pen = false;
    for (const p of l.points) {
      if (p.v === null) { pen = false; continue; }
      // A lone point draws as a dot (round caps on a tiny segment).
      d += (pen ? "L" : "M") + x(p.t).toFixed(1) + " " + y(p.v).toFixed(1) + (pen ? " " : " l0.1 0 ");
      pen = true;
    }
    if (d) svg.append(h("path", { class: "line " + (l.cls || ""), d }));
  }
  if (threshold !== null) svg.append(h("line", { class: "threshold", x1: pad.l, x2: width - pad.r, y1: y(threshold), y2: y(threshold) }));
  return svg;
}

// alertPeriods turns a history (newest first) into the periods in alert
// within [from, to).
function alertPeriods(history, from, to, currentState) {
  const periods = [];
  let end = currentState === "alert" ? to : null;
  for (const c of history) {
    const t = Date.parse(c.at);
    if (c.to_state === "alert" && end !== null) { periods.push([t, end]); end = null; }
    if (c.from_state === "alert") end = t;
  }
  if (end !== null) periods.push([from, end]);
  return periods;
}

// --- pages -------------------------------------------------------------------

const pages = [
  [/^#\/rules\/(ar_[A-Za-z0-9]+)$/, rulePage],
  [/^#\/rules$/, rulesPage],
  [/^#\/alerts$/, alertsPage],
  [/^#\/endpoints\/(whe_[A-Za-z0-9]+|[A-Za-z0-9_]+)$/, endpointPage],
  [/^#\/endpoints$/, endpointsPage],
  [/^#\/concurrency$/, concurrencyPage],
  [/^#\/conversations\/(conv_[A-Za-z0-9]+)$/, conversationPage],
  [/^#\/conversations$/, conversationsPage],
];

function route() {
  timers.forEach(clearInterval);
  timers = [];
  say("");
  $main.replaceChildren();
  if (!sessionStorage.getItem(KEY)) {
    $nav.hidden = true;
    return keyPage();
  }
  $nav.hidden = false;
  const hash = location.hash || "#/rules";
  for (const a of $nav.querySelectorAll("a")) {
    if (hash.startsWith(a.getAttribute("href"))) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  for (const [re, page] of pages) {
    const m = hash.match(re);
    if (m) {
      page(...m.slice(1)).catch((e) => $main.append(h("p", { class: "error" }, errorText(e))));
      return;
    }
  }
  location.hash = "#/rules";
}

function keyPage() {
  const input = h("input", { id: "key", name: "key", type: "password", autocomplete: "off", required: true, spellcheck: "false" });
  const err = h("p", { class: "error", role: "alert" });
  $main.append(
    h("h1", {}, "Sign in"),
    h("form", {
      class: "stack", onsubmit: async (e) => {
        e.preventDefault();
        sessionStorage.setItem(KEY, input.value.trim());
        try {
          await api("/v1/alert-rules");
          location.hash = "#/rules";
          route();
        } catch (x) {
          sessionStorage.removeItem(KEY);
          err.textContent = x.status === 401 || x.status === 403 ? "That key is not an account API key of this region." : errorText(x);
        }
      },
    },
      h("label", { for: "key" }, "Account API key", input),
      h("p", { class: "muted" }, "Kept in this tab only (sessionStorage); every call goes to the public API with it."),
      h("button", { class: "primary", type: "submit", id: "signin" }, "Sign in"), err),
  );
  input.focus();
}

async function rulesPage() {
  const body = h("tbody");
  $main.append(h("h1", {}, "Alert rules"),
    h("div", { class: "scroll" }, h("table", { id: "rules" },
      h("thead", {}, h("tr", {}, h("th", {}, "Rule"), h("th", {}, "State"), h("th", {}, "Value"), h("th", {}, "Condition"),
        h("th", { class: "hide-narrow" }, "Scope"), h("th", {}, "Last hour"))), body)));
  const sparks = {};
  const refreshSparks = async (rules) => {
    const to = minute(Date.now()).getTime() + 60e3, from = to - 60 * 60e3;
    for (const r of rules) {
      const s = await api("/v1/metrics" + q({ metric: r.metric, project_id: r.project_id, from: iso(from), to: iso(to), step: "1m" }));
      sparks[r.id] = chart({ spark: true, width: 120, height: 30, from, to, threshold: r.threshold_value,
        lines: [{ points: s.data.map((p) => ({ t: Date.parse(p.at), v: p.value })) }] });
    }
  };
  const draw = (rules) => {
    body.replaceChildren(...rules.map((r) => h("tr", { "data-rule": r.id },
      h("td", {}, h("a", { href: "#/rules/" + r.id }, r.name), r.enabled ? "" : h("span", { class: "muted" }, " (disabled)")),
      h("td", {}, badge(r.current_state)),
      h("td", {}, fmtVal(r.current_value)),
      h("td", {}, `${r.metric} ${r.operator} ${r.threshold_value} over ${r.window_duration}`),
      h("td", { class: "hide-narrow" }, r.project_id || "account"),
      h("td", {}, sparks[r.id] ? sparks[r.id].cloneNode(true) : ""))));
    if (!rules.length) body.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No rules yet.")));
  };
  let rules = (await api("/v1/alert-rules")).data;
  draw(rules);
  await refreshSparks(rules);
  draw(rules);
  every(POLL_MS, async () => {
    const next = (await api("/v1/alert-rules")).data;
    // A change of state or value redraws the sparklines too.
    const changed = next.map((r) => r.current_state + r.current_value).join() !== rules.map((r) => r.current_state + r.current_value).join();
    rules = next;
    if (changed) await refreshSparks(rules);
    draw(rules);
  });
  every(30000, async () => { await refreshSparks(rules); draw(rules); });
}

const RANGES = { "1h": 36e5, "6h": 6 * 36e5, "24h": 24 * 36e5, "7d": 7 * 24 * 36e5 };

async function rulePage(id) {
  let rule = await api("/v1/alert-rules/" + id);
  let range = "1h";
  let history = [];
  let preview = null;
  const head = h("div");
  const chartBox = h("div", { id: "rule-chart" });
  const histBody = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "Older changes");
  let cursor = null;
  const rangeSel = h("select", { id: "range", onchange: () => { range = rangeSel.value; preview = null; drawChart(); } },
    Object.keys(RANGES).map((r) => h("option", { value: r }, r)));
  const drawHead = () => head.replaceChildren(
    h("h1", {}, rule.name, " ", badge(rule.current_state)),
    h("dl", { class: "facts" },
      h("dt", {}, "Condition"), h("dd", {}, `${rule.metric} ${rule.operator} ${rule.threshold_value} over ${rule.window_duration}`),
      h("dt", {}, "Scope"), h("dd", {}, rule.project_id || "whole account"),
      h("dt", {}, "Value"), h("dd", { id: "rule-value" }, fmtVal(rule.current_value)),
      h("dt", {}, "Since"), h("dd", {}, fmtTime(rule.since)),
      h("dt", {}, "Last evaluated"), h("dd", {}, fmtTime(rule.last_evaluated_at)),
      h("dt", {}, "Enabled"), h("dd", {}, rule.enabled ? "yes" : "no")));
  const drawChart = async () => {
    const to = minute(Date.now()).getTime() + 60e3, from = to - RANGES[range];
    const s = await api("/v1/metrics" + q({ metric: rule.metric, project_id: rule.project_id, from: iso(from), to: iso(to) }));
    const lines = [{ points: s.data.map((p) => ({ t: Date.parse(p.at), v: p.value })) }];
    const shades = alertPeriods(history, from, to, rule.current_state);
    const svg = chart({ lines, threshold: rule.threshold_value, shades, from, to });
    if (preview) {
      const pts = preview.data.map((p) => ({ t: Date.parse(p.at), v: p.value }));
      svg.replaceWith(svg);
      const withPreview = chart({ lines: [...lines, { points: pts, cls: "alt" }], threshold: preview.threshold, shades, from, to });
      for (const per of previewPeriods(preview)) {
        const x = (t) => 40 + ((t - from) / (to - from)) * (800 - 48);
        withPreview.insertBefore(h("rect", { class: "shade preview", x: x(per[0]), y: 8, width: Math.max(1, x(per[1]) - x(per[0])), height: 190 }), withPreview.firstChild);
      }
      chartBox.replaceChildren(withPreview, legend(true), h("p", { id: "preview-summary" },
        `With threshold ${preview.threshold}: ${preview.transitions.filter((t) => t.to_state === "alert").length} alert(s) in the last ${preview.hours} h `,
        `(${preview.transitions.length} transition(s)); nothing was saved or sent.`));
      return;
    }
    chartBox.replaceChildren(svg, legend(false), h("p", { class: "muted" }, `step ${s.step}`));
  };
  const legend = (pv) => h("div", { class: "legend" },
    h("span", {}, h("span", { class: "key" }), " metric"), h("span", {}, h("span", { class: "key th" }), " threshold"),
    h("span", {}, h("span", { class: "key sh" }), " in alert"), pv ? h("span", {}, h("span", { class: "key pv" }), " preview") : "");
  const previewPeriods = (p) => {
    const out = [];
    let start = null;
    for (const pt of p.data) {
      const t = Date.parse(pt.at);
      if (pt.state === "alert" && start === null) start = t;
      if (pt.state !== "alert" && start !== null) { out.push([start, t]); start = null; }
    }
    if (start !== null) out.push([start, Date.parse(p.to)]);
    return out;
  };
  const drawHistory = () => histBody.replaceChildren(...history.map((c) => h("tr", {},
    h("td", {}, fmtTime(c.at)), h("td", {}, badge(c.from_state), " → ", badge(c.to_state)), h("td", {}, fmtVal(c.value)),
    h("td", { class: "hide-narrow" }, c.event_id || "—"),
    h("td", {}, c.deliveries.length ? c.deliveries.map((d) => h("div", {}, badge(d.status), " ", d.endpoint_id, " · ", d.attempts.length, " attempt(s)")) : "—"))));
  const loadHistory = async (more) => {
    const page = await api(`/v1/alert-rules/${id}/history` + q({ limit: 20, cursor: more ? cursor : null }));
    history = more ? history.concat(page.data) : page.data;
    cursor = page.cursor;
    drawHistory();
  };
  more.addEventListener("click", async () => { await loadHistory(true); more.hidden = !cursor; });

  const name = h("input", { id: "f-name", value: rule.name });
  const threshold = h("input", { id: "f-threshold", type: "number", min: 0, step: 1, value: rule.threshold_value });
  const op = h("select", { id: "f-operator" }, [">", ">=", "<", "<="].map((o) => h("option", { value: o, selected: o === rule.operator }, o)));
  const win = h("select", { id: "f-window" }, ["5m", "10m", "60m"].map((w) => h("option", { value: w, selected: w === rule.window_duration }, w)));
  const formMsg = h("p", { role: "status" });
  const toggle = h("button", { type: "button", id: "toggle" }, rule.enabled ? "Disable" : "Enable");
  toggle.addEventListener("click", async () => {
    try {
      rule = await api("/v1/alert-rules/" + id, { method: "PATCH", body: { enabled: !rule.enabled } });
      toggle.textContent = rule.enabled ? "Disable" : "Enable";
      drawHead();
      await loadHistory(false);
    } catch (e) { formMsg.textContent = errorText(e); }
  });
  const pvThreshold = h("input", { id: "p-threshold", type: "number", min: 0, step: 1, value: rule.threshold_value });
  const pvMsg = h("p", { role: "status" });

  $main.append(h("p", {}, h("a", { href: "#/rules" }, "← Rules")), head,
    h("form", { class: "row", onsubmit: (e) => e.preventDefault() }, h("label", { for: "range" }, "Range", rangeSel)),
    chartBox,
    h("h2", {}, "Preview a threshold"),
    h("form", {
      class: "row", onsubmit: async (e) => {
        e.preventDefault();
        const to = minute(Date.now()).getTime(), hours = Math.min(24, RANGES[range] / 36e5), from = to - hours * 36e5;
        try {
          const p = await api("/v1/alert-rules/preview", { method: "POST", body: {
            name: rule.name, project_id: rule.project_id, metric: rule.metric, operator: rule.operator,
            threshold_value: Number(pvThreshold.value), window_duration: rule.window_duration, from: iso(from), to: iso(to) } });
          preview = Object.assign(p, { threshold: Number(pvThreshold.value), hours });
          pvMsg.textContent = "";
          if (RANGES[range] > 24 * 36e5) { range = "24h"; rangeSel.value = "24h"; }
          await drawChart();
        } catch (x) { pvMsg.textContent = errorText(x); }
      },
    }, h("label", { for: "p-threshold" }, "Threshold", pvThreshold), h("button", { type: "submit", id: "preview" }, "Preview"), pvMsg),
    h("h2", {}, "History"),
    h("div", { class: "scroll" }, h("table", { id: "history" }, h("thead", {}, h("tr", {}, h("th", {}, "At"), h("th", {}, "Change"), h("th", {}, "Value"),
      h("th", { class: "hide-narrow" }, "Event"), h("th", {}, "Deliveries"))), histBody)), more,
    h("h2", {}, "Edit"),
    h("form", {
      class: "row", onsubmit: async (e) => {
        e.preventDefault();
        try {
          rule = await api("/v1/alert-rules/" + id, { method: "PATCH", body: { name: name.value, operator: op.value, threshold_value: Number(threshold.value), window_duration: win.value } });
          formMsg.textContent = "Saved.";
          drawHead();
          await drawChart();
        } catch (x) { formMsg.textContent = errorText(x); }
      },
    }, h("label", { for: "f-name" }, "Name", name), h("label", { for: "f-operator" }, "Operator", op), h("label", { for: "f-threshold" }, "Threshold", threshold),
      h("label", { for: "f-window" }, "Window", win), h("button", { type: "submit", class: "primary" }, "Save"), toggle), formMsg);
  drawHead();
  await loadHistory(false);
  more.hidden = !cursor;
  await drawChart();
  every(POLL_MS, async () => {
    const cur = await api("/v1/alert-rules/" + id);
    const changed = cur.current_state !== rule.current_state || cur.since !== rule.since;
    rule = cur;
    drawHead();
    if (changed) { await loadHistory(false); await drawChart(); }
  });
  every(60000, drawChart);
}

async function alertsPage() {
  const body = h("tbody");
  $main.append(h("h1", {}, "Active alerts"), h("div", { class: "scroll" }, h("table", { id: "alerts" },
    h("thead", {}, h("tr", {}, h("th", {}, "Rule"), h("th", {}, "Value"), h("th", {}, "Condition"), h("th", {}, "Since"))), body)));
  const draw = async () => {
    const a = (await api("/v1/alerts")).data;
    body.replaceChildren(...a.map((x) => h("tr", { "data-rule": x.alert_rule_id }, h("td", {}, h("a", { href: "#/rules/" + x.alert_rule_id }, x.name)),
      h("td", {}, fmtVal(x.current_value)), h("td", {}, `${x.metric} ${x.operator} ${x.threshold_value} over ${x.window_duration}`), h("td", {}, fmtTime(x.since)))));
    if (!a.length) body.append(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "Nothing is firing.")));
  };
  await draw();
  every(POLL_MS, draw);
}

async function endpointsPage() {
  const eps = (await api("/v1/webhook-endpoints")).data;
  $main.append(h("h1", {}, "Webhook endpoints"), h("div", { class: "scroll" }, h("table", { id: "endpoints" },
    h("thead", {}, h("tr", {}, h("th", {}, "Endpoint"), h("th", {}, "URL"), h("th", {}, "Events"), h("th", {}, "Enabled"))),
    h("tbody", {}, eps.map((e) => h("tr", {}, h("td", {}, h("a", { href: "#/endpoints/" + e.id }, e.name || e.id)),
      h("td", {}, e.url), h("td", {}, e.event_types.join(", ")), h("td", {}, e.enabled ? "yes" : "no")))))));
  if (!eps.length) $main.append(h("p", { class: "muted" }, "No endpoints yet."));
}

async function endpointPage(id) {
  const ep = await api("/v1/webhook-endpoints/" + id);
  const body = h("tbody");
  const msg = h("p", { role: "status", id: "endpoint-msg" });
  const secretBox = h("div");
  const draw = async () => {
    const ds = (await api(`/v1/webhook-endpoints/${id}/deliveries` + q({ limit: 50 }))).data;
    body.replaceChildren(...ds.map((d) => h("tr", { "data-delivery": d.id },
      h("td", {}, fmtTime(d.created_at)), h("td", {}, d.event_type, d.test ? " (test)" : ""), h("td", {}, badge(d.status)),
      h("td", { class: "attempts" }, d.attempts.map((a) => h("div", {}, `#${a.number} ${fmtTime(a.at)} → ${a.status_code === null ? (a.error || "no response") : a.status_code} in ${a.duration_ms} ms`))),
      h("td", {}, d.status === "pending" ? h("span", { class: "muted" }, "next " + fmtTime(d.next_attempt_at)) : h("button", {
        type: "button", class: "retry", onclick: async () => {
          try { await api(`/v1/webhook-endpoints/${id}/deliveries/${d.id}/retry`, { method: "POST" }); msg.textContent = "Retry queued."; await draw(); } catch (e) { msg.textContent = errorText(e); }
        },
      }, "Retry")))));
    if (!ds.length) body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No deliveries in the last 30 days.")));
  };
  $main.append(h("p", {}, h("a", { href: "#/endpoints" }, "← Webhooks")), h("h1", {}, ep.name || ep.id),
    h("dl", { class: "facts" }, h("dt", {}, "URL"), h("dd", {}, ep.url), h("dt", {}, "Events"), h("dd", {}, ep.event_types.join(", ")),
      h("dt", {}, "Enabled"), h("dd", {}, ep.enabled ? "yes" : "no")),
    h("form", { class: "row", onsubmit: (e) => e.preventDefault() },
      h("button", { type: "button", id: "send-test", onclick: async () => {
        try { const r = await api(`/v1/webhook-endpoints/${id}/test`, { method: "POST" }); msg.textContent = "Test event " + r.event_id + " sent."; await draw(); } catch (e) { msg.textContent = errorText(e); }
      } }, "Send test event"),
      h("button", { type: "button", id: "rotate", onclick: async () => {
        if (!window.confirm("Rotate the signing secret? The old one keeps signing for an hour.")) return;
        try {
          const r = await api(`/v1/webhook-endpoints/${id}/rotate-secret`, { method: "POST", body: { previous_secret_expires_in: 3600 } });
          secretBox.replaceChildren(h("p", {}, "New signing secret (shown once; copy it now):"), h("p", { class: "secret", id: "new-secret" }, r.signing_secret));
        } catch (e) { msg.textContent = errorText(e); }
      } }, "Rotate secret")),
    msg, secretBox, h("h2", {}, "Delivery log"),
    h("div", { class: "scroll" }, h("table", { id: "deliveries" }, h("thead", {}, h("tr", {}, h("th", {}, "Created"), h("th", {}, "Event"), h("th", {}, "Status"), h("th", {}, "Attempts"), h("th", {}, ""))), body)));
  await draw();
  every(2000, draw);
}

// The base host's pages: the base host paths name the account and project. With
// the dev server both hosts share this origin; see docs/console.md.
function scopeForm(onchange) {
  const acct = h("input", { id: "s-account", value: sessionStorage.getItem(ACCT) || "", placeholder: "acct_…", required: true });
  const proj = h("input", { id: "s-project", value: sessionStorage.getItem(PROJ) || "", placeholder: "proj_…", required: true });
  return h("form", {
    class: "row", onsubmit: (e) => {
      e.preventDefault();
      sessionStorage.setItem(ACCT, acct.value.trim());
      sessionStorage.setItem(PROJ, proj.value.trim());
      onchange();
    },
  }, h("label", { for: "s-account" }, "Account", acct), h("label", { for: "s-project" }, "Project", proj), h("button", { type: "submit", id: "s-show" }, "Show"));
}

function scopePath() {
  const a = sessionStorage.getItem(ACCT), p = sessionStorage.getItem(PROJ);
  return a && p ? `/${encodeURIComponent(a)}/${encodeURIComponent(p)}` : null;
}

async function concurrencyPage() {
  const box = h("div", { id: "concurrency" });
  const draw = async () => {
    const sp = scopePath();
    if (!sp) { box.replaceChildren(h("p", { class: "muted" }, "Name an account and a project.")); return; }
    const end = minute(Date.now()).getTime(), start = end - 7 * 24 * 36e5;
    try {
      const r = await api(`/v1${sp}/conversations/concurrency` + q({ start_time: iso(start), end_time: iso(end), slice_by: "variant" }), { base: true });
      const byVariant = {};
      for (const i of r.intervals) (byVariant[i.variant_name || i.variant_id || "all"] ||= []).push({ t: Date.parse(i.time), v: i.max_concurrent_conversations });
      const names = Object.keys(byVariant);
      box.replaceChildren(chart({ from: start, to: end, lines: names.map((n, i) => ({ points: byVariant[n], cls: "v" + (i % 5) })) }),
        h("div", { class: "legend" }, names.map((n, i) => h("span", {}, h("svg", { class: "spark", viewBox: "0 0 20 4", width: 20, height: 4 }, h("line", { class: "line v" + (i % 5), x1: 0, x2: 20, y1: 2, y2: 2 })), " ", n))));
    } catch (e) { box.replaceChildren(h("p", { class: "error" }, errorText(e))); }
  };
  $main.append(h("h1", {}, "Concurrent conversations, last 7 days, by variant"), scopeForm(draw), box);
  await draw();
}

async function conversationsPage() {
  const body = h("tbody");
  const nav = h("div", { class: "row" });
  const channel = h("select", { id: "c-channel" }, h("option", { value: "" }, "any"), ["voice", "chat", "sms"].map((c) => h("option", { value: c }, c)));
  const query = h("input", { id: "c-query", placeholder: "transcript contains…" });
  const inProgress = h("select", { id: "c-progress" }, h("option", { value: "" }, "any"), h("option", { value: "true" }, "in progress"), h("option", { value: "false" }, "ended"));
  let cursors = [null];
  const load = async () => {
    const sp = scopePath();
    if (!sp) { body.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "Name an account and a project."))); return; }
    const end = Date.now(), start = end - 30 * 24 * 36e5;
    const params = { start_time: iso(start), end_time: iso(end), limit: 20, channel: channel.value || null, in_progress: inProgress.value || null, cursor: cursors[cursors.length - 1] };
    if (query.value) Object.assign(params, { query_type: "transcript", query: query.value });
    const r = await api(`/v3${sp}/conversations` + q(params), { base: true });
    body.replaceChildren(...r.conversations.map((c) => h("tr", {}, h("td", {}, h("a", { href: "#/conversations/" + c.id }, fmtTime(c.started_at))),
      h("td", {}, c.channel), h("td", {}, c.in_progress ? "in progress" : "ended"), h("td", {}, c.num_turns), h("td", {}, c.handoff ? "handoff → " + c.handoff_destination : "—"))));
    if (!r.conversations.length) body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No conversations.")));
    nav.replaceChildren(
      cursors.length > 1 ? h("button", { type: "button", onclick: () => { cursors.pop(); load(); } }, "Previous page") : "",
      r.cursor ? h("button", { type: "button", id: "next-page", onclick: () => { cursors.push(r.cursor); load(); } }, "Next page") : "");
  };
  const filters = h("form", { class: "row", onsubmit: (e) => { e.preventDefault(); cursors = [null]; load(); } },
    h("label", { for: "c-channel" }, "Channel", channel), h("label", { for: "c-progress" }, "State", inProgress),
    h("label", { for: "c-query" }, "Transcript", query), h("button", { type: "submit" }, "Filter"));
  $main.append(h("h1", {}, "Conversations (last 30 days)"), scopeForm(() => { cursors = [null]; load(); }), filters,
    h("div", { class: "scroll" }, h("table", { id: "conversations" }, h("thead", {}, h("tr", {}, h("th", {}, "Started"), h("th", {}, "Channel"), h("th", {}, "State"), h("th", {}, "Turns"), h("th", {}, "Handoff"))), body)), nav);
  await load();
}

async function conversationPage(id) {
  const sp = scopePath();
  if (!sp) { location.hash = "#/conversations"; return; }
  // The list filtered to this conversation's start finds it with its turns.
  const started = Number(id.slice(5, 18));
  const r = await api(`/v3${sp}/conversations` + q({ start_time: iso(started), end_time: iso(started + 1), limit: 50 }), { base: true });
  const c = r.conversations.find((x) => x.id === id);
  if (!c) { $main.append(h("p", { class: "error" }, "Conversation not found in this project.")); return; }
  $main.append(h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")), h("h1", {}, "Conversation ", c.id),
    h("dl", { class: "facts" }, h("dt", {}, "Started"), h("dd", {}, fmtTime(c.started_at)), h("dt", {}, "Channel"), h("dd", {}, c.channel),
      h("dt", {}, "Variant"), h("dd", {}, c.variant_name || c.variant_id || "—"), h("dt", {}, "State"), h("dd", {}, c.in_progress ? "in progress" : "ended"),
      h("dt", {}, "Handoff"), h("dd", { id: "handoff" }, c.handoff ? `to ${c.handoff_destination} (${c.handoff_reason || "no reason"})` : "none")),
    h("h2", {}, "Transcript"),
    h("div", { id: "transcript" }, (c.turns || []).map((t) => [
      t.user_input || t.user_input_dtmf ? h("div", { class: "turn user" }, h("span", { class: "muted" }, fmtTime(t.user_input_datetime), " caller: "), t.user_input || "DTMF " + t.user_input_dtmf) : "",
      h("div", { class: "turn agent" }, h("span", { class: "muted" }, fmtTime(t.agent_response_datetime), " agent: "), t.agent_response)])));
  if (c.handoff) {
    const hs = await api(`/v1${sp}/handoff_state` + q({ id: c.id }), { base: true });
    $main.append(h("h2", {}, "Handoff state"), h("pre", { id: "handoff-state" }, JSON.stringify(hs.data, null, 2)));
  }
}

document.getElementById("signout").addEventListener("click", () => {
  sessionStorage.clear();
  location.hash = "";
  route();
});
window.addEventListener("hashchange", route);
fetch("/console/config.json")
  .then((res) => (res.ok ? res.json() : Promise.reject(new Error("HTTP " + res.status))))
  .then((c) => { BASE = c.base_url || ""; route(); })
  .catch((e) => { route(); say("Cannot read the console's configuration (" + e.message + "): the base host's pages may fail."); });
