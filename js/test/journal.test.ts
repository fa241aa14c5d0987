// The journal: what the served mock (or cassette) received and answered, as mcptape wrote it
// (`--journal FILE`), asserted on from a test with the TS SDK 1.x client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { mock, replayTransport, toolError } from "../index.js";

const golden = fileURLToPath(new URL("../../cassettes/python-sdk/2025-11-25/stdio.jsonl", import.meta.url));

function client(): Client {
  return new Client({ name: "ts-journal", version: "1.0.0" }, { capabilities: {} });
}

it("counts a tool's calls and checks their arguments", async () => {
  const m = mock("calc")
    .tool("add", 3, { args: { a: 1, b: 2 } })
    .tool("add", toolError("only 1 + 2 is declared"))
    .tool("roll", 4); // never called
  const c = client();
  await c.connect(m.transport());
  await c.callTool({ name: "add", arguments: { a: 1, b: 2 } });
  await c.callTool({ name: "add", arguments: { a: 5, b: 2 } });

  expect(m.callCount("add")).toBe(2);
  expect(m.callCount("roll")).toBe(0);
  m.assertCalledWith("add", { b: 2, a: 5 }); // the last call; members in any order
  m.assertAnyCall("add", { a: 1, b: 2 });
  expect(() => m.assertCalledWith("add", { a: 1, b: 2 })).toThrow(
    "mcptape: tool add was last called with { a: 5, b: 2 }, not { a: 1, b: 2 } (its 2 calls, in order: { a: 1, b: 2 }, { a: 5, b: 2 })",
  );
  expect(() => m.assertCalledWith("roll", {})).toThrow("mcptape: tool roll was never called (tools called: add)");
  expect(() => m.assertAnyCall("add", { a: 9 })).toThrow("mcptape: tool add was never called with { a: 9 }; its calls: { a: 1, b: 2 }, { a: 5, b: 2 }");

  const [first, second] = m.journal.toolCalls("add");
  expect(first).toMatchObject({ method: "tools/call", name: "add", params: { name: "add", arguments: { a: 1, b: 2 } } });
  expect(first.result).toEqual({ content: [{ type: "text", text: "3" }], isError: false });
  expect(second.result).toMatchObject({ isError: true, content: [{ type: "text", text: "only 1 + 2 is declared" }] });
  expect(second.time).toBeGreaterThanOrEqual(first.time);
  expect(m.calls.map((call) => call.method)).toEqual(["initialize", "tools/call", "tools/call"]);

  expect(() => m.assertAllCalled()).toThrow(/^mcptape: declared but never used: tool roll \(test\/journal\.test\.ts:19\)$/);
  await c.close();
  m.cleanup();
  expect(m.callCount("add")).toBe(2); // kept once the files are gone
});

it("passes assertAllCalled once every declaration answered a call", async () => {
  const m = mock("calc").tool("add", 3, { args: { a: 1 } }).tool("add", 0);
  expect(m.unused()).toBeUndefined(); // not served yet: nothing to say
  const c = client();
  await c.connect(m.transport());
  expect(m.unused()).toEqual(['tool add {\'a\': 1} (test/journal.test.ts:49)', "tool add (test/journal.test.ts:49)"]);
  await c.callTool({ name: "add", arguments: { a: 1 } });
  await c.callTool({ name: "add", arguments: { a: 2 } });
  m.assertAllCalled();
  await c.close();
  m.cleanup();
});

it("keeps the journal of a mock served over Streamable HTTP", async () => {
  const m = mock("calc").tool("add", 3).tool("roll", 4);
  const served = await m.serve();
  try {
    const c = client();
    await c.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    await c.callTool({ name: "add", arguments: { a: 1 } });
    await c.callTool({ name: "add", arguments: { a: 2 } });
    expect(m.callCount("add")).toBe(2);
    m.assertCalledWith("add", { a: 2 });
    expect(() => m.assertAllCalled()).toThrow("declared but never used: tool roll");
    expect(served.journal.callCount("add")).toBe(2);
    await c.close();
  } finally {
    await served.close();
    m.cleanup();
  }
});

it("keeps the journal of a cassette's replay when asked", async () => {
  const transport = replayTransport(golden, { journal: true });
  const c = client();
  await c.connect(transport);
  await c.callTool({ name: "add", arguments: { a: 1, b: 2 } });
  await c.close();
  expect(transport.journal.callCount("add")).toBe(1);
  transport.journal.assertCalledWith("add", { a: 1, b: 2 });
  expect(transport.journal.toolCalls("add")[0].result).toMatchObject({ content: [{ type: "text", text: "3" }] });
  expect(() => transport.journal.assertAllCalled()).toThrow(/for a cassette, strict: true/);
  expect(() => replayTransport(golden).journal.calls).toThrow(/keeps no journal: pass journal: true/);
});
