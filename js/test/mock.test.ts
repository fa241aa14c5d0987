// A declared mock in a few lines, served to the TS SDK 1.x client by `mcptape replay` and `mcptape serve`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, it } from "vitest";
import { answers, mock, toolError } from "../index.js";

function declared() {
  return mock("demo")
    .tool("add", 3, { args: { a: 1, b: 2 }, progress: [[1, 2], [2, 2]] })
    .tool("add", toolError("only 1 + 2 is declared"))
    .tool("roll", answers(4, 6))
    .resource("demo://users/{id}", "user {id}")
    .prompt("review", "Review this: {code}", { arguments: ["code"] });
}

it("serves declared tools, resources and prompts over stdio", async () => {
  const m = declared();
  const c = new Client({ name: "ts-mock", version: "1.0.0" }, { capabilities: {} });
  await c.connect(m.transport());
  expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["add", "roll"]);
  const steps: number[] = [];
  const added = await c.callTool({ name: "add", arguments: { a: 1, b: 2 } }, undefined, { onprogress: (p) => steps.push(p.progress) });
  expect(added.content).toEqual([{ type: "text", text: "3" }]);
  expect(steps).toEqual([1, 2]);
  expect((await c.callTool({ name: "add", arguments: { a: 5, b: 2 } })).isError).toBe(true);
  expect((await c.callTool({ name: "roll", arguments: {} })).content).toEqual([{ type: "text", text: "4" }]);
  const user = await c.readResource({ uri: "demo://users/7" });
  expect(user.contents[0].text).toBe("user 7");
  const prompt = await c.getPrompt({ name: "review", arguments: { code: "x = 1" } });
  expect(prompt.messages[0].content).toEqual({ type: "text", text: "Review this: x = 1" });
  await c.close();
  m.cleanup();
});

it("serves a declared mock over Streamable HTTP", async () => {
  const m = declared();
  const served = await m.serve();
  try {
    const c = new Client({ name: "ts-mock", version: "1.0.0" }, { capabilities: {} });
    await c.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    expect((await c.callTool({ name: "roll", arguments: {} })).content).toEqual([{ type: "text", text: "4" }]);
    await c.close();
  } finally {
    await served.close();
    m.cleanup();
  }
});
