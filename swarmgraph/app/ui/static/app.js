// swarmgraph ui: an AG-UI client for one swarm. Everything the server sends is shown as text
// (textContent, createTextNode), never parsed as HTML; the page sends messages and decisions,
// never code. No framework, no build step, nothing loaded from elsewhere.
"use strict";

const token = new URLSearchParams(location.search).get("token");
const ui = {
  thread: null, // the conversation shown
  run: null, // the run being followed
  lastId: 0, // the last event id of that run (sent as Last-Event-ID on a reconnect)
  ids: [], // every event id received for the current run (tests read it: no repeats)
  state: {}, // the AG-UI state: context_variables, active_agent, last_step
  messages: [], // {id, role, name, content, toolCalls, marks}
  boot: null, // the server process; a new one after a restart
  graph: { nodes: [], edges: [] },
  prevAgent: null,
};
window.__ui = ui;

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function headers(json) {
  const h = {};
  if (json) h["Content-Type"] = "application/json";
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function getJSON(path) {
  const answer = await fetch(path, { headers: headers(false), cache: "no-store" });
  if (!answer.ok) throw new Error(path + ": " + answer.status);
  return answer.json();
}

function status(text) {
  $("status").textContent = text;
}

// An action the page starts (a click, a refresh after a run) that fails, because the server
// went away or the page is closing, says so in the status line: no promise is left rejected
// with nobody to handle it.
function guarded(action) {
  return (...args) => Promise.resolve().then(() => action(...args)).catch((error) => status("error: " + error.message));
}

// -- JSON Patch (RFC 6902), the operations STATE_DELTA carries ------------------------------
function pointer(path) {
  return path.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function applyPatch(doc, ops) {
  let root = structuredClone(doc);
  for (const op of ops) {
    const keys = pointer(op.path);
    if (keys.length === 0) {
      if (op.op === "add" || op.op === "replace") root = structuredClone(op.value);
      continue;
    }
    const last = keys.pop();
    let parent = root;
    for (const k of keys) parent = parent[Array.isArray(parent) ? Number(k) : k];
    const value = "value" in op ? structuredClone(op.value) : undefined;
    const isArray = Array.isArray(parent);
    const index = last === "-" ? parent.length : Number(last);
    if (op.op === "add") {
      if (isArray) parent.splice(index, 0, value);
      else parent[last] = value;
    } else if (op.op === "replace") {
      parent[isArray ? index : last] = value;
    } else if (op.op === "remove") {
      if (isArray) parent.splice(index, 1);
      else delete parent[last];
    } else if (op.op === "move" || op.op === "copy") {
      const from = pointer(op.from);
      let src = root;
      const lastFrom = from.pop();
      for (const k of from) src = src[k];
      const moved = structuredClone(src[lastFrom]);
      if (op.op === "move") {
        if (Array.isArray(src)) src.splice(Number(lastFrom), 1);
        else delete src[lastFrom];
      }
      if (isArray) parent.splice(index, 0, moved);
      else parent[last] = moved;
    }
  }
  return root;
}

// -- messages ----------------------------------------------------------------------------
function fromAgui(m) {
  const marks = (m.metadata && m.metadata.swarmgraph) || {};
  return {
    id: m.id,
    role: m.role,
    name: m.name || (m.role === "tool" ? marks.tool : null),
    content: typeof m.content === "string" ? m.content : m.content ? JSON.stringify(m.content) : "",
    toolCalls: (m.toolCalls || []).map((c) => ({ id: c.id, name: c.function.name, args: c.function.arguments })),
    toolCallId: m.toolCallId || null,
    marks,
  };
}

function messageItem(m) {
  const item = el("li", m.role);
  item.dataset.id = m.id;
  item.dataset.role = m.role;
  const who = m.role === "assistant" ? m.name || "assistant" : m.role === "tool" ? "tool " + (m.name || "") : m.role;
  item.append(el("span", "who", who));
  const marks = m.marks || {};
  if ("stored" in marks) item.append(el("span", "mark" + (marks.stored ? "" : " out"), marks.stored ? "stored" : "not stored"));
  if ("in_prompt" in marks && (!marks.this_turn || m.role === "user")) {
    item.append(el("span", "mark " + (marks.in_prompt ? "in" : "out"), marks.in_prompt ? "in prompt" : "not in prompt"));
    if (!marks.in_prompt && !marks.this_turn) item.classList.add("dropped");
  }
  if (marks.this_turn) item.append(el("span", "mark", "this turn"));
  item.append(document.createElement("br"));
  const body = el("span", "content", m.content);
  item.append(body);
  for (const call of m.toolCalls) {
    const line = el("span", "calls", "→ " + call.name + "(" + call.args + ")");
    line.dataset.call = call.id;
    item.append(line);
  }
  return item;
}

function renderMessages() {
  const list = $("messages");
  const started = performance.now();
  const frag = document.createDocumentFragment();
  for (const m of ui.messages) frag.append(messageItem(m));
  list.replaceChildren(frag);
  list.scrollTop = list.scrollHeight;
  ui.lastRenderMs = performance.now() - started;
}

function findMessage(id) {
  return ui.messages.find((m) => m.id === id);
}

function itemOf(id) {
  for (const li of $("messages").children) if (li.dataset.id === id) return li;
  return null;
}

function addMessage(m) {
  ui.messages.push(m);
  const list = $("messages");
  list.append(messageItem(m));
  list.scrollTop = list.scrollHeight;
}

// -- context_variables as a tree ---------------------------------------------------------------
// changed: {key: tool} the turn changed so far; last: those the last step changed (bolder)
function tree(value, changed, last) {
  const list = el("ul");
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  for (const [key, v] of entries) {
    const item = el("li");
    item.dataset.key = key;
    item.append(el("span", "key", key + ": "));
    if (v !== null && typeof v === "object") item.append(tree(v, null, null));
    else item.append(el("span", "value", JSON.stringify(v)));
    if (changed && key in changed) {
      item.classList.add("changed");
      if (last && key in last) item.classList.add("last-step");
      item.append(el("span", "by", changed[key] ? "← " + changed[key] : "← changed"));
    }
    list.append(item);
  }
  return list;
}

function renderState() {
  const context = ui.state.context_variables || {};
  const step = ui.state.last_step;
  const box = $("context");
  if (Object.keys(context).length === 0) box.replaceChildren(el("p", "dim", "{} (empty)"));
  else box.replaceChildren(tree(context, ui.state.changed_this_turn || null, step ? step.changed : {}));
  const agent = ui.state.active_agent || "-";
  $("active").textContent = "active agent: " + agent + (step ? " · last step: " + step.agent + (step.tools.length ? " ran " + step.tools.join(", ") : "") : "");
  if (ui.prevAgent && ui.prevAgent !== agent) markHandoff(ui.prevAgent, agent);
  ui.prevAgent = agent;
  renderActive(agent);
}

// -- the graph -------------------------------------------------------------------------------
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

function renderGraph() {
  const nodes = ui.graph.nodes;
  const box = svg("svg", { viewBox: "0 0 300 240", role: "img" });
  const at = {};
  nodes.forEach((n, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, nodes.length) - Math.PI / 2;
    at[n.id] = [150 + 100 * Math.cos(angle), 120 + 85 * Math.sin(angle)];
  });
  for (const e of ui.graph.edges) {
    const [x1, y1] = at[e.from];
    const [x2, y2] = at[e.to];
    const line = svg("line", { x1, y1, x2, y2 });
    line.dataset.from = agentOf(e.from);
    line.dataset.to = agentOf(e.to);
    box.append(line);
  }
  for (const n of nodes) {
    const g = svg("g", { class: "node" });
    g.dataset.agent = n.agent;
    const [x, y] = at[n.id];
    g.append(svg("circle", { cx: x, cy: y, r: 30 }));
    const label = svg("text", { x, y });
    label.textContent = n.agent;
    g.append(label);
    box.append(g);
  }
  $("graph").replaceChildren(box);
  renderActive(ui.state.active_agent);
}

function agentOf(nodeId) {
  const found = ui.graph.nodes.find((n) => n.id === nodeId);
  return found ? found.agent : nodeId;
}

function renderActive(agent) {
  for (const g of $("graph").querySelectorAll("g.node")) g.classList.toggle("active", g.dataset.agent === agent);
  $("graph").dataset.active = agent || "";
}

function markHandoff(from, to) {
  for (const line of $("graph").querySelectorAll("line")) {
    line.classList.toggle("handoff", line.dataset.from === from && line.dataset.to === to);
  }
  $("graph").dataset.handoff = from + " → " + to;
}

// -- approvals and long-term ----------------------------------------------------------------
function renderApprovals(interrupts) {
  const list = $("approvals");
  if (!interrupts || interrupts.length === 0) {
    list.replaceChildren(el("li", "dim", "nothing waits"));
    return;
  }
  list.replaceChildren();
  for (const waiting of interrupts) {
    const item = el("li");
    item.dataset.id = waiting.id;
    item.append(el("span", null, waiting.message || waiting.reason));
    const yes = el("button", null, "approve");
    yes.type = "button";
    yes.dataset.testid = "approve";
    yes.addEventListener("click", () => guarded(decide)(waiting.id, true));
    const no = el("button", null, "deny");
    no.type = "button";
    no.dataset.testid = "deny";
    no.addEventListener("click", () => guarded(decide)(waiting.id, false));
    item.append(yes, no);
    list.append(item);
  }
}

function renderRecall(value) {
  const list = $("long-term");
  list.replaceChildren();
  if (!value.lines || value.lines.length === 0) {
    list.append(el("li", "dim", "nothing recalled"));
    return;
  }
  list.append(el("li", "dim", "into " + (value.agent || "the agent") + "'s prompt:"));
  for (const line of value.lines) list.append(el("li", null, line));
}

// -- AG-UI events ----------------------------------------------------------------------------
function handle(event) {
  switch (event.type) {
    case "RUN_STARTED":
      status("running " + event.runId + (ui.rejoined ? " (rejoined)" : ""));
      $("stop").disabled = false;
      break;
    case "STATE_SNAPSHOT":
      ui.state = event.snapshot || {};
      renderState();
      break;
    case "STATE_DELTA":
      ui.state = applyPatch(ui.state, event.delta);
      renderState();
      break;
    case "MESSAGES_SNAPSHOT":
      ui.messages = event.messages.map(fromAgui);
      renderMessages();
      break;
    case "STEP_STARTED":
      renderActive(event.stepName);
      break;
    case "TEXT_MESSAGE_START":
      addMessage({ id: event.messageId, role: "assistant", name: event.name, content: "", toolCalls: [], marks: {} });
      break;
    case "TEXT_MESSAGE_CONTENT": {
      const m = findMessage(event.messageId);
      if (m) {
        m.content += event.delta;
        const item = itemOf(event.messageId);
        if (item) item.querySelector(".content").textContent = m.content;
      }
      break;
    }
    case "TOOL_CALL_START": {
      const call = { id: event.toolCallId, name: event.toolCallName, args: "" };
      let parent = event.parentMessageId && findMessage(event.parentMessageId);
      if (!parent) {
        parent = { id: event.parentMessageId || "call-" + event.toolCallId, role: "assistant", name: ui.state.active_agent, content: "", toolCalls: [], marks: {} };
        addMessage(parent);
      }
      parent.toolCalls.push(call);
      const item = itemOf(parent.id);
      if (item) {
        const line = el("span", "calls", "→ " + call.name + "(");
        line.dataset.call = call.id;
        item.append(line);
      }
      break;
    }
    case "TOOL_CALL_ARGS": {
      for (const m of ui.messages) {
        const call = m.toolCalls.find((c) => c.id === event.toolCallId);
        if (!call) continue;
        call.args += event.delta;
        const line = document.querySelector('#messages [data-call="' + CSS.escape(call.id) + '"]');
        if (line) line.textContent = "→ " + call.name + "(" + call.args + ")";
      }
      break;
    }
    case "TOOL_CALL_RESULT":
      addMessage({ id: event.messageId, role: "tool", name: toolName(event.toolCallId), content: event.content, toolCalls: [], marks: {} });
      break;
    case "CUSTOM":
      if (event.name === "swarmgraph.recall") renderRecall(event.value);
      if (event.name === "swarmgraph.memory_window") {
        const w = event.value;
        $("window").textContent = "memory: " + w.policy + " · " + w.in_prompt.length + " of " + w.stored + " stored messages sent" + (w.added.length ? " · plus " + w.added.length + " it wrote (summary)" : "");
      }
      break;
    case "RUN_FINISHED":
      status("done");
      $("stop").disabled = true;
      renderApprovals(event.outcome && event.outcome.type === "interrupt" ? event.outcome.interrupts : []);
      if (event.outcome && event.outcome.type === "cancelled") status("stopped: nothing of the turn was saved");
      guarded(refreshConversations)();
      break;
    case "RUN_ERROR":
      status("error: " + event.message);
      $("stop").disabled = true;
      break;
  }
}

function toolName(callId) {
  for (const m of ui.messages) for (const c of m.toolCalls) if (c.id === callId) return c.name;
  return "";
}

// -- reading a run's server-sent events, rejoining after a drop ----------------------------------
async function readEvents(response, run) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let id = 0;
      const data = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("id:")) id = Number(line.slice(3).trim());
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (!data.length || ui.run !== run) continue;
      if (id) {
        if (id <= ui.lastId) continue; // never twice
        ui.lastId = id;
        ui.ids.push(id);
      }
      const event = JSON.parse(data.join("\n"));
      handle(event);
      if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") ui.finished = true;
    }
  }
}

