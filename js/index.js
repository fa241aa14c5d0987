// mcptape for TypeScript tests: a transport on `mcptape replay` (or `mcptape record`), a URL on
// `mcptape serve`, the record mode from MCPTAPE_RECORD_MODE, and a --strict failure as a test failure.
// The replay itself is mcptape's (Python); this package only starts it and speaks newline-delimited
// JSON-RPC to it, as the SDK's own stdio transport does. With `journal`, mcptape also writes
// what it received and answered (`--journal FILE`), read as a `Journal`. Types: index.d.ts.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { Journal, JournalSource } from "./journal.js";

export const RECORD_MODES = ["none", "once", "new_episodes", "all"];

/** The record mode: MCPTAPE_RECORD_MODE, else "none" (replay only), as the pytest plugin's option. */
export function recordMode(env = process.env) {
  const mode = (env.MCPTAPE_RECORD_MODE ?? "none").trim() || "none";
  if (!RECORD_MODES.includes(mode)) {
    throw new Error(`MCPTAPE_RECORD_MODE=${mode} is not a record mode: use one of ${RECORD_MODES.join(", ")}`);
  }
  return mode;
}

function onPath(name, env) {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The `mcptape` command: MCPTAPE_COMMAND (split on spaces), else a `.venv/bin/mcptape` in this
 * directory or a parent, else `mcptape` on PATH. Throws, saying how to fix it, when there is none.
 */
export function findMcptape(env = process.env, from = process.cwd()) {
  if (env.MCPTAPE_COMMAND) {
    const [command, ...args] = env.MCPTAPE_COMMAND.split(" ").filter(Boolean);
    return { command, args };
  }
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const venv = join(dir, ".venv", "bin", "mcptape");
    if (existsSync(venv)) return { command: venv, args: [] };
    if (dirname(dir) === dir) break;
  }
  const found = onPath("mcptape", env);
  if (found) return { command: found, args: [] };
  throw new Error("mcptape: no `mcptape` command found: install it from a checkout of mcptape (pipx install ./path/to/mcptape, or pip install it into .venv), or set MCPTAPE_COMMAND (e.g. 'python -m mcptape')");
}

/** The mcptape arguments for a cassette under a record mode (`server`: the real server's command). */
export function mcptapeArgs(cassette, options = {}) {
  const mode = options.recordMode ?? recordMode();
  const records = mode === "all" || (mode !== "none" && !existsSync(cassette));
  if (records) {
    if (!options.server?.length) {
      throw new Error(`mcptape: record mode ${mode} needs the real server's command (server: [...]) to record ${cassette}`);
    }
    return ["record", "-q", "-o", cassette, "--", ...options.server];
  }
  if (!existsSync(cassette)) {
    throw new Error(`mcptape: cassette ${cassette} does not exist; record it with MCPTAPE_RECORD_MODE=once`);
  }
  const args = ["replay", cassette];
  if (typeof options.journal === "string") args.push("--journal", options.journal);
  if (options.strict) args.push("--strict");
  if (options.allowRepeats) args.push("--allow-repeats");
  for (const pointer of options.ignore ?? []) args.push("--ignore", pointer);
  if (options.quiet ?? true) args.push("-q");
  return args;
}

/** Raised by `close()` when `mcptape replay --strict` reports recorded exchanges the test never made. */
export class StrictReplayError extends Error {
  constructor(code, stderr) {
    super(`mcptape replay --strict failed (exit ${code}):\n${stderr.trim()}`);
    this.name = "StrictReplayError";
    this.code = code;
    this.stderr = stderr;
  }
}

/**
 * Where a journal asked for with `journal` goes: that file, or (`true`) one in a fresh temporary
 * folder, removed once the process is gone (what it held stays readable, in memory).
 */
class JournalPlace {
  constructor(journal) {
    this.dir = journal === true ? mkdtempSync(join(tmpdir(), "mcptape-journal-")) : undefined;
    this.source = new JournalSource(this.dir ? join(this.dir, "journal.jsonl") : journal);
  }

  /** Keeps what the journal holds and removes the temporary folder. */
  close() {
    this.source.freeze();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

function noJournal(what) {
  return `mcptape: ${what} keeps no journal: pass journal: true (or a file) in its options`;
}

/**
 * A Transport (the SDK's interface: start, send, close, onmessage, onclose, onerror) on a child
 * `mcptape replay` or `mcptape record`, newline-delimited JSON-RPC on its stdin and stdout.
 * `close()` ends its input, waits for it to exit, and rejects with `StrictReplayError` when it
 * exits non-zero (a --strict replay with unplayed exchanges).
 */
export class McptapeTransport {
  constructor(cassette, options = {}) {
    this.cassette = cassette;
    this.options = options;
    this.stderr = "";
    this._buffer = "";
    this._exited = undefined;
    this._journal = options.journal ? new JournalPlace(options.journal) : undefined;
    this._recording = undefined;
  }

  /** What mcptape received and answered (with the `journal` option); none while recording. */
  get journal() {
    return new Journal(this._journal ? [this._journal.source] : [], {
      none: () => {
        if (!this._journal) return noJournal(`the transport on ${this.cassette}`);
        if (this._recording) return `mcptape: ${this.cassette} is being recorded (record mode ${this._recording}): a journal is kept only on replay`;
      },
    });
  }

  async start() {
    const { command, args } = options_command(this.options);
    const mcptape = mcptapeArgs(this.cassette, { ...this.options, journal: this._journal?.source.path });
    if (mcptape[0] === "record") this._recording = this.options.recordMode ?? recordMode();
    const child = spawn(command, [...args, ...mcptape], {
      stdio: ["pipe", "pipe", "pipe"],
      env: this.options.env ?? process.env,
    });
    this.child = child;
    this._exited = new Promise((done) => child.on("close", (code) => done(code ?? 1)));
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      this.stderr += chunk;
    });
    child.stdout.on("data", (chunk) => this._read(chunk));
    child.on("error", (error) => this.onerror?.(error));
    child.on("close", () => this.onclose?.());
    await new Promise((ready, failed) => {
      child.once("spawn", ready);
      child.once("error", failed);
    });
  }

