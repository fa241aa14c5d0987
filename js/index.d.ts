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