async function follow(run, response) {
  ui.run = run;
  ui.finished = false;
  for (let attempt = 0; attempt < 50 && ui.run === run; attempt++) {
    try {
      if (!response) {
        const where = "?thread=" + encodeURIComponent(ui.thread || "");
        response = await fetch("/agui/runs/" + encodeURIComponent(run) + where, {
          headers: { ...headers(false), "Last-Event-ID": String(ui.lastId) },
          cache: "no-store",
        });
        if (response.status === 404 || response.status === 410) return loadView(ui.thread);
      }
      await readEvents(response, run);
      if (ui.finished) return;
    } catch (error) {
      status("reconnecting…");
      await new Promise((done) => setTimeout(done, Math.min(2000, 100 * (attempt + 1)))); // backoff
    }
    response = null;
  }
}

async function send(body) {
  ui.rejoined = false;
  ui.ids = [];
  ui.lastId = 0;
  const response = await fetch("/agui", { method: "POST", headers: headers(true), body: JSON.stringify(body) });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({ error: response.statusText }));
    status("refused: " + problem.error);
    return;
  }
  await follow(body.runId, response);
}

function newId(prefix) {
  return prefix + "-" + crypto.randomUUID();
}

function runInput(messages, resume) {
  const body = { threadId: ui.thread, runId: newId("run"), state: {}, messages, tools: [], context: [] };
  if (resume) body.resume = resume;
  return body;
}

