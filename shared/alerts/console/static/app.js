// VoiceOps console: a small single-page app over the public API. No build
// step, no framework. Every call carries the operator's key from
// sessionStorage (this tab only). Pages poll what changes (rule states
// every second), so a state change shows within about two seconds.
"use strict";

const KEY = "voiceops.key";
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
// fmtTime shows an instant in the browser's local time, its UTC time on hover.
function fmtTime(s) {
  if (!s) return "—";
  const d = new Date(s);
  const p = (n) => String(n).padStart(2, "0");
  const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  return h("time", { datetime: d.toISOString(), title: d.toISOString().replace("T", " ").slice(0, 19) + " UTC" }, local);
}
// fmtFor is a duration: "45 s", "12 min 3 s", "2 h 5 min", "3 d 4 h".
function fmtFor(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return s + " s";
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
function fmtVal(v) { return v === null || v === undefined ? "—" : String(v); }
function iso(d) { return new Date(d).toISOString(); }
function minute(d) { const t = new Date(d); t.setUTCSeconds(0, 0); return t; }

// The key's account and projects (GET /v1/account), read once a sign-in.
let ACCOUNT = null;
async function account() {
  if (!ACCOUNT) ACCOUNT = await api("/v1/account");
  return ACCOUNT;
}
function projectName(id) {
  if (!id) return "whole account";
  const p = ACCOUNT && ACCOUNT.projects.find((x) => x.id === id);
  return p && p.name !== p.id ? `${p.name} (${p.id})` : id;
}

// --- forms -------------------------------------------------------------------

// showErrors puts each of the API's field errors next to the input it names
// (data-field on the input's label; "headers.X-Y" goes to "headers"), and
// the rest, with the message, in the form's general line.
function showErrors(form, general, err) {
  for (const el of form.querySelectorAll(".field-error")) el.remove();
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  general.textContent = "";
  if (!err) return;
  const rest = [];
  const fields = err instanceof APIError && err.body && err.body.errors ? err.body.errors : [];
  for (const fe of fields) {
    const name = fe.field.split(/[.[]/)[0];
    const label = form.querySelector(`[data-field="${name}"]`);
    if (!label) { rest.push(fe.field + " " + fe.message); continue; }
    const input = label.querySelector("input, select, textarea");
    if (input) input.setAttribute("aria-invalid", "true");
    label.append(h("span", { class: "field-error", "data-error-for": name }, (fe.field !== name ? fe.field + ": " : "") + fe.message));
  }
  general.textContent = err.message + (rest.length ? ": " + rest.join("; ") : "");
}

function field(name, text, input) { return h("label", { "data-field": name }, text, input); }
function select(id, options, value) {
  return h("select", { id }, options.map(([v, t]) => h("option", { value: v, selected: v === value }, t)));
}
const METRICS = ["turn_latency_p50", "turn_latency_p95", "api_errors", "function_errors", "call_crashes", "call_volume"];
const OPERATORS = [">", ">=", "<", "<="];
const WINDOWS = ["5m", "10m", "60m"];
const STATES = ["ok", "alert", "no_data"];

// --- charts (hand-written SVG) -----------------------------------------------

// niceTicks are 0 and multiples of a 1, 2 or 5 x 10^n step up to max, with
// the decimals the step needs, so no two labels read the same.
function niceTicks(max, count = 4) {
  const raw = max / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= raw);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const ticks = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push({ v, label: v.toFixed(decimals) });
  return { ticks, top: ticks[ticks.length - 1].v };
}

// chartWidth is the width the chart is drawn at: the page's, so one SVG
// unit is one CSS pixel and its text keeps its size on a phone.
function chartWidth() { return Math.max(280, Math.min(1168, ($main.clientWidth || 800) - 34)); }

// chart draws lines of points {t: ms, v: number|null} over [from, to), a
// threshold line and shaded periods [[t0, t1], ...]; svg.xOf maps a time.
function chart({ lines = [], threshold = null, shades = [], from, to, width = chartWidth(), height = 220, spark = false }) {
  const pad = spark ? { l: 2, r: 2, t: 2, b: 2 } : { l: 44, r: 8, t: 10, b: 24 };
  let max = threshold !== null ? threshold : 0;
  for (const l of lines) for (const p of l.points) if (p.v !== null && p.v > max) max = p.v;
  max = max <= 0 ? 1 : max;
  const axis = spark ? null : niceTicks(max);
  const top = spark ? max * 1.1 : Math.max(axis.top, max);
  const x = (t) => pad.l + ((t - from) / (to - from)) * (width - pad.l - pad.r);
  const y = (v) => height - pad.b - (v / top) * (height - pad.t - pad.b);
  const svg = h("svg", { class: spark ? "spark" : "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": spark ? "metric sparkline" : "metric chart" });
  for (const [a, b] of shades) {
    const x0 = x(Math.max(a, from)), x1 = x(Math.min(b, to));
    if (x1 > x0) svg.append(h("rect", { class: "shade", x: x0, y: pad.t, width: x1 - x0, height: height - pad.t - pad.b }));
  }
  if (!spark) {
    svg.append(h("line", { class: "axis", x1: pad.l, y1: height - pad.b, x2: width - pad.r, y2: height - pad.b }));
    for (const tk of axis.ticks) svg.append(h("text", { class: "tick y", x: pad.l - 4, y: y(tk.v) + 4, "text-anchor": "end" }, tk.label));
    const n = width < 500 ? 2 : 4;
    for (let i = 0; i <= n; i++) {
      const t = from + ((to - from) * i) / n;
      const d = new Date(t);
      const p = (k) => String(k).padStart(2, "0");
      const label = (to - from > 36e5 * 48 ? `${p(d.getMonth() + 1)}-${p(d.getDate())} ` : "") + `${p(d.getHours())}:${p(d.getMinutes())}`;
      svg.append(h("text", { class: "tick x", x: x(t), y: height - 6, "text-anchor": i === 0 ? "start" : i === n ? "end" : "middle" }, label));
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
  svg.xOf = x;
  svg.plotTop = pad.t;
  svg.plotHeight = height - pad.t - pad.b;
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
  [/^#\/rules\/new$/, newRulePage],
  [/^#\/rules\/(ar_[A-Za-z0-9]+)$/, rulePage],
  [/^#\/rules$/, rulesPage],
  [/^#\/alerts$/, alertsPage],
  [/^#\/silences$/, silencesPage],
  [/^#\/endpoints\/new$/, newEndpointPage],
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
      account().then(() => page(...m.slice(1))).catch((e) => $main.append(h("p", { class: "error" }, errorText(e))));
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
        ACCOUNT = null;
        try {
          await account();
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
  // Filters apply at once, in the page: the list is at most 10 rules.
  const search = h("input", { id: "r-search", type: "search", placeholder: "name contains…" });
  const stateSel = select("r-state", [["", "any"], ...STATES.map((x) => [x, x])], "");
  const metricSel = select("r-metric", [["", "any"], ...METRICS.map((x) => [x, x])], "");
  const projectSel = select("r-project", [["", "any"], ["-", "whole account"], ...ACCOUNT.projects.map((p) => [p.id, projectName(p.id)])], "");
  const shown = h("span", { class: "muted", id: "r-count" });
  $main.append(h("div", { class: "title-row" }, h("h1", {}, "Alert rules"), h("a", { class: "button primary", href: "#/rules/new", id: "new-rule" }, "New rule")),
    h("form", { class: "row filters", role: "search", onsubmit: (e) => e.preventDefault(), oninput: () => draw(rules) },
      h("label", { for: "r-search" }, "Name", search), h("label", { for: "r-state" }, "State", stateSel),
      h("label", { for: "r-metric" }, "Metric", metricSel), h("label", { for: "r-project" }, "Project", projectSel), shown),
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
  const matches = (r) => (!search.value || r.name.toLowerCase().includes(search.value.trim().toLowerCase())) &&
    (!stateSel.value || r.current_state === stateSel.value) && (!metricSel.value || r.metric === metricSel.value) &&
    (!projectSel.value || (projectSel.value === "-" ? !r.project_id : r.project_id === projectSel.value));
  const draw = (all) => {
    const rules = all.filter(matches);
    shown.textContent = `${rules.length} of ${all.length}`;
    body.replaceChildren(...rules.map((r) => h("tr", { "data-rule": r.id },
      h("td", {}, h("a", { href: "#/rules/" + r.id }, r.name), r.enabled ? "" : h("span", { class: "muted" }, " (disabled)")),
      h("td", {}, badge(r.current_state)),
      h("td", {}, fmtVal(r.current_value)),
      h("td", {}, `${r.metric} ${r.operator} ${r.threshold_value} over ${r.window_duration}`),
      h("td", { class: "hide-narrow" }, projectName(r.project_id)),
      h("td", {}, sparks[r.id] ? sparks[r.id].cloneNode(true) : ""))));
    if (!rules.length) body.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, all.length ? "No rule matches the filters." : "No rules yet.")));
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

// ruleForm creates a rule (rule null) or edits one (PATCH of the fields
// changed); the API's field errors show next to their fields.
function ruleForm(rule, onSaved) {
  const r = rule || { name: "", project_id: null, metric: "api_errors", operator: ">=", threshold_value: 1, window_duration: "5m", enabled: true };
  const name = h("input", { id: "f-name", value: r.name, maxlength: 300 });
  const project = select("f-project", [["", "whole account"], ...ACCOUNT.projects.map((p) => [p.id, projectName(p.id)])], r.project_id || "");
  const metric = select("f-metric", METRICS.map((x) => [x, x]), r.metric);
  const op = select("f-operator", OPERATORS.map((x) => [x, x]), r.operator);
  const threshold = h("input", { id: "f-threshold", type: "number", step: 1, value: r.threshold_value });
  const win = select("f-window", WINDOWS.map((x) => [x, x]), r.window_duration);
  const enabled = h("input", { id: "f-enabled", type: "checkbox", checked: r.enabled });
  const msg = h("p", { class: "error", role: "status", id: "rule-form-msg" });
  const form = h("form", {
    class: "grid-form", id: "rule-form", novalidate: true, onsubmit: async (e) => {
      e.preventDefault();
      const next = { name: name.value, project_id: project.value || null, metric: metric.value, operator: op.value,
        threshold_value: threshold.value === "" ? null : Number(threshold.value), window_duration: win.value, enabled: enabled.checked };
      const body = {};
      for (const [k, v] of Object.entries(next)) if (!rule || rule[k] !== v) body[k] = v;
      try {
        const saved = rule ? await api("/v1/alert-rules/" + rule.id, { method: "PATCH", body }) : await api("/v1/alert-rules", { method: "POST", body });
        showErrors(form, msg, null);
        await onSaved(saved);
      } catch (x) { showErrors(form, msg, x); }
    },
  }, field("name", "Name", name), field("project_id", "Scope", project), field("metric", "Metric", metric), field("operator", "Operator", op),
    field("threshold_value", "Threshold", threshold), field("window_duration", "Window", win),
    h("label", { "data-field": "enabled", class: "check" }, enabled, " Enabled"),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", id: "rule-save" }, rule ? "Save" : "Create rule")), msg);
  return form;
}

async function newRulePage() {
  $main.append(h("p", {}, h("a", { href: "#/rules" }, "← Rules")), h("h1", {}, "New alert rule"),
    ruleForm(null, (r) => { location.hash = "#/rules/" + r.id; }));
}

// silenceForm silences one rule from now: 1 h, 4 h, or until a chosen time.
function silenceForm(rule, onDone) {
  const until = h("input", { type: "datetime-local", class: "s-until", "aria-label": "Silence until" });
  const msg = h("span", { class: "error", role: "status" });
  const make = async (ends) => {
    try {
      await api("/v1/silences", { method: "POST", body: { matchers: [{ name: "rule_id", value: rule.id }], ends_at: iso(ends), comment: "from the console: " + rule.name } });
      msg.textContent = "";
      if (onDone) await onDone();
      say(`Silenced ${rule.name} until ${new Date(ends).toLocaleString()}.`);
    } catch (x) { msg.textContent = errorText(x); }
  };
  return h("form", { class: "row silence", "data-silence-rule": rule.id, onsubmit: (e) => { e.preventDefault(); if (until.value) make(new Date(until.value).getTime()); else msg.textContent = "Pick an end time."; } },
    h("span", { class: "muted" }, "Silence:"),
    h("button", { type: "button", class: "s-1h", onclick: () => make(Date.now() + 36e5) }, "1 h"),
    h("button", { type: "button", class: "s-4h", onclick: () => make(Date.now() + 4 * 36e5) }, "4 h"),
    until, h("button", { type: "submit", class: "s-custom" }, "Until"), msg);
}

const RANGES = { "1h": 36e5, "6h": 6 * 36e5, "24h": 24 * 36e5, "7d": 7 * 24 * 36e5 };

async function rulePage(id) {
  let rule = await api("/v1/alert-rules/" + id);
  // History names endpoints, not IDs: the account's endpoints, by ID.
  const endpointNames = {};
  for (const e of (await api("/v1/webhook-endpoints")).data) endpointNames[e.id] = e.name || e.id;
  let range = "1h";
  let history = [];
  let preview = null;
  const head = h("div");
  const silenceBox = h("div", { id: "rule-silence" });
  const chartBox = h("div", { id: "rule-chart" });
  const histBody = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "Older changes");
  let cursor = null;
  const rangeSel = h("select", { id: "range", onchange: () => { range = rangeSel.value; preview = null; drawChart(); } },
    Object.keys(RANGES).map((r) => h("option", { value: r }, r)));
  const drawHead = () => {
    head.replaceChildren(
      h("h1", {}, rule.name, " ", badge(rule.current_state)),
      h("dl", { class: "facts" },
        h("dt", {}, "Condition"), h("dd", {}, `${rule.metric} ${rule.operator} ${rule.threshold_value} over ${rule.window_duration}`),
        h("dt", {}, "Scope"), h("dd", {}, projectName(rule.project_id)),
        h("dt", {}, "Value"), h("dd", { id: "rule-value" }, fmtVal(rule.current_value)),
        h("dt", {}, "Since"), h("dd", {}, fmtTime(rule.since), rule.since ? ` (${fmtFor(Date.now() - Date.parse(rule.since))})` : ""),
        h("dt", {}, "Last evaluated"), h("dd", {}, fmtTime(rule.last_evaluated_at)),
        h("dt", {}, "Enabled"), h("dd", {}, rule.enabled ? "yes" : "no")));
    if (rule.current_state === "alert") { if (!silenceBox.firstChild) silenceBox.append(silenceForm(rule)); } else silenceBox.replaceChildren();
  };
  const drawChart = async () => {
    const to = minute(Date.now()).getTime() + 60e3, from = to - RANGES[range];
    const s = await api("/v1/metrics" + q({ metric: rule.metric, project_id: rule.project_id, from: iso(from), to: iso(to) }));
    const lines = [{ points: s.data.map((p) => ({ t: Date.parse(p.at), v: p.value })) }];
    const shades = alertPeriods(history, from, to, rule.current_state);
    if (preview) {
      const pts = preview.data.map((p) => ({ t: Date.parse(p.at), v: p.value }));
      const svg = chart({ lines: [...lines, { points: pts, cls: "alt" }], threshold: preview.threshold, shades, from, to });
      for (const per of previewPeriods(preview)) {
        const x0 = svg.xOf(per[0]);
        svg.insertBefore(h("rect", { class: "shade preview", x: x0, y: svg.plotTop, width: Math.max(1, svg.xOf(per[1]) - x0), height: svg.plotHeight }), svg.firstChild);
      }
      chartBox.replaceChildren(svg, legend(true), h("p", { id: "preview-summary" },
        `With threshold ${preview.threshold}: ${preview.transitions.filter((t) => t.to_state === "alert").length} alert(s) in the last ${preview.hours} h `,
        `(${preview.transitions.length} transition(s)); nothing was saved or sent.`));
      return;
    }
    chartBox.replaceChildren(chart({ lines, threshold: rule.threshold_value, shades, from, to }), legend(false), h("p", { class: "muted" }, `step ${s.step}`));
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
    h("td", {}, fmtTime(c.at)), h("td", {}, badge(c.from_state), " → ", badge(c.to_state), c.silenced ? h("span", { class: "muted" }, " (silenced)") : ""), h("td", {}, fmtVal(c.value)),
    h("td", { class: "hide-narrow" }, c.event_id || "—"),
    h("td", {}, c.deliveries.length ? c.deliveries.map((d) => h("div", { class: "hist-delivery" }, badge(d.status), " ",
      h("a", { href: "#/endpoints/" + d.endpoint_id, title: d.endpoint_id }, endpointNames[d.endpoint_id] || d.endpoint_id), " · ", d.attempts.length, " attempt(s)")) : "—"))));
  const loadHistory = async (more) => {
    const page = await api(`/v1/alert-rules/${id}/history` + q({ limit: 20, cursor: more ? cursor : null }));
    history = more ? history.concat(page.data) : page.data;
    cursor = page.cursor;
    drawHistory();
  };
  more.addEventListener("click", async () => { await loadHistory(true); more.hidden = !cursor; });

  const pvThreshold = h("input", { id: "p-threshold", type: "number", min: 0, step: 1, value: rule.threshold_value });
  const pvMsg = h("p", { role: "status" });
  const del = h("button", { type: "button", id: "rule-delete", class: "danger", onclick: async () => {
    if (!window.confirm(`Delete the rule "${rule.name}"?`)) return;
    try { await api("/v1/alert-rules/" + id, { method: "DELETE" }); location.hash = "#/rules"; } catch (x) { say(errorText(x)); }
  } }, "Delete rule");

  $main.append(h("p", {}, h("a", { href: "#/rules" }, "← Rules")), head, silenceBox,
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
    ruleForm(rule, async (saved) => { rule = saved; say("Saved."); drawHead(); await loadHistory(false); await drawChart(); }),
    h("p", {}, del));
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
    h("thead", {}, h("tr", {}, h("th", {}, "Rule"), h("th", {}, "Value"), h("th", { class: "hide-narrow" }, "Condition"), h("th", {}, "Firing for"), h("th", {}, "Silence"))), body)));
  let shown = "";
  const draw = async () => {
    const a = (await api("/v1/alerts")).data;
    // Rows are rebuilt only when the alerts change: a silence form being
    // filled in survives the poll; "firing for" ticks in place.
    const key = a.map((x) => x.alert_rule_id + x.since + x.current_value).join();
    if (key !== shown) {
      shown = key;
      body.replaceChildren(...a.map((x) => h("tr", { "data-rule": x.alert_rule_id }, h("td", {}, h("a", { href: "#/rules/" + x.alert_rule_id }, x.name)),
        h("td", {}, fmtVal(x.current_value)), h("td", { class: "hide-narrow" }, `${x.metric} ${x.operator} ${x.threshold_value} over ${x.window_duration}`),
        h("td", {}, h("span", { class: "firing-for", "data-since": x.since || "" }), h("br"), h("span", { class: "muted" }, "since ", fmtTime(x.since))),
        h("td", {}, silenceForm({ id: x.alert_rule_id, name: x.name })))));
      if (!a.length) body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "Nothing is firing.")));
    }
    for (const el of body.querySelectorAll(".firing-for")) el.textContent = el.dataset.since ? fmtFor(Date.now() - Date.parse(el.dataset.since)) : "—";
  };
  await draw();
  every(POLL_MS, draw);
}

// silenceState is where a silence stands now.
function silenceState(s) {
  const now = Date.now();
  if (Date.parse(s.ends_at) <= now) return "ended";
  return Date.parse(s.starts_at) > now ? "scheduled" : "active";
}

async function silencesPage() {
  const rules = {};
  for (const r of (await api("/v1/alert-rules")).data) rules[r.id] = r.name;
  const active = h("tbody"), past = h("tbody");
  const matcherText = (m) => m.name === "rule_id" ? h("span", {}, "rule ", h("a", { href: "#/rules/" + m.value }, rules[m.value] || m.value))
    : m.name === "project_id" ? "project " + projectName(m.value) : m.name + " " + m.value;
  const row = (s) => h("tr", { "data-silence": s.id },
    h("td", {}, s.matchers.length ? s.matchers.map((m, i) => [i ? ", " : "", matcherText(m)]) : "every rule"),
    h("td", {}, badge(silenceState(s))), h("td", {}, fmtTime(s.starts_at)), h("td", {}, fmtTime(s.ends_at)),
    h("td", { class: "hide-narrow" }, s.comment || "—"),
    h("td", {}, silenceState(s) === "ended" ? "" : h("button", { type: "button", class: "end", onclick: async () => {
      try { await api("/v1/silences/" + s.id, { method: "DELETE" }); say("Silence ended."); await draw(); } catch (x) { say(errorText(x)); }
    } }, "End")));
  const head = () => h("thead", {}, h("tr", {}, h("th", {}, "Covers"), h("th", {}, "State"), h("th", {}, "Starts"), h("th", {}, "Ends"), h("th", { class: "hide-narrow" }, "Comment"), h("th", {}, "")));
  const draw = async () => {
    const all = (await api("/v1/silences")).data.slice().reverse();
    const now = all.filter((s) => silenceState(s) !== "ended"), then = all.filter((s) => silenceState(s) === "ended");
    active.replaceChildren(...now.map(row));
    if (!now.length) active.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No silence in effect.")));
    past.replaceChildren(...then.map(row));
    if (!then.length) past.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "None in the last 30 days.")));
  };
  $main.append(h("h1", {}, "Silences"),
    h("p", { class: "muted" }, "A silence holds back a rule's notifications; the rule is still evaluated. Silence a firing rule from Active alerts or its page."),
    h("h2", {}, "In effect or scheduled"), h("div", { class: "scroll" }, h("table", { id: "silences-active" }, head(), active)),
    h("h2", {}, "Ended (last 30 days)"), h("div", { class: "scroll" }, h("table", { id: "silences-past" }, head(), past)));
  await draw();
  every(5000, draw);
}

