/**
 * The child process of one point's client (started by client-process.ts runPointInOwnProcess): runs
 * runPoint for the `run` message, forwards its progress, sends its result or error, and exits. It
 * exits at once when its parent goes away (the IPC channel closes).
 */
import { toWire, type FromClient, type ToClient } from './client-process';
import { runPoint } from './point';

const abort = new AbortController();
const points: { current: number; listeners: ((n: number) => void)[] } = { current: 1, listeners: [] };

function send(m: FromClient): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) return resolve();
    process.send!(m, undefined, {}, () => resolve());
  });
}

async function run(m: Extract<ToClient, { type: 'run' }>): Promise<void> {
  points.current = m.concurrentPoints;
  try {
    const result = await runPoint(m.input, {
      signal: abort.signal,
      onProgress: (progress) => void send({ type: 'progress', progress }),
      concurrentPoints: {
        current: () => points.current,
        onChange: (listen) => points.listeners.push(listen),
      },
    });
    await send({ type: 'result', result });
  } catch (err) {
    await send({ type: 'error', error: toWire(err) });
  }
  process.exit(0);
}

process.on('disconnect', () => process.exit(1));
process.on('message', (m: ToClient) => {
  if (m.type === 'abort') abort.abort(new Error(m.reason));
  else if (m.type === 'points') {
    points.current = m.n;
    for (const l of points.listeners) l(m.n);
  } else void run(m);
});