async function decide(id, approved) {
  renderApprovals([]);
  const entry = approved ? { interruptId: id, status: "resolved", payload: { approved: true } } : { interruptId: id, status: "cancelled" };
  await send(runInput([], [entry]));
}

// -- the page's controls -----------------------------------------------------------------------
async function loadView(thread) {
  const view = await getJSON("/api/view?thread=" + encodeURIComponent(thread));
  ui.thread = view.thread_id;
  ui.boot = view.boot;
  ui.state = view.state;
  ui.messages = view.messages.map(fromAgui);
  ui.prevAgent = view.state.active_agent;
  renderMessages();
  renderState();
  renderApprovals(view.interrupts);
  $("send").disabled = false;
  status(view.running ? "rejoining " + view.running : "ready");
  await refreshConversations();
  if (view.running) {
    ui.rejoined = true;
    ui.ids = [];
    ui.lastId = 0;
    await follow(view.running, null); // from its first event: this page has none of them
  }
  return view;
}

async function refreshConversations() {
  const { conversations } = await getJSON("/api/conversations");
  const picker = $("conversations");
  const ids = conversations.map((c) => c.id);
  if (ui.thread && !ids.includes(ui.thread)) ids.unshift(ui.thread);
  picker.replaceChildren(...ids.map((id) => {
    const option = el("option", null, id);
    option.value = id;
    option.selected = id === ui.thread;
    return option;
  }));
}