  _read(chunk) {
    this._buffer += chunk;
    let end;
    while ((end = this._buffer.indexOf("\n")) >= 0) {
      const line = this._buffer.slice(0, end).replace(/\r$/, "");
      this._buffer = this._buffer.slice(end + 1);
      if (!line.trim()) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch (error) {
        this.onerror?.(error);
        continue;
      }
      this._deliver(message);
    }
  }

  // One message per macrotask. The SDK 1.x handles a response at once but a notification one
  // microtask later, so a progress notification handed over in the same turn as its response
  // would find its handler already gone ("unknown token"). Between two macrotasks every microtask
  // runs: the notification's handler sees it before the response resolves the call. `mcptape
  // replay` already writes a response after progress only once it has been read; this is for
  // `mcptape record`, which passes on the real server's bytes as the server wrote them.
  _deliver(message) {
    this._queue ??= [];
    this._queue.push(message);
    if (this._queue.length === 1) setImmediate(() => this._drain());
  }

  _drain() {
    const message = this._queue.shift();
    this.onmessage?.(message);
    if (this._queue.length) setImmediate(() => this._drain());
  }

  async send(message) {
    if (!this.child?.stdin.writable) throw new Error("mcptape: the replay is not running");
    await new Promise((done, failed) => this.child.stdin.write(JSON.stringify(message) + "\n", (e) => (e ? failed(e) : done())));
  }

  /** Ends the replay; the exit code (rejects on a non-zero one, with mcptape's report). */
  async close() {
    if (!this.child) {
      this._journal?.close();
      return 0;
    }
    if (this.child.stdin.writable) this.child.stdin.end();
    const code = await this._exited;
    this.child = undefined;
    this._journal?.close();
    if (code !== 0) throw new StrictReplayError(code, this.stderr);
    return code;
  }
}

function options_command(options) {
  return options.command ? { command: options.command[0], args: options.command.slice(1) } : findMcptape(options.env);
}

/** A transport for `new Client(...).connect()` replaying (or recording) `cassette`. */
export function replayTransport(cassette, options = {}) {
  return new McptapeTransport(cassette, options);
}

/**
 * `mcptape serve cassette --port 0`: resolves with the URL it announced and a `close()` that stops it
 * (and rejects with `StrictReplayError` when `strict` and a session left exchanges unplayed).
 */
export async function serve(cassette, options = {}) {
  if (!existsSync(cassette)) throw new Error(`mcptape: cassette ${cassette} does not exist`);
  const { command, args } = options_command(options);
  const place = options.journal ? new JournalPlace(options.journal) : undefined;
  const extra = ["--port", "0"];
  if (place) extra.push("--journal", place.source.path);
  if (options.strict) extra.push("--strict");
  if (options.allowRepeats) extra.push("--allow-repeats");
  const child = spawn(command, [...args, "serve", cassette, ...extra], { stdio: ["ignore", "ignore", "pipe"], env: options.env ?? process.env });
  let stderr = "";
  const exited = new Promise((done) => child.on("close", (code) => done(code ?? 1)));
  const url = await new Promise((found, failed) => {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const m = /^mcptape(?: serve)?: serving \S+ at (\S+)/m.exec(stderr);
      if (m) found(m[1]);
    });
    child.once("error", failed);
    exited.then((code) => {
      place?.close();
      failed(new Error(`mcptape serve exited (${code}) before serving:\n${stderr}`));
    });
  });
  return {
    url,
    get stderr() {
      return stderr;
    },
    /** What mcptape received and answered (with the `journal` option). */
    get journal() {
      return new Journal(place ? [place.source] : [], { none: () => (place ? undefined : noJournal(`mcptape serve ${cassette}`)) });
    },
    async close() {
      child.kill("SIGINT");
      const code = await exited;
      place?.close();
      if (code !== 0) throw new StrictReplayError(code, stderr);
      return code;
    },
  };
}

/** True when `mcptape --version` runs (for skipping suites on machines without it). */
export function mcptapeAvailable(env = process.env) {
  try {
    const { command, args } = findMcptape(env);
    return spawnSync(command, [...args, "--version"], { stdio: "ignore" }).status === 0;
  } catch {
    return false;
  }
}

export { Journal, JournalAssertionError, JournalSource } from "./journal.js";
export { Mock, answers, mock, rpcError, toolError } from "./mock.js";