function endpointTarget(e) { return e.kind === "pagerduty" ? "PagerDuty routing key " + e.routing_key : e.url; }

async function endpointsPage() {
  const eps = (await api("/v1/webhook-endpoints")).data;
  $main.append(h("div", { class: "title-row" }, h("h1", {}, "Webhook endpoints"), h("a", { class: "button primary", href: "#/endpoints/new", id: "new-endpoint" }, "New endpoint")),
    h("div", { class: "scroll" }, h("table", { id: "endpoints" },
      h("thead", {}, h("tr", {}, h("th", {}, "Endpoint"), h("th", {}, "Kind"), h("th", {}, "Target"), h("th", { class: "hide-narrow" }, "Events"), h("th", {}, "Enabled"))),
      h("tbody", {}, eps.map((e) => h("tr", { "data-endpoint": e.id }, h("td", {}, h("a", { href: "#/endpoints/" + e.id }, e.name || e.id)),
        h("td", { class: "kind" }, e.kind || "webhook"), h("td", { class: "url" }, endpointTarget(e)), h("td", { class: "hide-narrow" }, e.event_types.join(", ")),
        h("td", {}, e.enabled ? "yes" : "no")))))));
  if (!eps.length) $main.append(h("p", { class: "muted" }, "No endpoints yet."));
}

