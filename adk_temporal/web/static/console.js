// Follows a running invocation over server-sent events and shows each event as it arrives;
// partial events (a reply the model is still streaming) grow one entry in place. When the
// run stops (completed, failed, paused) the page reloads to show requests, state, artifacts.
"use strict";

function eventLines(ev) {
  const lines = [];
  const parts = (ev.content && ev.content.parts) || [];
  for (const part of parts) {
    if (part.text) lines.push(["text", part.text]);
    if (part.function_call) {
      const call = part.function_call;
      lines.push(["call", call.name + "(" + JSON.stringify(call.args || {}) + ")"]);
    }
    if (part.function_response) {
      const reply = part.function_response;
      lines.push(["response", reply.name + " → " + JSON.stringify(reply.response)]);
    }
  }
  if (ev.error_message) lines.push(["error", ev.error_code + ": " + ev.error_message]);
  const saved = (ev.actions && ev.actions.artifact_delta) || {};
  const names = Object.keys(saved);
  if (names.length) lines.push(["delta", "saved " + names.map((n) => n + " v" + saved[n]).join(", ")]);
  return lines;
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

function fill(entry, ev) {
  entry.replaceChildren();
  const author = document.createElement("strong");
  author.textContent = ev.author || "";
  entry.appendChild(author);
  for (const [kind, text] of eventLines(ev)) {
    const p = document.createElement("p");
    p.className = kind;
    p.textContent = text;
    entry.appendChild(p);
  }
}

function follow(marker) {
  const list = document.getElementById("events");
  const source = new EventSource(marker.dataset.events);
  const streamed = {};
  source.addEventListener("adk_event", (message) => {
    const ev = JSON.parse(message.data);
    const entry = entryFor(list, ev.id);
    entry.classList.remove("partial");
    delete streamed[ev.id];
    fill(entry, ev);
  });
  source.addEventListener("adk_partial", (message) => {
    const ev = JSON.parse(message.data);
    const text = eventLines(ev).filter(([kind]) => kind === "text").map(([, t]) => t).join("");
    const seen = streamed[ev.id];
    // A retried step streams again from the start: drop the abandoned attempt's text.
    const sofar = seen && seen.attempt === ev.attempt ? seen.text + text : text;
    streamed[ev.id] = { attempt: ev.attempt, text: sofar };
    const entry = entryFor(list, ev.id);
    entry.classList.add("partial");
    fill(entry, { author: ev.author, content: { parts: [{ text: sofar }] } });
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
