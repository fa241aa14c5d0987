import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export type RecordMode = "none" | "once" | "new_episodes" | "all";
export declare const RECORD_MODES: readonly RecordMode[];

export interface McptapeOptions {
  /** Record mode (default: MCPTAPE_RECORD_MODE, else "none"). */
  recordMode?: RecordMode;
  /** The real server's command, for record modes that record. */
  server?: string[];
  /** `--strict`: `close()` rejects when recorded exchanges went unplayed, or a client declared otherwise. */
  strict?: boolean;
  allowRepeats?: boolean;
  /** JSON pointers into params left out of matching. */
  ignore?: string[];
  /** `-q` (default true): only errors on stderr. */
  quiet?: boolean;
  /** The mcptape command (default: `findMcptape()`). */
  command?: string[];
  env?: NodeJS.ProcessEnv;
  /**
   * Keep a journal of what mcptape received and answered (`--journal FILE`), read by `.journal`:
   * `true` for a temporary file (removed once mcptape exits, its content kept), or a file to write.
   * Replay only: a run in a record mode that records has none.
   */
  journal?: boolean | string;
}

export declare function recordMode(env?: NodeJS.ProcessEnv): RecordMode;
export declare function findMcptape(env?: NodeJS.ProcessEnv, from?: string): { command: string; args: string[] };
export declare function mcptapeArgs(cassette: string, options?: McptapeOptions): string[];
export declare function mcptapeAvailable(env?: NodeJS.ProcessEnv): boolean;

export declare class StrictReplayError extends Error {
  code: number;
  stderr: string;
}

export declare class McptapeTransport implements Transport {
  constructor(cassette: string, options?: McptapeOptions);
  readonly cassette: string;
  /** What mcptape received and answered (with the `journal` option; reading it throws without one). */
  readonly journal: Journal;
  /** What mcptape wrote on stderr so far (notes, no-match errors, the strict report). */
  stderr: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  start(): Promise<void>;
  send(message: JSONRPCMessage): Promise<void>;
  /** Ends the replay; rejects with `StrictReplayError` when mcptape exits non-zero. */
  close(): Promise<void>;
}

export declare function replayTransport(cassette: string, options?: McptapeOptions): McptapeTransport;

export interface Served {
  url: string;
  readonly stderr: string;
  /** What mcptape received and answered, every session (with the `journal` option; reading it throws without one). */
  readonly journal: Journal;
  /** Stops `mcptape serve`; rejects with `StrictReplayError` when it exits non-zero. */
  close(): Promise<number>;
}
export declare function serve(cassette: string, options?: Pick<McptapeOptions, "strict" | "allowRepeats" | "command" | "env" | "journal">): Promise<Served>;

/** One request mcptape received, as its journal has it (`--journal`, docs/cli.md). */
export interface JournalCall {
  method: string;
  params: Record<string, unknown>;
  /** The request's JSON-RPC id. */
  id: string | number;
  /** Seconds since the replay started, when the request came. */
  time: number;
  /** The JSON-RPC response mcptape sent (null: never answered). */
  answer: { jsonrpc: "2.0"; id: string | number; result?: any; error?: { code: number; message: string; data?: unknown } } | null;
  /** The tool or prompt name (`tools/call`, `prompts/get`), the URI of `resources/read`. */
  name?: string;
  /** `params.arguments` ({} when none). */
  arguments: Record<string, unknown>;
  /** `answer.result`: a tool call's `content`, `isError`, `structuredContent`... */
  result?: any;
  /** `answer.error`: a JSON-RPC error. */
  error?: { code: number; message: string; data?: unknown };
  /** A 2026-07-28 retry (with `requestState`) of a request that asked for input: on the wire, counted once. */
  retry: boolean;
}

/** A failed journal assertion: one line, with `actual` and `expected` for the runner's diff. */
export declare class JournalAssertionError extends Error {
  actual: unknown;
  expected: unknown;
}

/**
 * What mcptape received and answered, read from the journal file(s) it writes; read anew on each
 * access (a call is in it before its answer reaches the client).
 */