// endpointForm creates an endpoint (ep null) or edits one; the kind decides
// the fields: a URL and optional headers (webhook), a Slack URL, or a
// PagerDuty routing key. The kind is fixed once created.
function endpointForm(ep, onSaved) {
  const e = ep || { name: "", kind: "webhook", url: "", routing_key: "", headers: {}, event_types: ["alerts.triggered", "alerts.resolved"], timeout_ms: 5000, enabled: true };
  const kind = e.kind || "webhook";
  const kindSel = select("e-kind", [["webhook", "Webhook (signed JSON)"], ["slack", "Slack incoming webhook"], ["pagerduty", "PagerDuty Events v2"]], kind);
  if (ep) kindSel.disabled = true;
  const name = h("input", { id: "e-name", value: e.name });
  const url = h("input", { id: "e-url", type: "url", value: e.url || "", placeholder: "https://…" });
  const routingKey = h("input", { id: "e-routing-key", value: e.routing_key || "", placeholder: "32 letters and digits", autocomplete: "off" });
  const headers = h("textarea", { id: "e-headers", rows: 3, placeholder: "X-Team: payments" });
  headers.value = Object.entries(e.headers || {}).map(([k, v]) => `${k}: ${v}`).join("\n");
  const types = ["alerts.triggered", "alerts.resolved"].map((t) => h("label", { class: "check" }, h("input", { type: "checkbox", class: "e-type", value: t, checked: e.event_types.includes(t) }), " " + t));
  const timeout = h("input", { id: "e-timeout", type: "number", step: 1, value: e.timeout_ms });
  const enabled = h("input", { id: "e-enabled", type: "checkbox", checked: e.enabled });
  const urlField = field("url", "URL", url), keyField = field("routing_key", "Routing key", routingKey), headersField = field("headers", "Headers (one “Name: value” a line)", headers);
  const msg = h("p", { class: "error", role: "status", id: "endpoint-form-msg" });
  const secret = h("div");
  const fit = () => {
    const k = kindSel.value;
    urlField.hidden = k === "pagerduty";
    keyField.hidden = k !== "pagerduty";
    headersField.hidden = k !== "webhook";
    url.placeholder = k === "slack" ? "https://hooks.slack.com/services/…" : "https://…";
  };
  kindSel.addEventListener("change", fit);
  fit();
  const form = h("form", {
    class: "grid-form", id: "endpoint-form", novalidate: true, onsubmit: async (ev) => {
      ev.preventDefault();
      const k = kindSel.value;
      const body = { name: name.value, event_types: types.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value),
        timeout_ms: timeout.value === "" ? null : Number(timeout.value), enabled: enabled.checked };
      if (!ep) body.kind = k;
      if (k === "pagerduty") body.routing_key = routingKey.value.trim(); else body.url = url.value.trim();
      if (k === "webhook") {
        body.headers = {};
        for (const line of headers.value.split("\n")) {
          if (!line.trim()) continue;
          const i = line.indexOf(":");
          body.headers[(i < 0 ? line : line.slice(0, i)).trim()] = i < 0 ? "" : line.slice(i + 1).trim();
        }
      }
      try {
        const saved = ep ? await api("/v1/webhook-endpoints/" + ep.id, { method: "PATCH", body }) : await api("/v1/webhook-endpoints", { method: "POST", body });
        showErrors(form, msg, null);
        if (saved.signing_secret) {
          secret.replaceChildren(h("p", {}, "Signing secret (shown once; copy it now):"), h("p", { class: "secret", id: "new-secret" }, saved.signing_secret),
            h("p", {}, h("a", { href: "#/endpoints/" + saved.id, id: "to-endpoint" }, "Go to " + saved.name)));
          return;
        }
        await onSaved(saved);
      } catch (x) { showErrors(form, msg, x); }
    },
  }, field("kind", "Kind", kindSel), field("name", "Name", name), urlField, keyField, headersField,
    h("fieldset", { "data-field": "event_types" }, h("legend", {}, "Events"), types), field("timeout_ms", "Timeout (ms)", timeout),
    h("label", { "data-field": "enabled", class: "check" }, enabled, " Enabled"),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", id: "endpoint-save" }, ep ? "Save" : "Create endpoint")), msg, secret);
  return form;
}

