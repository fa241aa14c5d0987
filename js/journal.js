// The journal of a served mock or cassette: the requests mcptape received and what it answered,
// read from the JSON lines `mcptape replay --journal FILE` (or `mcptape serve --journal FILE`)
// writes (docs/cli.md). It comes from mcptape's engine, not from the client: a call is there as
// mcptape saw it, with the answer it sent. Mirrors Python's `mcptape.mocks.journal.Journal`.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspect, isDeepStrictEqual } from "node:util";

const OURS = ["journal.js", "mock.js"].map((name) => join(dirname(fileURLToPath(import.meta.url)), name));

/**
 * One journal file, read whenever asked (a line is in it before its answer reaches the client),
 * or kept in memory once the process that wrote it is gone (`freeze`).
 */
export class JournalSource {
  constructor(path) {
    this.path = path;
    this._text = undefined;
  }

  text() {
    if (this._text !== undefined) return this._text;
    return existsSync(this.path) ? readFileSync(this.path, "utf8") : "";
  }

  /** Keeps what the file holds now, so that it can be removed. */
  freeze() {
    this._text = this.text();
  }

  /** `{ calls, first, last }`: the calls in the order received; the first and last `unused` lists (undefined: none). */
  read() {
    const calls = [];
    let first;
    let last;
    for (const line of this.text().split("\n")) {
      if (!line.trim()) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // a line still being written
      }
      if (Array.isArray(entry.unused)) {
        first ??= entry.unused;
        last = entry.unused;
      } else if (typeof entry.method === "string") {
        calls.push(entry);
      }
    }
    calls.sort((a, b) => a.n - b.n);
    return { calls: calls.map(toCall), first, last };
  }
}

function toCall(entry) {
  const params = entry.params !== null && typeof entry.params === "object" ? entry.params : {};
  const key = entry.method.startsWith("resources/") ? "uri" : "name";
  const args = params.arguments !== null && typeof params.arguments === "object" && !Array.isArray(params.arguments) ? params.arguments : {};
  const answer = entry.answer ?? null;
  return {
    method: entry.method,
    params,
    id: entry.id,
    time: entry.t,
    answer,
    name: typeof params[key] === "string" ? params[key] : undefined,
    arguments: args,
    result: answer?.result,
    error: answer?.error,
    retry: "requestState" in params,
  };
}

function show(value) {
  return inspect(value, { depth: 6, breakLength: Infinity, compact: true });
}

/**
 * The calls of one or more journal files (a mock's transports and servers, in the order they
 * were made), to assert on: `calls`, `callCount`, `assertCalledWith`, `assertAllCalled`.
 */
export class Journal {
  /**
   * `sources`: the JournalSources, or a function giving them; `options.rename`: an unused
   * declaration's text as shown; `options.none`: why there is no journal to read (else undefined).
   */
  constructor(sources, options = {}) {
    this._sources = typeof sources === "function" ? sources : () => sources;
    this._rename = options.rename ?? ((text) => text);
    this._none = options.none;
  }

  _read() {
    const none = this._none?.();
    if (none) throw new Error(none);
    return this._sources().map((s) => s.read());
  }

  /** Every request received (handshake and lists included), in order. */
  get calls() {
    return this._read().flatMap((r) => r.calls);
  }

  /** The calls of `method` (and of tool, prompt or URI `name`), a 2026-07-28 retry left out (its call is counted once). */
  of(method, name) {
    return this.calls.filter((c) => c.method === method && (name === undefined || c.name === name) && !c.retry);
  }

  /** The calls of tool `tool`. */
  toolCalls(tool) {
    return this.of("tools/call", tool);
  }

  /** How many times tool `tool` was called. */
  callCount(tool) {
    return this.toolCalls(tool).length;
  }

  /** The last call of tool `tool` had these arguments (compared whole); throws a JournalAssertionError otherwise. */
  assertCalledWith(tool, args = {}) {
    const calls = this.toolCalls(tool);
    if (!calls.length) fail(`tool ${tool} was never called${this._calledTools()}`, undefined, args);
    const last = calls[calls.length - 1].arguments;
    if (!isDeepStrictEqual(last, args)) {
      const all = calls.length > 1 ? ` (its ${calls.length} calls, in order: ${calls.map((c) => show(c.arguments)).join(", ")})` : "";
      fail(`tool ${tool} was last called with ${show(last)}, not ${show(args)}${all}`, last, args);
    }
  }

  /** Some call of tool `tool` had these arguments; throws a JournalAssertionError otherwise. */
  assertAnyCall(tool, args = {}) {
    const calls = this.toolCalls(tool);
    if (!calls.some((c) => isDeepStrictEqual(c.arguments, args))) {
      const seen = calls.map((c) => show(c.arguments)).join(", ") || "none";
      fail(`tool ${tool} was never called with ${show(args)}; its calls: ${seen}`, calls.map((c) => c.arguments), args);
    }
  }

  /**
   * The declarations no request used, each with where it was declared; undefined when mcptape
   * reported no declarations (a cassette, or a mock not served yet).
   */
  unused() {
    const reads = this._read().filter((r) => r.last !== undefined);
    if (!reads.length) return undefined;
    const used = new Set(reads.flatMap((r) => r.first.filter((d) => !r.last.includes(d))));
    const left = [...new Set(reads.flatMap((r) => r.last))].filter((d) => !used.has(d));
    return left.map(this._rename);
  }

  /** Every declaration was used by some request; throws a JournalAssertionError naming those that were not. */
  assertAllCalled() {
    const left = this.unused();
    if (left === undefined) throw new Error("mcptape: this journal has no declarations to check: assertAllCalled is for a mock once a client reached it; for a cassette, strict: true fails on recorded requests never made");
    if (left.length) fail(`declared but never used: ${left.join("; ")}`);
  }

  _calledTools() {
    const names = [...new Set(this.of("tools/call").map((c) => c.name))];
    return names.length ? ` (tools called: ${names.join(", ")})` : " (no tool was called)";
  }
}

/**
 * A failed journal assertion: a one-line message, `actual` and `expected` for the test runner's
 * diff, and a stack that starts at the test's line (this package's frames left out).
 */
export class JournalAssertionError extends Error {
  constructor(message, actual, expected) {
    super(`mcptape: ${message}`);
    this.name = "AssertionError";
    this.actual = actual;
    this.expected = expected;
    this.stack = (this.stack ?? "")
      .split("\n")
      .filter((line) => !OURS.some((file) => line.includes(`${file}:`)))
      .join("\n");
  }
}

function fail(message, actual, expected) {
  throw new JournalAssertionError(message, actual, expected);
}
