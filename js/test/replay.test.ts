// The vitest example: a TypeScript SDK 1.x client against cassettes the Python SDK recorded, on
// `mcptape replay` (stdio) and `mcptape serve` (Streamable HTTP). Run: npm test (in js/).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { StrictReplayError, recordMode, replayTransport, serve } from "../index.js";

const cassette = (era: string) => fileURLToPath(new URL(`../../cassettes/python-sdk/${era}/stdio.jsonl`, import.meta.url));
// What the recording client declared: a --strict replay plays only recordings that fit.
const capabilities = { elicitation: { form: {}, url: {} } };

function client(): Client {
  const c = new Client({ name: "ts-example", version: "1.0.0" }, { capabilities });
  c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
  return c;
}

describe.each(["2025-11-25", "2026-07-28"])("a TS client on the Python SDK's %s cassette", (era) => {
  it("gets the recorded results, errors and elicitation answer", async () => {
    const c = client();
    await c.connect(replayTransport(cassette(era)));
    const tools = await c.listTools();
    expect(tools.tools.map((t) => t.name)).toContain("add");
    const steps: number[] = [];
    const added = await c.callTool({ name: "add", arguments: { a: 1, b: 2 } }, undefined, { onprogress: (p) => steps.push(p.progress) });
    expect(added.content).toEqual([{ type: "text", text: "3" }]);
    expect(steps).toEqual([1, 2]);
    const divided = await c.callTool({ name: "divide", arguments: { a: 1, b: 0 } });
    expect(divided.isError).toBe(true);
    const greeted = await c.callTool({ name: "greet", arguments: {} });
    expect(greeted.content).toEqual([{ type: "text", text: "Hello, Ada!" }]);
    await expect(c.callTool({ name: "weather", arguments: { city: "Paris" } })).rejects.toThrow(/never recorded|no recorded answer/);
    await c.close();
  });

  it("fails under strict when recorded exchanges go unplayed", async () => {
    const c = client();
    const transport = replayTransport(cassette(era), { strict: true });
    await c.connect(transport);
    if (era === "2026-07-28") await c.setLoggingLevel("info"); // as the recording client declared, per request
    await c.listTools();
    const closing = transport.close();
    await expect(closing).rejects.toBeInstanceOf(StrictReplayError);
    await expect(closing).rejects.toThrow(/never played/);
  });
});

it("serves a cassette over Streamable HTTP", async () => {
  const served = await serve(cassette("2026-07-28"));
  try {
    const c = client();
    await c.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("greet");
    await c.close();
  } finally {
    await served.close();
  }
});

it("reads the record mode from MCPTAPE_RECORD_MODE", () => {
  expect(recordMode({})).toBe("none");
  expect(recordMode({ MCPTAPE_RECORD_MODE: "once" })).toBe("once");
  expect(() => recordMode({ MCPTAPE_RECORD_MODE: "sometimes" })).toThrow(/none, once, new_episodes, all/);
});