export declare class Journal {
  /** Every request received (handshake and lists included), in order. */
  readonly calls: JournalCall[];
  /** The calls of `method` (and of tool, prompt or URI `name`), 2026-07-28 retries left out. */
  of(method: string, name?: string): JournalCall[];
  /** The calls of tool `tool`. */
  toolCalls(tool: string): JournalCall[];
  /** How many times tool `tool` was called. */
  callCount(tool: string): number;
  /** The last call of tool `tool` had these arguments (compared whole, members in any order); throws `JournalAssertionError` otherwise. */
  assertCalledWith(tool: string, args?: Record<string, unknown>): void;
  /** Some call of tool `tool` had these arguments; throws `JournalAssertionError` otherwise. */
  assertAnyCall(tool: string, args?: Record<string, unknown>): void;
  /** A mock's declarations no request used (`tool add {'a': 1} (test/x.test.ts:12)`); undefined for a cassette, or before a client reached the mock. */
  unused(): string[] | undefined;
  /** Every declaration was used (as respx's `assert_all_called`); throws `JournalAssertionError` naming those that were not. */
  assertAllCalled(): void;
}

/** One declared answer in the file form (docs/mocks.md): what `toolError`, `rpcError` and `answers` make. */
export type AnswerEntry = { error: string } | { rpc_error: { code: number; message: string; data?: unknown } } | { sequence: unknown[] } | { text: string } | { result: unknown };
export declare function toolError(text: string): AnswerEntry;
export declare function rpcError(code: number, message: string, data?: unknown): AnswerEntry;
export declare function answers(...each: unknown[]): AnswerEntry;

export interface ToolOptions {
  /** The arguments this answer is for (compared whole); default: any. */
  args?: Record<string, unknown>;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** Seconds before the answer. */
  delay?: number;
  /** Progress steps before the answer: numbers or [progress, total, message]. */
  progress?: (number | [number, number?, string?])[];
  /** Log messages before the answer: [level, data]. */
  logs?: [string, unknown][];
  /** An elicitation/create request's params, sent to the client before the answer. */
  elicit?: Record<string, unknown>;
}

/** A declared MCP server, served by `mcptape replay` or `mcptape serve` from a mock file. */
export declare class Mock {
  constructor(name?: string, options?: { cassette?: string });
  readonly tree: Record<string, unknown>;
  /** A string answers text; `toolError`, `rpcError`, `answers` as named; any other value is the result. */
  tool(name: string, answer: unknown, options?: ToolOptions): this;
  resource(uri: string, text: string, options?: { name?: string; mimeType?: string }): this;
  prompt(name: string, text: string, options?: { arguments?: (string | { name: string; required?: boolean })[] }): this;
  file(): string;
  /** `mcptape replay` of the declarations, keeping a journal (read by `journal`, `calls`, ...). */
  transport(options?: McptapeOptions): McptapeTransport;
  /** `mcptape serve` of the declarations, keeping a journal. */
  serve(options?: Pick<McptapeOptions, "strict" | "allowRepeats" | "command" | "env">): Promise<Served>;
  /** What every transport and server of this mock received and answered, in the order they were made. */
  readonly journal: Journal;
  /** `journal.calls`: every request received, in order. */
  readonly calls: JournalCall[];
  /** How many times tool `tool` was called. */
  callCount(tool: string): number;
  /** The last call of tool `tool` had these arguments; throws `JournalAssertionError` otherwise. */
  assertCalledWith(tool: string, args?: Record<string, unknown>): void;
  /** Some call of tool `tool` had these arguments; throws `JournalAssertionError` otherwise. */
  assertAnyCall(tool: string, args?: Record<string, unknown>): void;
  /** Declarations no request used, each with the line that declared it; undefined before a client reached the mock. */
  unused(): string[] | undefined;
  /** Every declaration was used; throws `JournalAssertionError` naming those that were not, with the line that declared each. */
  assertAllCalled(): void;
  /** Removes the files written; the journal keeps what they held. */
  cleanup(): void;
}
export declare function mock(name?: string, options?: { cassette?: string }): Mock;