async function newEndpointPage() {
  $main.append(h("p", {}, h("a", { href: "#/endpoints" }, "← Webhooks")), h("h1", {}, "New endpoint"),
    endpointForm(null, (e) => { location.hash = "#/endpoints/" + e.id; }));
}

async function endpointPage(id) {
  let ep = await api("/v1/webhook-endpoints/" + id);
  const body = h("tbody");
  const msg = h("p", { role: "status", id: "endpoint-msg" });
  const secretBox = h("div");
  const facts = h("div");
  const status = select("d-status", [["", "all"], ["delivered", "delivered"], ["failed", "failed"], ["pending", "pending"], ["skipped", "skipped"]], "");
  const open = new Set(); // deliveries whose payload is shown
  const payloads = {};
  const drawFacts = () => facts.replaceChildren(h("h1", {}, ep.name || ep.id),
    h("dl", { class: "facts" }, h("dt", {}, "Kind"), h("dd", {}, ep.kind || "webhook"), h("dt", {}, ep.kind === "pagerduty" ? "Routing key" : "URL"),
      h("dd", {}, ep.kind === "pagerduty" ? ep.routing_key : ep.url), h("dt", {}, "Events"), h("dd", {}, ep.event_types.join(", ")),
      h("dt", {}, "Enabled"), h("dd", {}, ep.enabled ? "yes" : "no")));
  const payloadRow = (d) => h("tr", { class: "payload", "data-payload-for": d.id }, h("td", { colspan: 5 },
    payloads[d.id] ? h("pre", { class: "payload-body" }, prettyJSON(payloads[d.id].body), payloads[d.id].truncated ? "\n… (cut at 16 KiB)" : "") : h("span", { class: "muted" }, "Loading…")));
  let ds = [];
  const drawRows = () => {
    const shown = ds.filter((d) => !status.value || d.status === status.value);
    body.replaceChildren(...shown.flatMap((d) => [h("tr", { "data-delivery": d.id, "data-status": d.status },
      h("td", { class: "hide-narrow" }, fmtTime(d.created_at)), h("td", {}, d.event_type, d.test ? " (test)" : ""), h("td", {}, badge(d.status)),
      h("td", { class: "attempts" }, d.attempts.map((a) => h("div", {}, `#${a.number} `, fmtTime(a.at), ` → ${a.status_code === null ? (a.error || "no response") : a.status_code} in ${a.duration_ms} ms`))),
      h("td", { class: "actions" },
        h("button", { type: "button", class: "show-payload", "aria-expanded": String(open.has(d.id)), onclick: async () => {
          if (open.has(d.id)) { open.delete(d.id); drawRows(); return; }
          open.add(d.id);
          drawRows();
          try { payloads[d.id] ||= await api(`/v1/webhook-endpoints/${id}/deliveries/${d.id}/payload`); } catch (e) { msg.textContent = errorText(e); open.delete(d.id); }
          drawRows();
        } }, open.has(d.id) ? "Hide payload" : "Payload"), " ",
        d.status === "pending" ? h("span", { class: "muted" }, "next ", fmtTime(d.next_attempt_at)) : h("button", {
          type: "button", class: "retry", onclick: async () => {
            try { await api(`/v1/webhook-endpoints/${id}/deliveries/${d.id}/retry`, { method: "POST" }); msg.textContent = "Retry queued."; await draw(); } catch (e) { msg.textContent = errorText(e); }
          },
        }, "Retry"))), open.has(d.id) ? payloadRow(d) : null]));
    if (!shown.length) body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, ds.length ? "No delivery with this status." : "No deliveries in the last 30 days.")));
  };
  const draw = async () => {
    ds = (await api(`/v1/webhook-endpoints/${id}/deliveries` + q({ limit: 50 }))).data;
    drawRows();
  };
  status.addEventListener("change", drawRows);
  $main.append(h("p", {}, h("a", { href: "#/endpoints" }, "← Webhooks")), facts,
    h("form", { class: "row", onsubmit: (e) => e.preventDefault() },
      h("button", { type: "button", id: "send-test", onclick: async () => {
        try { const r = await api(`/v1/webhook-endpoints/${id}/test`, { method: "POST" }); msg.textContent = "Test event " + r.event_id + " sent."; await draw(); } catch (e) { msg.textContent = errorText(e); }
      } }, "Send test event"),
      ep.kind ? "" : h("button", { type: "button", id: "rotate", onclick: async () => {
        if (!window.confirm("Rotate the signing secret? The old one keeps signing for an hour.")) return;
        try {
          const r = await api(`/v1/webhook-endpoints/${id}/rotate-secret`, { method: "POST", body: { previous_secret_expires_in: 3600 } });
          secretBox.replaceChildren(h("p", {}, "New signing secret (shown once; copy it now):"), h("p", { class: "secret", id: "new-secret" }, r.signing_secret));
        } catch (e) { msg.textContent = errorText(e); }
      } }, "Rotate secret")),
    msg, secretBox, h("h2", {}, "Delivery log"),
    h("form", { class: "row", onsubmit: (e) => e.preventDefault() }, h("label", { for: "d-status" }, "Status", status)),
    h("div", { class: "scroll" }, h("table", { id: "deliveries" }, h("thead", {}, h("tr", {}, h("th", { class: "hide-narrow" }, "Created"), h("th", {}, "Event"), h("th", {}, "Status"), h("th", {}, "Attempts"), h("th", {}, ""))), body)),
    h("h2", {}, "Edit"),
    endpointForm(ep, async (saved) => { ep = saved; say("Saved."); drawFacts(); }),
    h("p", {}, h("button", { type: "button", class: "danger", id: "endpoint-delete", onclick: async () => {
      if (!window.confirm(`Delete the endpoint "${ep.name}"?`)) return;
      try { await api("/v1/webhook-endpoints/" + id, { method: "DELETE" }); location.hash = "#/endpoints"; } catch (x) { say(errorText(x)); }
    } }, "Delete endpoint")));
  drawFacts();
  await draw();
  every(2000, draw);
}

