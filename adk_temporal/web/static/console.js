// Follows a running invocation over server-sent events and shows each event as it arrives;
// partial events (a reply the model is still streaming) grow one entry in place. When the
// run stops (completed, failed, paused) the page reloads to show requests, state, artifacts.
"use strict";

const INTERNAL = ["adk_request_confirmation", "adk_request_input"];

function pretty(value) {
  const text = JSON.stringify(value === undefined ? null : value, null, 2);
  return text.length <= 2000 ? text : text.slice(0, 1999) + "…";
}

function callText(name, args) {
  const shown = Object.entries(args || {}).map(([k, v]) => k + "=" + JSON.stringify(v));
  return name + "(" + shown.join(", ") + ")";
}

// The cards of one event, as chat.py draws them on the server (kinds and titles alike).
function eventCards(ev, raw) {
  const cards = [];
  const parts = (ev.content && ev.content.parts) || [];
  for (const part of parts) {
    if (part.text && !part.thought) {
      cards.push([ev.author === "user" ? "user" : "agent", ev.author || "", part.text]);
    }
    const call = part.function_call;
    if (call && INTERNAL.includes(call.name)) {
      const args = call.args || {};
      if (call.name === "adk_request_input") {
        cards.push(["input", "Input asked: " + (args.message || ""), ""]);
      } else {
        const original = args.originalFunctionCall || {};
        const asked = args.toolConfirmation || {};
        const body = callText(original.name || "?", original.args);
        const payload = asked.payload === undefined || asked.payload === null ? "" : "\n" + pretty(asked.payload);
        cards.push(["approval", "Approval asked: " + (asked.hint || ""), body + payload]);
      }
      if (raw) cards.push(["raw", call.name + "(…)", pretty(args)]);
    } else if (call) {
      cards.push(["call", "Tool call: " + call.name, pretty(call.args || {})]);
    }
    const reply = part.function_response;
    if (reply && INTERNAL.includes(reply.name)) {
      const response = reply.response || {};
      if (reply.name === "adk_request_input") cards.push(["answer", "Answered", pretty(response)]);
      else if (response.expired) cards.push(["answer", "Expired unanswered", ""]);
      else cards.push(["answer", response.confirmed ? "Approved" : "Rejected", ""]);
      if (raw) cards.push(["raw", reply.name + " →", pretty(response)]);
    } else if (reply) {
      cards.push(["result", "Tool result: " + reply.name, pretty(reply.response)]);
    }
  }
  if (ev.error_message || ev.error_code) {
    cards.push(["error", ("Error " + (ev.error_code || "")).trim(), ev.error_message || ""]);
  }
  const saved = (ev.actions && ev.actions.artifact_delta) || {};
  const names = Object.keys(saved);
  if (names.length) {
    cards.push(["saved", "Saved " + names.map((n) => n + " (version " + saved[n] + ")").join(", "), ""]);
  }
  return cards;
}

function entryFor(list, id) {
  let entry = id ? list.querySelector('[data-event-id="' + CSS.escape(id) + '"]') : null;
  if (!entry) {
    entry = document.createElement("li");
    entry.className = "event";
    if (id) entry.dataset.eventId = id;
    list.appendChild(entry);
  }
  return entry;
}

function fill(entry, ev, raw) {
  entry.replaceChildren();
  for (const [kind, title, body] of eventCards(ev, raw)) {
    const card = document.createElement("div");
    card.className = "card " + kind;
    const head = document.createElement("p");
    head.className = "title";
    head.textContent = title;
    card.appendChild(head);
    if (body) {
      const text = document.createElement(["user", "agent", "error"].includes(kind) ? "p" : "pre");
      text.className = "body";
      text.textContent = body;
      card.appendChild(text);
    }
    entry.appendChild(card);
  }
}

function follow(marker) {
  const list = document.getElementById("events");
  const raw = list.classList.contains("show-raw");
  const source = new EventSource(marker.dataset.events);
  const streamed = {};
  source.addEventListener("adk_event", (message) => {
    const ev = JSON.parse(message.data);
    const entry = entryFor(list, ev.id);
    entry.classList.remove("partial");
    delete streamed[ev.id];
    fill(entry, ev, raw);
  });
  source.addEventListener("adk_partial", (message) => {
    const ev = JSON.parse(message.data);
    const parts = (ev.content && ev.content.parts) || [];
    const text = parts.filter((p) => p.text && !p.thought).map((p) => p.text).join("");
    const seen = streamed[ev.id];
    // A retried step streams again from the start: drop the abandoned attempt's text.
    const sofar = seen && seen.attempt === ev.attempt ? seen.text + text : text;
    streamed[ev.id] = { attempt: ev.attempt, text: sofar };
    const entry = entryFor(list, ev.id);
    entry.classList.add("partial");
    fill(entry, { author: ev.author, content: { parts: [{ text: sofar }] } }, raw);
  });
  source.addEventListener("end", (message) => {
    source.close();
    marker.textContent = "The run is " + JSON.parse(message.data).status + ".";
    window.location.reload();
  });
  // A dropped stream reconnects by itself and resumes behind the last event it got
  // (Last-Event-ID); only a refused reconnect closes it.
  const following = marker.textContent;
  source.onopen = () => {
    marker.textContent = following;
    // A (re)opened stream sends the pieces of the step in progress again from its first.
    for (const id of Object.keys(streamed)) delete streamed[id];
  };
  source.onerror = () => {
    marker.textContent =
      source.readyState === EventSource.CLOSED
        ? "Lost the connection to the run; reload the page to follow it again."
        : "Reconnecting to the run…";
  };
}

document.addEventListener("DOMContentLoaded", () => {
  const marker = document.getElementById("follow");
  if (marker) follow(marker);
});
