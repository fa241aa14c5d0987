// A declared MCP server for TypeScript tests: the declarations are written as a mock file (the JSON
// form of docs/mocks.md) and served by `mcptape replay` (stdio) or `mcptape serve` (HTTP), as a
// cassette is. Only data crosses into mcptape's process: answers are values, not functions.
// What the served process received and answered comes back as its journal (`--journal FILE`).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { replayTransport, serve } from "./index.js";
import { Journal, JournalSource } from "./journal.js";

const HERE = fileURLToPath(import.meta.url);

/** `file:line` of the code that called into this module (the test's declaration). */
function callerSite() {
  for (const frame of (new Error().stack ?? "").split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^\s()]+):(\d+):\d+\)?$/.exec(frame.trim());
    if (!m) continue;
    const file = m[1].startsWith("file://") ? fileURLToPath(m[1]) : m[1];
    if (file !== HERE) return `${relative(process.cwd(), file) || file}:${m[2]}`;
  }
  return undefined;
}

/** A tool error (a result with `isError`). */
export function toolError(text) {
  return { error: String(text) };
}

/** A JSON-RPC error answer. */
export function rpcError(code, message, data) {
  return { rpc_error: data === undefined ? { code, message } : { code, message, data } };
}

/** Answers given one per call, in order; the call after the last is an error. */
export function answers(...each) {
  return { sequence: each };
}

function isAnswer(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 1 &&
    ["error", "rpc_error", "sequence", "text", "result"].includes(Object.keys(value)[0]);
}

function answerEntry(answer) {
  if (isAnswer(answer)) return answer;
  if (typeof answer === "string") return { text: answer };
  if (typeof answer === "function") throw new Error("mcptape mock: an answer is a value here (it is served by another process), not a function");
  return { result: answer };
}

export class Mock {
  constructor(name = "mcptape-mock", options = {}) {
    this.tree = { mcptape_mock: 1, server: { name }, tools: [], resources: [], prompts: [] };
    if (options.cassette) this.tree.server.cassette = options.cassette;
    this._dirs = [];
    this._sources = [];
    this._sites = new Map();
    /** What the served processes received and answered, in the order they were started. */
    this.journal = new Journal(() => this._sources, { rename: (text) => this._renamed(text) });
  }

  /** Declares tool `name` answering `answer` (for `options.args` only, when given); again: another answer. */
  tool(name, answer, options = {}) {
    let tool = this.tree.tools.find((t) => t.name === name);
    if (!tool) {
      tool = { name, input_schema: options.inputSchema ?? { type: "object" }, answers: [] };
      if (options.description) tool.description = options.description;
      if (options.outputSchema) tool.output_schema = options.outputSchema;
      this.tree.tools.push(tool);
    }
    const entry = { ...answerEntry(answer) };
    if (options.args) entry.args = options.args;
    if (options.delay) entry.delay = options.delay;
    if (options.progress) entry.progress = options.progress.map((p) => (Array.isArray(p) ? p : [p]));
    if (options.logs) entry.logs = options.logs;
    if (options.elicit) entry.elicit = options.elicit;
    const site = callerSite();
    if (site) this._sites.set(`tools[${this.tree.tools.indexOf(tool)}].answers[${tool.answers.length}]`, site);
    tool.answers.push(entry);
    return this;
  }

  /** Declares a resource (`{name}` parts in `uri` make a template, filled in `text`). */
  resource(uri, text, options = {}) {
    this.tree.resources.push({ uri, text, ...(options.name ? { name: options.name } : {}), mime_type: options.mimeType ?? "text/plain" });
    return this;
  }

  /** Declares a prompt whose text (one user message) has `{argument}` holes. */
  prompt(name, text, options = {}) {
    this.tree.prompts.push({ name, text, arguments: (options.arguments ?? []).map((a) => (typeof a === "string" ? { name: a, required: true } : a)) });
    return this;
  }

  /** Writes the declarations to a fresh mock file; its path. */
  file() {
    const dir = mkdtempSync(join(tmpdir(), "mcptape-mock-"));
    this._dirs.push(dir);
    const path = join(dir, "mock.json");
    writeFileSync(path, JSON.stringify(this.tree, null, 2));
    return path;
  }

  /** A transport for `new Client(...).connect()`: `mcptape replay` of the declarations. */
  transport(options = {}) {
    const file = this.file();
    return replayTransport(file, { ...options, journal: this._journalBeside(file) });
  }

  /** `mcptape serve` of the declarations: `{ url, journal, close() }`. */
  serve(options = {}) {
    const file = this.file();
    return serve(file, { ...options, journal: this._journalBeside(file) });
  }

  /** A journal file beside mock file `file`, read into `journal`. */
  _journalBeside(file) {
    const path = join(dirname(file), "journal.jsonl");
    this._sources.push(new JournalSource(path));
    return path;
  }

  /** Every request the served declarations received (handshake and lists included), in order: `journal.calls`. */
  get calls() {
    return this.journal.calls;
  }

  /** How many times tool `tool` was called. */
  callCount(tool) {
    return this.journal.callCount(tool);
  }

  /** The last call of tool `tool` had these arguments; throws a JournalAssertionError otherwise. */
  assertCalledWith(tool, args) {
    this.journal.assertCalledWith(tool, args);
  }

  /** Some call of tool `tool` had these arguments; throws a JournalAssertionError otherwise. */
  assertAnyCall(tool, args) {
    this.journal.assertAnyCall(tool, args);
  }

  /** The declarations no request used, each with where it was declared (undefined before a client reached the mock). */
  unused() {
    return this.journal.unused();
  }

  /** Every declaration was used; throws a JournalAssertionError naming those that were not. */
  assertAllCalled() {
    this.journal.assertAllCalled();
  }

  /** A declaration as mcptape names it, with the test's line in place of the mock file's place. */
  _renamed(text) {
    return text.replace(/ \((.*): (tools\[\d+\]\.answers\[\d+\])\)$/, (whole, _file, at) => {
      const site = this._sites.get(at);
      return site ? ` (${site})` : ` (${at})`;
    });
  }

  /** Removes the files written, keeping what the journals held (a transport or server still running keeps its copy of the mock file open). */
  cleanup() {
    for (const source of this._sources) source.freeze();
    for (const dir of this._dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** A declared MCP server: `mock().tool("add", 3).transport()`. */
export function mock(name, options) {
  return new Mock(name, options);
}