async function restart() {
  const before = ui.boot;
  const stored = ui.messages.length;
  status("restarting the run process…");
  await fetch("/api/restart", { method: "POST", headers: headers(true), body: "{}" }).catch(() => null);
  for (let i = 0; i < 600; i++) {
    await new Promise((done) => setTimeout(done, 100));
    let view;
    try {
      view = await getJSON("/api/view?thread=" + encodeURIComponent(ui.thread));
    } catch (error) {
      continue; // not up yet
    }
    if (view.boot === before) continue;
    await loadView(ui.thread);
    const context = view.state.context_variables || {};
    const kept = view.state.persist.includes("context");
    $("lesson").hidden = false;
    $("lesson").textContent = "A fresh process on the same store: " + view.messages.length + " of " + stored +
      " messages came back (the model can read them); context_variables " +
      (Object.keys(context).length ? "came back: " + JSON.stringify(context) : "did not come back: {}") +
      " (persist=" + JSON.stringify(view.state.persist) + (kept ? ")" : ", context not kept)") + ". Nothing else survived.";
    status("restarted");
    return;
  }
  status("the server did not come back");
}

function start() {
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const box = $("composer").elements.message;
    const text = box.value.trim();
    if (!text) return;
    box.value = "";
    guarded(send)(runInput([{ id: newId("user"), role: "user", content: text }]));
  });
  $("stop").addEventListener("click", () => {
    if (ui.run) guarded(fetch)("/api/stop", { method: "POST", headers: headers(true), body: JSON.stringify({ run: ui.run }) });
  });
  $("restart").addEventListener("click", guarded(restart));
  $("conversations").addEventListener("change", (event) => guarded(loadView)(event.target.value));
  $("open-conversation").addEventListener("click", () => {
    const id = $("new-conversation").value.trim();
    if (id) guarded(loadView)(id);
  });
  getJSON("/api/graph").then((graph) => {
    ui.graph = graph;
    renderGraph();
    return loadView(graph.thread);
  }).catch((error) => status("error: " + error.message));
}

document.addEventListener("DOMContentLoaded", start);