function prettyJSON(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

// The base host's pages: its paths name the account and project, known
// from the key (GET /v1/account); the project is picked from its list.
function scopeForm(onchange) {
  const saved = sessionStorage.getItem(PROJ);
  const first = ACCOUNT.projects.some((p) => p.id === saved) ? saved : (ACCOUNT.projects[0] || {}).id;
  if (first) sessionStorage.setItem(PROJ, first);
  const proj = select("s-project", ACCOUNT.projects.map((p) => [p.id, projectName(p.id)]), first);
  proj.addEventListener("change", () => { sessionStorage.setItem(PROJ, proj.value); onchange(); });
  return h("form", { class: "row", onsubmit: (e) => e.preventDefault() },
    h("label", { for: "s-project" }, "Project", proj), h("span", { class: "muted", id: "s-account" }, "account " + ACCOUNT.account_id));
}

function scopePath() {
  const p = sessionStorage.getItem(PROJ);
  return ACCOUNT && p && ACCOUNT.projects.some((x) => x.id === p) ? `/${encodeURIComponent(ACCOUNT.account_id)}/${encodeURIComponent(p)}` : null;
}

async function concurrencyPage() {
  const box = h("div", { id: "concurrency" });
  const draw = async () => {
    const sp = scopePath();
    if (!sp) { box.replaceChildren(h("p", { class: "muted" }, "This account has no project.")); return; }
    const end = minute(Date.now()).getTime(), start = end - 7 * 24 * 36e5;
    try {
      const r = await api(`/v1${sp}/conversations/concurrency` + q({ start_time: iso(start), end_time: iso(end), slice_by: "variant" }), { base: true });
      const byVariant = {};
      for (const i of r.intervals) (byVariant[i.variant_name || i.variant_id || "all"] ||= []).push({ t: Date.parse(i.time), v: i.max_concurrent_conversations });
      const names = Object.keys(byVariant);
      box.replaceChildren(chart({ from: start, to: end, lines: names.map((n, i) => ({ points: byVariant[n], cls: "v" + (i % 5) })) }),
        h("div", { class: "legend" }, names.map((n, i) => h("span", {}, h("span", { class: "swatch v" + (i % 5) }), " ", n))));
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
    if (!sp) { body.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "This account has no project."))); return; }
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
  $main.append(h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")), h("h1", { class: "conv-id" }, "Conversation ", h("span", { class: "id" }, c.id)),
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
  ACCOUNT = null;
  location.hash = "";
  route();
});
window.addEventListener("hashchange", route);
fetch("/console/config.json")
  .then((res) => (res.ok ? res.json() : Promise.reject(new Error("HTTP " + res.status))))
  .then((c) => { BASE = c.base_url || ""; route(); })
  .catch((e) => { route(); say("Cannot read the console's configuration (" + e.message + "): the base host's pages may fail."); });
