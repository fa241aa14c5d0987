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
  /** Stops `mcptape serve`; rejects with `StrictReplayError` when it exits non-zero. */
  close(): Promise<number>;
}
export declare function serve(cassette: string, options?: Pick<McptapeOptions, "strict" | "allowRepeats" | "command" | "env">): Promise<Served>;

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
  transport(options?: McptapeOptions): McptapeTransport;
  serve(options?: Pick<McptapeOptions, "strict" | "allowRepeats" | "command" | "env">): Promise<Served>;
  cleanup(): void;
}
export declare function mock(name?: string, options?: { cassette?: string }): Mock;
