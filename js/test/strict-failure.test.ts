// What a --strict failure looks like in a test run: this test leaves recorded exchanges unplayed,
// so closing the replay rejects and vitest reports the test as failed, naming what never played.
// It runs only when MCPTAPE_SHOW_STRICT_FAILURE is set (the Python suite does, and expects vitest to fail).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { fileURLToPath } from "node:url";
import { it } from "vitest";
import { replayTransport } from "../index.js";

const cassette = fileURLToPath(new URL("../../cassettes/python-sdk/2025-11-25/stdio.jsonl", import.meta.url));

it.runIf(process.env.MCPTAPE_SHOW_STRICT_FAILURE)("a strict replay fails the test when exchanges go unplayed", async () => {
  const client = new Client({ name: "ts-example", version: "1.0.0" }, { capabilities: { elicitation: { form: {}, url: {} } } });
  await client.connect(replayTransport(cassette, { strict: true }));
  await client.listTools();
  await client.close(); // rejects: StrictReplayError, with mcptape's list of what never played
});
