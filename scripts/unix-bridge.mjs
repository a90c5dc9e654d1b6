#!/usr/bin/env node
// A byte bridge between a TCP port and a unix socket, for the production-shaped stack's Web UI
// (scripts/stack-production.sh ui_start): the UI server runs in a network namespace of its own, so
// no TCP port of the host reaches it; it is reached through a unix socket in a 0700 folder (only
// the stack's user can connect), and it reaches the Temporal frontend through another one.
// Usage: node scripts/unix-bridge.mjs LISTEN CONNECT [--with-parent], each `unix:/path` or
// `tcp:host:port`. --with-parent: exit when the parent does (the UI server it was started beside).
import net from 'node:net';
import { chmodSync, rmSync } from 'node:fs';

function endpoint(spec) {
  const m = /^(unix):(.+)$|^(tcp):([^:]+):(\d+)$/.exec(spec ?? '');
  if (!m) {
    console.error(`unix-bridge: not an endpoint: ${spec} (unix:/path or tcp:host:port)`);
    process.exit(2);
  }
  return m[1] ? { path: m[2] } : { host: m[4], port: Number(m[5]) };
}

const [listenSpec, connectSpec, flag] = process.argv.slice(2);
const listen = endpoint(listenSpec);
const connect = endpoint(connectSpec);

const server = net.createServer((client) => {
  const upstream = net.connect(connect);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
});
server.on('error', (err) => {
  console.error(`unix-bridge ${listenSpec}: ${err.message}`);
  process.exit(1);
});
if (listen.path) rmSync(listen.path, { force: true });
server.listen(listen, () => {
  if (listen.path) chmodSync(listen.path, 0o600);
  console.error(`unix-bridge: ${listenSpec} -> ${connectSpec}`);
});

if (flag === '--with-parent') {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000).unref();
}
