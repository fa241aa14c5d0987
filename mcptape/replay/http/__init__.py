"""The HTTP replay shell (`mcptape serve`): a cassette served as an MCP server over HTTP.

One job per module, imports pointing down this list:

- `run`: binds the socket and runs the app under uvicorn (the only module importing uvicorn);
- `app`: the ASGI application, `HttpReplayApp`: checks a request, finds its session, feeds
  the engine and the session's fault plan, hands the steps to the router;
- `legacy`: the 2024-11-05 HTTP+SSE endpoints, for cassettes recorded on that transport;
- `delivery`: `Router`, the one delivery path: a request's steps as a JSON answer, a status,
  a reset or an event stream, and every other step on its stream;
- `sessions`: `ClientSession` (one client's engine, fault counters and streams),
  `SessionTable`, and the pass 2026-07-28 stateless requests share;
- `reset`: the `reset` fault (the one place that knows uvicorn's request cycle);
- `plan` (what the recording says about HTTP: paths, JSON or SSE, statuses), `checks`
  (what a real server rejects first), `asgi` (ASGI plumbing, event-stream queues): pure
  or plain helpers.

Nothing is imported here, so `import mcptape.replay.http.app` pulls in neither uvicorn nor
a web framework.
"""
